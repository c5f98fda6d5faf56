"""What standard errors add to the time of a dp_glm fit (issue 16 target: at most 30% of a
default fit at 1e6 x 20), for the default (objective perturbation), DP-GD and, with
``--set tukey``, the logistic Tukey mechanism (``method="tukey"``).

Each configuration is a fit with intervals beside the same fit without its inference parts, in
the same run, on synthetic logistic data; the repeats are interleaved (every configuration once
per round, so load drifts hit all of them) and the table reports the **median** wall and CPU
seconds (all threads) per configuration and the ratios, with the load average before each round.
The logistic Tukey's set (``--set tukey``): ``method="tukey"`` (intervals, and the groups' median
bias reduction they switch on), the same with ``inference_share=0`` (neither), and with
``inference_share=0, bias="median"`` (the same point as with intervals, no inference stage), plus
statsmodels ``Logit`` on the same data; the inference stage's own time inside each fit with
intervals (``_with_inference`` of :mod:`dpstats.estimators.tukey.linear`, patched in this
process only) is reported over the rest of the same call (``stage_share``). Writes
``benchmarks/results/glm_inference_speed.csv`` (``--out`` to change).

    nice -n 10 python benchmarks/glm_inference_speed.py --n 1e6 --d 20 --repeats 3
    nice -n 10 python benchmarks/glm_inference_speed.py --set tukey --n 1e5,1e6 --d 5 \\
        --repeats 5 --out benchmarks/results/tukey_glm_inference_speed.csv
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp
import dpstats.estimators.tukey.linear as tukey_linear

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed_common as sc  # noqa: E402

OUT = Path(__file__).parent / "results" / "glm_inference_speed.csv"


def data(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = np.linspace(1.0, -1.0, d) / np.sqrt(d)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(0.5 - X @ beta))
    return df


#: Per set: configurations (name -> dp_glm keywords) and (with, without) pairs to compare.
SETS = {
    "default": ({
        "default (auto, with intervals)": {},
        "objpert, inference_share=0": {"method": "objpert", "inference_share": 0.0},
        "dpgd (with intervals)": {"method": "dpgd"},
        "dpgd, inference_share=0": {"method": "dpgd", "inference_share": 0.0},
    }, (("default (auto, with intervals)", "objpert, inference_share=0"),
        ("dpgd (with intervals)", "dpgd, inference_share=0"))),
    "tukey": ({
        "tukey (with intervals)": {"method": "tukey"},
        "tukey, inference_share=0": {"method": "tukey", "inference_share": 0.0},
        "tukey, inference_share=0, bias=median": {"method": "tukey", "inference_share": 0.0,
                                                  "bias": "median"},
        "statsmodels Logit": None,
    }, (("tukey (with intervals)", "tukey, inference_share=0"),
        ("tukey (with intervals)", "tukey, inference_share=0, bias=median"),
        ("tukey, inference_share=0, bias=median", "tukey, inference_share=0"),
        ("tukey (with intervals)", "statsmodels Logit"))),
}


def _stage_timer(stage: dict):
    """``_with_inference`` of the Tukey fit, timed into ``stage`` (wall, cpu)."""
    real = tukey_linear._with_inference
    return real, sc.wrap_timed(real, stage)


def _call(kw, formula: str, df: pd.DataFrame, r: int):
    if kw is None:
        import statsmodels.api as sm
        X = sm.add_constant(df.drop(columns="y").to_numpy())
        return sm.Logit(df["y"].to_numpy(dtype=float), X).fit(disp=0)
    opts = {k: v for k, v in kw.items() if k in ("inference_share", "bias")}
    main = {k: v for k, v in kw.items() if k not in opts}
    return dp.dp_glm(formula, df, eps=1.0, delta=1e-5, select=None, random_state=r, **main,
                     **opts)


def run(n: int, d: int, repeats: int, configs: dict) -> list[dict]:
    """Interleaved rounds over the configurations at one size: one row per fit."""
    df = data(n, d)
    formula = "y ~ " + " + ".join(f"x{j}" for j in range(d))
    for kw in configs.values():          # off the clock: kernels compiled, simulations cached
        _call(kw, formula, df.iloc[: min(n, 100_000)], 0)
    stage = {"wall": 0.0, "cpu": 0.0}
    real, timed = _stage_timer(stage)
    rows = []
    for r in range(repeats):
        load = os.getloadavg()[0]
        for name, kw in configs.items():
            tukey_linear._with_inference = timed if kw is not None else real
            stage.update(wall=0.0, cpu=0.0)
            t0, c0 = time.perf_counter(), time.process_time()
            res = _call(kw, formula, df, r)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            tukey_linear._with_inference = real
            bse = np.asarray(res.bse, dtype=float)
            rows.append({"n": n, "d": d, "config": name, "rep": r, "wall": wall, "cpu": cpu,
                         "stage_wall": stage["wall"], "stage_cpu": stage["cpu"],
                         "method": getattr(res, "method", "Logit"),
                         "intervals": bool(np.isfinite(bse).all()), "load": round(load, 1)})
            print(f"n={n:>9,} {name:40s} rep {r}: wall {wall:6.2f} s, cpu {cpu:6.2f} s, "
                  f"inference stage {stage['wall']:5.2f} s ({rows[-1]['method']}, intervals "
                  f"{rows[-1]['intervals']}; load {load:.1f})", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", default="1e6", help="comma list of row counts")
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--set", default="default", choices=sorted(SETS))
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    configs, pairs = SETS[args.set]
    rows = []
    for n in (int(float(v)) for v in args.n.split(",")):
        rows += run(n, args.d, args.repeats, configs)
        pd.DataFrame(rows).to_csv(args.out, index=False)
    out = pd.DataFrame(rows)
    out["stage_share"] = out.stage_wall / (out.wall - out.stage_wall)
    med = out.groupby(["n", "config"], sort=False)[["wall", "cpu", "stage_share", "load"]].median()
    print(med.round(3).to_string())
    for n in out.n.unique():
        for a, b in pairs:
            ratio = med.loc[(n, a)] / med.loc[(n, b)]
            print(f"n={n:,}: {a} / {b}: wall x{ratio['wall']:.3f}, cpu x{ratio['cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
