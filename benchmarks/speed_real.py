"""Speed of dp_lm on the real regression files: beside statsmodels, and against the reference code.

1. Start-up: ``import dpstats`` (fresh interpreters, best of ``--repeats``); the first default
   ``dp_lm`` on diamonds in a fresh interpreter with an empty numba cache (it compiles what it
   uses) and again with that cache filled (the cached start).
2. Every file in ../shared/data/regression (``label ~ .``): the fastest of ``--repeats`` warm
   calls and their peak extra memory, for ``statsmodels.formula.api.ols(formula, data).fit()``
   and for dp_lm with each selector (Tukey alone, K-Tukey = kendall, L-Tukey = sublasso, the
   default select="auto") and each method (adassp, bas, fw, dpgd with select="auto").
3. The reference code's seconds and median test R^2 per fit (ANCHORS.md) beside ours: the
   median test R^2 over ``--trials`` random 90/10 splits at (ln 3, 1e-5), k = 5
   (``selection_utility.run``, PTR failure = -inf), and the speed-up ``reference s / ours``;
   "meets" needs a speed-up of at least 20 at equal or better R^2.

Writes benchmarks/results/speed_real.csv, speed_real_reference.csv and speed_startup.csv.

    python benchmarks/speed_real.py [--repeats 5] [--trials 10] [--files diamonds,...]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd
import selection_utility
import speed_common as sc
from tukey_utility import LABELS

import dpstats as dp

DATA = sc.SHARED / "regression"
selection_utility.DATA = DATA        # its default path assumes the main checkout's layout

EPS = math.log(3)
CONFIGS = [("none", None, "tukey"), ("kendall", "kendall", "tukey"),
           ("sublasso", "sublasso", "tukey"), ("default", "auto", "tukey"),
           ("adassp", "auto", "adassp"), ("bas", "auto", "bas"), ("fw", "auto", "fw"),
           ("dpgd", "auto", "dpgd")]
#: ANCHORS.md, the reference code: (median test R^2, seconds per fit) of Tukey, K-Tukey and
#: L-Tukey; None where its PTR failed on every split (no time reported).
REFERENCE = {
    "california": {"none": (0.240, 0.74), "kendall": (0.340, 1.21), "sublasso": (-4.87, 2.5)},
    "diamonds": {"none": (-1.66, 1.94), "kendall": (0.714, 3.34), "sublasso": (0.882, 6.2)},
    "nyc_garbage": {"none": (0.500, 0.79), "kendall": (0.501, 1.39), "sublasso": (0.492, 2.7)},
    "nba": {"none": (0.597, 1.34), "kendall": (0.593, 1.38), "sublasso": (0.578, 2.8)},
    "cpu_act": {"none": None, "kendall": (-0.008, 0.57), "sublasso": (0.013, 0.8)},
    "elevators": {"none": None, "kendall": (0.225, 1.09), "sublasso": (0.317, 1.2)},
    "house_16H": {"none": (-0.254, 0.49), "kendall": (-0.293, 1.48), "sublasso": (0.024, 2.1)},
    "ailerons": {"none": None, "kendall": (0.669, 1.15), "sublasso": (0.399, 0.9)},
    "pol": {"none": None, "kendall": (-1.27, 1.11), "sublasso": (-0.017, 1.5)},
    "wine_quality": {"none": None, "kendall": (-0.545, 0.40), "sublasso": (-0.066, 0.5)},
}
REF_NAMES = {"none": "Tukey", "kendall": "K-Tukey", "sublasso": "L-Tukey"}

_FIRST_FIT = """
import time
t0 = time.perf_counter()
import dpstats as dp
import pandas as pd
df = pd.read_csv({path!r})
t1 = time.perf_counter()
dp.dp_lm("price ~ .", df, eps={eps!r}, random_state=0)
print(time.perf_counter() - t1)
"""


def _python(code: str, env: dict | None = None) -> float:
    env = {**os.environ, "PYTHONPATH": str(sc.ROOT), **(env or {})}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def startup(repeats: int) -> pd.DataFrame:
    code = "import time; t=time.perf_counter(); import dpstats; print(time.perf_counter()-t)"
    imp = min(_python(code) for _ in range(repeats))
    first = _FIRST_FIT.format(path=str(DATA / "diamonds.csv"), eps=EPS)
    with tempfile.TemporaryDirectory() as cache:
        cold = _python(first, {"NUMBA_CACHE_DIR": cache})
        cached = min(_python(first, {"NUMBA_CACHE_DIR": cache}) for _ in range(repeats))
    return pd.DataFrame([
        {"measure": "import dpstats", "seconds": imp, "target s": 0.5},
        {"measure": "first default dp_lm on diamonds, empty numba cache (compiles)",
         "seconds": cold, "target s": float("nan")},
        {"measure": "first default dp_lm on diamonds, fresh process, cache filled",
         "seconds": cached, "target s": 2.0}])


def warm(files, repeats: int) -> pd.DataFrame:
    import statsmodels.formula.api as smf
    rows = []
    for name in files:
        df = pd.read_csv(DATA / f"{name}.csv")
        label = LABELS[name]
        formula = sc.patsy_formula(label, df.columns)
        ols = sc.timed(lambda formula=formula, df=df: smf.ols(formula, df).fit(), repeats,
                       warmup=True)
        rows.append({"dataset": name, "rows": len(df), "config": "statsmodels ols",
                     "seconds": ols["seconds"], "peak MB": ols["peak_mb"]})
        for cfg, sel, meth in CONFIGS:
            seeds = iter(range(10_000))
            rec = sc.timed(lambda df=df, sel=sel, meth=meth, label=label, seeds=seeds: dp.dp_lm(
                f"{label} ~ .", df, eps=EPS, select=sel, method=meth,
                random_state=next(seeds)), repeats, warmup=True)
            rows.append({"dataset": name, "rows": len(df), "config": cfg,
                         "seconds": rec["seconds"], "peak MB": rec["peak_mb"],
                         "selector used": rec["result"].selector})
    res = pd.DataFrame(rows)
    base = res[res["config"] == "statsmodels ols"].set_index("dataset")
    res["time / statsmodels"] = res["seconds"] / res["dataset"].map(base["seconds"])
    res["peak / statsmodels"] = res["peak MB"] / res["dataset"].map(base["peak MB"])
    return res


def against_reference(files, timing: pd.DataFrame, trials: int) -> pd.DataFrame:
    utility = selection_utility.run(files, trials, ["none", "kendall", "sublasso", "default"])
    med = utility.groupby(["dataset", "method"])["r2"].median()
    secs = timing.set_index(["dataset", "config"])["seconds"]
    rows = []
    for name in files:
        refs = {c: v for c, v in REFERENCE[name].items() if v is not None}
        for cfg in ("none", "kendall", "sublasso", "default"):
            if cfg == "default":   # against the reference's best Tukey-family fit
                ref_cfg = max(refs, key=lambda c: refs[c][0])
            else:
                ref_cfg = cfg
            if ref_cfg not in refs:
                continue
            r2_ref, s_ref = refs[ref_cfg]
            ours, r2 = float(secs[(name, cfg)]), float(med[(name, cfg)])
            rows.append({"dataset": name, "ours": cfg, "reference": REF_NAMES[ref_cfg],
                         "our R2": r2, "reference R2": r2_ref, "our s": ours,
                         "reference s": s_ref, "speed-up": s_ref / ours,
                         "meets (>=20x, R2 >= ref)": bool(s_ref / ours >= 20 and r2 >= r2_ref)})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--files", default=",".join(LABELS))
    ap.add_argument("--skip-startup", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    files = args.files.split(",")
    print(sc.load_note())
    if not args.skip_startup:
        sc.save(startup(args.repeats), "speed_startup")
    timing = warm(files, args.repeats)
    print()
    sc.save(timing, "speed_real")
    print()
    ref = against_reference(files, timing, args.trials)
    sc.save(ref, "speed_real_reference")
    met = ref["meets (>=20x, R2 >= ref)"]
    print(f"\nmeets the 20x target at equal or better R^2: {int(met.sum())} of {len(ref)} "
          f"comparisons; median speed-up {np.median(ref['speed-up']):.0f}x "
          f"({sc.load_note()})")


if __name__ == "__main__":
    main()
