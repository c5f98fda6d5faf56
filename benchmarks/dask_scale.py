"""dp_lm on dask frames read from parquet: wall time, rows/s, passes, memory, test R^2.

For each size (rows x 10 float64 columns, folders written by ``benchmarks/dask_data.py`` in
/work/dask_data) and each number of workers (LocalCluster, worker processes, one thread each):
one full pass (``ddf.sum().compute()``), the default fit (``select=None``: selection does not
run on dask yet) and each method on dask, in the same run; the fit's time as a multiple of one
pass; rows per second; the peak RSS of the client and of each worker; and, up to 1e7 rows, the
pandas fit of the same data (time and test R^2 on a fresh public sample of the same model).

    nice -n 10 python benchmarks/dask_scale.py [--rows 1e6,1e7] [--workers 1,2]

Writes benchmarks/results/dask_scale.csv (rows of other sizes already there are kept).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_data import chunk  # noqa: E402

import dpstats as dp  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "dask_scale.csv"
FORMULA = "y ~ ."
METHODS = ("tukey", "adassp")
PANDAS_MAX = 10_000_000


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run_case(rows: int, workers: int, test: pd.DataFrame) -> list[dict]:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster
    folder = Path(f"/work/dask_data/rows_{rows:.0e}")
    out = []
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        ddf = dd.read_parquet(folder)
        _, t_pass = timed(lambda: ddf.sum().compute())
        cases = [("default", {})] + [(m, {"method": m}) for m in METHODS]
        for name, kw in cases:
            fit, t = timed(lambda kw=kw: dp.dp_lm(FORMULA, ddf, eps=1.0, select=None,
                                                 random_state=1, **kw))
            r2 = fit.score(test) if fit.released else float("nan")
            worker_mb = client.run(lambda: resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss / 1024.0)
            out.append({"rows": rows, "workers": workers, "engine": "dask", "fit": name,
                        "seconds": t, "pass_seconds": t_pass, "passes": t / t_pass,
                        "rows_per_s": rows / t, "client_peak_mb": peak_mb(),
                        "worker_peak_mb": max(worker_mb.values()), "test_r2": r2})
            print(f"{rows:>11,} {workers} dask   {name:8s} {t:8.2f}s  {t / t_pass:5.2f} passes "
                  f"R2={r2:.4f} client {peak_mb():7.0f} MB worker "
                  f"{max(worker_mb.values()):7.0f} MB", flush=True)
    return out


def pandas_case(rows: int, test: pd.DataFrame) -> list[dict]:
    df = pd.read_parquet(Path(f"/work/dask_data/rows_{rows:.0e}"))
    out = []
    for name, kw in [("default", {})] + [(m, {"method": m}) for m in METHODS]:
        fit, t = timed(lambda kw=kw: dp.dp_lm(FORMULA, df, eps=1.0, select=None,
                                             random_state=1, **kw))
        r2 = fit.score(test) if fit.released else float("nan")
        out.append({"rows": rows, "workers": 0, "engine": "pandas", "fit": name, "seconds": t,
                    "rows_per_s": rows / t, "client_peak_mb": peak_mb(), "test_r2": r2})
        print(f"{rows:>11,} - pandas {name:8s} {t:8.2f}s  R2={r2:.4f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1e6,1e7")
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    test = chunk(10_000, 200_000)              # a fresh public sample of the same model
    rows_list = [int(float(r)) for r in args.rows.split(",")]
    workers_list = [int(w) for w in args.workers.split(",")]
    print("       rows w engine fit         time  passes  test R^2   memory", flush=True)
    records = []
    for rows in rows_list:
        if rows <= PANDAS_MAX:
            records += pandas_case(rows, test)
        for workers in workers_list:
            records += run_case(rows, workers, test)
    new = pd.DataFrame(records)
    if OUT.exists():
        old = pd.read_csv(OUT)
        new = pd.concat([old[~old.rows.isin(rows_list)], new], ignore_index=True)
    OUT.parent.mkdir(exist_ok=True)
    new.to_csv(OUT, index=False)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
