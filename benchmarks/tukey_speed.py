"""Speed of dp_lm (Tukey, no selection) beside statsmodels OLS, in one run.

Prints: ``import dpstats`` time; the first dp_lm in a fresh process with a cold numba cache
(compile) and with a warm cache; warm fits on the real files beside
``statsmodels.formula.api.ols(formula, data).fit()`` on the same formula and frame.

    python benchmarks/tukey_speed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "regression"
REFERENCE_SECONDS = {"diamonds": 1.94, "california": 0.74, "nba": 1.34, "nyc_garbage": 0.79}
LABELS = {"diamonds": "price", "california": "median_house_value", "nba": "PTS_home",
          "nyc_garbage": "REFUSETONSCOLLECTED"}

_FIRST_FIT = """
import time, math
t0 = time.perf_counter()
import dpstats as dp
import pandas as pd
df = pd.read_csv({path!r})
t1 = time.perf_counter()
dp.dp_lm("price ~ .", df, eps=math.log(3), select=None, random_state=0)
print(time.perf_counter() - t1)
"""


def _python(code: str, env: dict | None = None) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_time(repeats: int) -> float:
    code = "import time; t=time.perf_counter(); import dpstats; print(time.perf_counter()-t)"
    return min(_python(code) for _ in range(repeats))


def first_fit(cache_dir: str | None) -> float:
    env = {"NUMBA_CACHE_DIR": cache_dir} if cache_dir else None
    return _python(_FIRST_FIT.format(path=str(DATA / "diamonds.csv")), env)


def warm(repeats: int) -> pd.DataFrame:
    import statsmodels.formula.api as smf

    import dpstats as dp
    rows = []
    for name, label in LABELS.items():
        df = pd.read_csv(DATA / f"{name}.csv")
        formula = f"{label} ~ ."
        rhs = " + ".join(f"Q('{c}')" for c in df.columns if c != label)
        dp.dp_lm(formula, df, eps=math.log(3), select=None, random_state=0)  # warm up
        t_dp, t_ols = [], []
        for r in range(repeats):
            t0 = time.perf_counter()
            dp.dp_lm(formula, df, eps=math.log(3), select=None, random_state=r)
            t_dp.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            smf.ols(f"{label} ~ {rhs}", df).fit()
            t_ols.append(time.perf_counter() - t0)
        best_dp, best_ols = min(t_dp), min(t_ols)
        rows.append({"dataset": name, "rows": len(df), "dp_lm s": best_dp,
                     "statsmodels ols s": best_ols, "ratio dp/ols": best_dp / best_ols,
                     "reference Tukey s": REFERENCE_SECONDS[name],
                     "speed-up vs reference": REFERENCE_SECONDS[name] / best_dp})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"import dpstats: {import_time(args.repeats):.3f} s (best of {args.repeats})")
    with tempfile.TemporaryDirectory() as cold:
        print(f"first dp_lm on diamonds, cold numba cache (compiles): {first_fit(cold):.2f} s")
        print(f"first dp_lm on diamonds, warm numba cache, fresh process: {first_fit(cold):.2f} s")
    table = warm(args.repeats)
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    table.to_csv(out / "tukey_speed.csv", index=False)
    pd.set_option("display.width", 200)
    print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
