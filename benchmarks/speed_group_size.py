"""Default dp_lm at 1e6 x 20 with Tukey groups of 3 (before) and up to 30 (now) rows per
column, beside statsmodels OLS, alternating in one process (a same-run A/B under the same load).

``choose_m.ROWS_PER_COLUMN`` is set for each fit (3.0: the rule before design note 39; 30.0:
today's); both fits run the default call (``method="auto"`` picks Tukey at this size either way).
Prints each repeat and the fastest of the repeats (wall and CPU seconds), writes
benchmarks/results/speed_group_size.csv.

    nice -n 10 python benchmarks/speed_group_size.py [--repeats 3] [--n 1e6] [--d 20]
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import speed_common as sc  # noqa: E402


def main() -> None:
    import statsmodels.formula.api as smf

    import dpstats as dp
    import dpstats.estimators.tukey.choose_m as cm

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    args = ap.parse_args()
    df = sc.synthetic_frame(int(args.n), args.d)
    formula = sc.patsy_formula("y", [c for c in df.columns if c != "y"])
    dp.dp_lm("y ~ .", df.iloc[:2000], eps=math.log(3), random_state=0)   # compile off the clock
    rows = []
    for rep in range(args.repeats):
        for name, r in (("groups of 3 rows/column (before)", 3.0), ("up to 30 (now)", 30.0)):
            cm.ROWS_PER_COLUMN = r
            gc.collect()
            t, c = time.perf_counter(), time.process_time()
            fit = dp.dp_lm("y ~ .", df, eps=math.log(3), random_state=rep)
            rows.append({"config": name, "rep": rep, "seconds": time.perf_counter() - t,
                         "cpu seconds": time.process_time() - c, "method": fit.method,
                         "m": fit.m})
            print(rows[-1], flush=True)
        gc.collect()
        t, c = time.perf_counter(), time.process_time()
        smf.ols(formula, df).fit()
        rows.append({"config": "statsmodels", "rep": rep, "seconds": time.perf_counter() - t,
                     "cpu seconds": time.process_time() - c})
        print(rows[-1], flush=True)
    res = pd.DataFrame(rows)
    res.to_csv(HERE / "results" / "speed_group_size.csv", index=False)
    best = res.groupby("config")[["seconds", "cpu seconds"]].min()
    best["wall / statsmodels"] = best.seconds / best.loc["statsmodels", "seconds"]
    best["cpu / statsmodels"] = best["cpu seconds"] / best.loc["statsmodels", "cpu seconds"]
    print(best.round(3).to_string())


if __name__ == "__main__":
    main()
