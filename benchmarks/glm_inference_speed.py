"""What standard errors add to the time of a dp_glm fit (issue 16 target: at most 30% of a
default fit at 1e6 x 20).

Runs the default call (``method="auto"``, which picks objective perturbation at this size and
releases the Fisher information for the intervals) against the same fit with
``method="objpert", inference_share=0`` (no inference) in the same run, plus DP-GD with and
without its inference parts, on synthetic logistic data; reports median wall and CPU seconds
over ``--repeats`` and the ratio. Writes ``benchmarks/results/glm_inference_speed.csv``.

    nice -n 10 python benchmarks/glm_inference_speed.py --n 1e6 --d 20 --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats as dp

OUT = Path(__file__).parent / "results" / "glm_inference_speed.csv"


def data(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = np.linspace(1.0, -1.0, d) / np.sqrt(d)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(0.5 - X @ beta))
    return df


CONFIGS = {
    "default (auto, with intervals)": {},
    "objpert, inference_share=0": {"method": "objpert", "inference_share": 0.0},
    "dpgd (with intervals)": {"method": "dpgd"},
    "dpgd, inference_share=0": {"method": "dpgd", "inference_share": 0.0},
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    df = data(int(args.n), args.d)
    formula = "y ~ " + " + ".join(f"x{j}" for j in range(args.d))
    dp.dp_glm(formula, df.iloc[:5000], eps=1.0, delta=1e-5, random_state=0)    # warm-up
    rows = []
    for name, kw in CONFIGS.items():
        for r in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            res = dp.dp_glm(formula, df, eps=1.0, delta=1e-5, select=None, random_state=r,
                            **kw)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            rows.append({"config": name, "rep": r, "wall": wall, "cpu": cpu,
                         "method": res.method, "intervals": bool(np.isfinite(res.bse).all())})
            print(f"{name:32s} rep {r}: wall {wall:6.2f} s, cpu {cpu:6.2f} s "
                  f"({res.method}, intervals {rows[-1]['intervals']})", flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(args.out, index=False)
    med = out.groupby("config", sort=False)[["wall", "cpu"]].median()
    print(med.to_string())
    for a, b in (("default (auto, with intervals)", "objpert, inference_share=0"),
                 ("dpgd (with intervals)", "dpgd, inference_share=0")):
        print(f"{a} / {b}: wall x{med.loc[a, 'wall'] / med.loc[b, 'wall']:.3f}, "
              f"cpu x{med.loc[a, 'cpu'] / med.loc[b, 'cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
