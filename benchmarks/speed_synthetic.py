"""Wall time and peak memory of dp_lm on synthetic data, beside statsmodels OLS in the same run.

For every n in ``--n`` (default 1e4, 1e5, 1e6) and d in ``--d`` (default 10, 50, 200), plus the
target case n = 1e6, d = 20, a fresh interpreter builds ``y = X[:, :5] @ beta + noise`` with d
standard-normal columns, compiles/loads the kernels on a small slice, then times

* ``statsmodels.formula.api.ols(formula, data).fit()`` on the same frame, all d columns;
* the default ``dp_lm("y ~ .", data, eps=ln 3)`` (``select="auto"``, ``method="auto"``; the
  "method used" column says what it chose), and ``dp_lm`` with every selector (None, auto,
  kendall, sublasso, sis) and method="tukey", and with every method (tukey, adassp, bas, fw,
  dpgd) and select="auto" (``--full``: the whole selector x method grid; ``--default-only``:
  the default alone);

each the fastest of ``--repeats`` calls, with the peak resident memory above the start of the
call (the data frame excluded). Ratios divide by statsmodels' time and peak. The stage
breakdown of the default ``dp_lm`` (select="auto", Tukey) comes from one extra patched call.
The machine is shared: ratios within one run are the headline, absolute seconds are not.

Writes benchmarks/results/speed_synthetic.csv and speed_synthetic_stages.csv
(``--default-only``: speed_synthetic_default.csv and speed_synthetic_default_stages.csv).

    python benchmarks/speed_synthetic.py [--n 1e4,1e5,1e6] [--d 10,50,200] [--repeats 3]
        [--full] [--default-only] [--no-target] [--timeout 3600]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import time
import warnings
from pathlib import Path

import pandas as pd
import speed_common as sc

SELECTORS = [None, "auto", "kendall", "sublasso", "sis"]
METHODS = ["tukey", "adassp", "bas", "fw", "dpgd"]
EPS = math.log(3)
TARGET = (1_000_000, 20)


def combos(full: bool | str) -> list[tuple[str | None, str]]:
    if full == "default":
        return [("auto", "auto")]
    if full:
        return [("auto", "auto")] + [(s, m) for s in SELECTORS for m in METHODS]
    return ([("auto", "auto")] + [(s, "tukey") for s in SELECTORS]
            + [("auto", m) for m in METHODS if m != "tukey"])


def worker(n: int, d: int, repeats: int, full: bool) -> list[dict]:
    """Everything for one (n, d), in this (fresh) process."""
    import statsmodels.formula.api as smf

    import dpstats as dp
    warnings.simplefilter("ignore")
    df = sc.synthetic_frame(n, d)
    formula = sc.patsy_formula("y", [c for c in df.columns if c != "y"])
    small = df.iloc[:2000]
    for sel, meth in combos(full):                       # numba: load or compile, off the clock
        dp.dp_lm("y ~ .", small, eps=EPS, select=sel, method=meth, random_state=0)
    smf.ols(formula, small).fit()
    gc.collect()
    reps = repeats if n * d <= 20_000_000 else 1
    ols = sc.timed(lambda: smf.ols(formula, df).fit(), reps)
    rows = [{"n": n, "d": d, "select": "statsmodels", "method": "ols", "selector used": "",
             "seconds": ols["seconds"], "cpu seconds": ols["cpu_seconds"],
             "peak MB": ols["peak_mb"], "released": True}]
    del ols["result"]
    gc.collect()
    for sel, meth in combos(full):
        seed = iter(range(1000))
        rec = sc.timed(lambda sel=sel, meth=meth, seed=seed: dp.dp_lm(
            "y ~ .", df, eps=EPS, select=sel, method=meth, random_state=next(seed)), reps)
        fit = rec.pop("result")
        rows.append({"n": n, "d": d, "select": str(sel), "method": meth,
                     "selector used": str(fit.selector), "method used": fit.method,
                     "k": fit.k, "seconds": rec["seconds"],
                     "cpu seconds": rec["cpu_seconds"], "peak MB": rec["peak_mb"],
                     "released": bool(fit.released)})
        del fit
        gc.collect()
    stages: dict = {}
    cpu: dict = {}
    with sc.stage_times(stages, cpu):
        t0, c0 = time.perf_counter(), time.process_time()
        dp.dp_lm("y ~ .", df, eps=EPS, random_state=99)
        stages["whole fit"], cpu["whole fit"] = time.perf_counter() - t0, time.process_time() - c0
    rows.append({"n": n, "d": d, "select": "stages",
                 "method": json.dumps({k: [v, cpu.get(k)] for k, v in stages.items()})})
    return rows


def _ratios(res: pd.DataFrame) -> pd.DataFrame:
    """Add time and peak-memory ratios to statsmodels' fit on the same (n, d)."""
    if "seconds" not in res:
        return res
    base = res.loc[res["select"] == "statsmodels", ["n", "d", "seconds", "peak MB"]]
    base = base.rename(columns={"seconds": "ols s", "peak MB": "ols MB"})
    out = res.merge(base, on=["n", "d"], how="left")
    out["time / statsmodels"] = out["seconds"] / out["ols s"]
    out["peak / statsmodels"] = out["peak MB"] / out["ols MB"]
    return out.drop(columns=["ols s", "ols MB"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1e4,1e5,1e6")
    ap.add_argument("--d", default="10,50,200")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--default-only", action="store_true",
                    help="time statsmodels and the default dp_lm only")
    ap.add_argument("--no-target", action="store_true")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    ns = [int(float(v)) for v in args.n.split(",")]
    ds = [int(v) for v in args.d.split(",")]
    if args.worker:
        print(json.dumps(worker(ns[0], ds[0], args.repeats,
                                "default" if args.default_only else args.full)))
        return
    configs = [(n, d) for n in ns for d in ds]
    if not args.no_target and TARGET not in configs:
        configs.append(TARGET)
    rows, stage_rows = [], []
    print(sc.load_note())
    for n, d in sorted(configs):
        need_mb = 8 * n * d * 6 / 2**20          # frame + design + statsmodels' copies
        if sc.available_mb() < need_mb:
            rows.append({"n": n, "d": d, "select": "skipped", "method": "",
                         "error": f"needs about {need_mb:.0f} MB free"})
            continue
        extra = (["--repeats", str(args.repeats)] + (["--full"] if args.full else [])
                 + (["--default-only"] if args.default_only else []))
        got = sc.run_worker(Path(__file__), ["--n", str(n), "--d", str(d), *extra],
                            args.timeout)
        for r in got:
            r.setdefault("n", n)
            r.setdefault("d", d)
            if r.get("select") == "stages":
                stage_rows += [{"n": n, "d": d, "stage": k, "seconds": v[0],
                                "cpu seconds": v[1]}
                               for k, v in json.loads(r["method"]).items()]
            else:
                rows.append(r)
        print(f"done n={n} d={d} ({sc.load_note()})", flush=True)
    res = _ratios(pd.DataFrame(rows))
    name = "speed_synthetic_default" if args.default_only else "speed_synthetic"
    sc.save(res, name)
    if stage_rows:
        print("\nstages of the default dp_lm (wall and CPU seconds, all threads):")
        sc.save(pd.DataFrame(stage_rows), name + "_stages")
    if "time / statsmodels" in res:
        row = res[(res["n"] == TARGET[0]) & (res["d"] == TARGET[1]) & (res["select"] == "auto")
                  & (res["method"] == "auto")]
        if len(row):
            print(f"\ntarget: default dp_lm at n=1e6, d=20 ({row['method used'].iloc[0]}) takes "
                  f"{float(row['time / statsmodels'].iloc[0]):.2f} x statsmodels OLS "
                  "(goal <= 0.6)")

if __name__ == "__main__":
    main()
