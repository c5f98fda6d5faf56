"""dp_lm on dask frames read from parquet: wall time, rows/s, passes, memory, test R^2.

For each size (rows x 10 float64 columns, folders written by ``benchmarks/dask_data.py`` in
/work/dask_data) and each number of workers (LocalCluster, worker processes, one thread each):
one full pass, the default fit (``method="auto"``, ``select="auto"``) and AdaSSP and BAS
(T=100 rounds: one pass each) with the same selection, on dask, in the same run; the fit's time
as a multiple of one pass; each stage's wall time (every pass over the frame, by kind, and the
client's own work); rows per second; the peak RSS of the client and of each worker during the
fit (psutil, sampled every 0.1 s); and, up to 1e7 rows, the pandas fit of the same data (after
a fit on 5000 rows that compiles the kernels), with test R^2 on a fresh sample of the same
public model.

The one-pass reference (``pass_seconds``) reads every partition from parquet and sums all its
values on the workers (:func:`read_pass`): the least a pass over the data costs. The machine is
shared (the load average is recorded: ``load``), so each fit is bracketed by a reference pass
right before and right after it, and its pass count divides by their mean (after a warm-up
pass; the old single ``ddf.sum()`` figure, 0.04 s at 1e7 rows, had been answered without reading
the data). ``ddf.sum().compute()`` is reported beside it (``sum_seconds``, once, after warm-up;
``--no-sum`` skips it).

    nice -n 10 python benchmarks/dask_scale.py [--rows 1e6,1e7] [--workers 1,2] [--fits ...]
        [--baseline DIR [--rounds 2]] [--out FILE]

Writes benchmarks/results/dask_scale.csv, or ``--out FILE`` (rows of other sizes, workers or
fits already there are kept). ``--baseline DIR`` (a tree holding ``dpstats`` and this script,
e.g. a commit exported with ``git archive <commit> | tar -x -C /tmp/base``): the same options
run in fresh interpreters, the baseline's script on its code and this one on this checkout's,
alternating which goes first over ``--rounds`` rounds on the same data (A/B in one run, under
the same load); each prints its own table (the baseline writes its own tree's csv, this one
this checkout's or ``--out``, the last round's rows kept).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_data import chunk  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.dask import fold  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "dask_scale.csv"
FORMULA = "y ~ ."
METHODS = ("tukey", "adassp", "bas")
PANDAS_MAX = 10_000_000
#: Time ``ddf.sum().compute()`` too (``--no-sum``: not).
SUM = True
#: The default fit (method and select "auto": Tukey on every term at these sizes) and each
#: method with the same selection.
CASES = [("default", {})] + [(m, {"method": m}) for m in METHODS if m != "tukey"]
#: ``--fits default_unpinned``: the default fit with the folds' chains not pinned to workers
#: (:data:`dpstats.dask.fold.PIN_CHAINS` False: the code before session 9), run right after
#: the pinned one between the same reference passes.
CASES.insert(1, ("default_unpinned", {}))


class Peak:
    """Peak resident memory (MB) of the client and of each worker process while it runs
    (sampled every 0.1 s with psutil; ru_maxrss is inherited by forked workers)."""

    def __init__(self, pids):
        import psutil
        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.peak = dict.fromkeys(pids, 0.0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            for pid, proc in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], proc.memory_info().rss / 2**20)
                except Exception:       # a process that ended
                    pass
            time.sleep(0.1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def read_pass(ddf) -> float:
    """One pass that reads every value (``ddf.sum()`` can be answered from less: at 1e7 rows
    it took 0.04 s here): the sum of each partition's array, computed on the workers."""
    import dask
    return sum(dask.compute(*[dask.delayed(lambda d: float(d.to_numpy().sum()))(part)
                              for part in ddf.to_delayed()]))


class Stages:
    """Wall time of every pass a fit makes over the frame (``reduce_frame``, ``fold_frame``,
    ``sample_frame`` of :mod:`dpstats.dask`, wrapped where they are called), by pass kind, and
    of every round trip to a held first-pass total (``on_worker``, by the function run)."""

    def __init__(self):
        import importlib
        self.log = []
        self.mods = [importlib.import_module(f"dpstats.dask.{m}")
                     for m in ("passes", "fold", "engine", "run", "select", "inference")]
        self.saved = []

    def _wrap(self, fn):
        def timed_pass(ddf, pass_, *args, **kwargs):
            t = time.perf_counter()
            out = fn(ddf, pass_, *args, **kwargs)
            name = getattr(pass_, "__name__", type(pass_).__name__)   # a pass, or on_worker's fn
            self.log.append((name, time.perf_counter() - t))
            return out
        return timed_pass

    def __enter__(self):
        for mod in self.mods:
            for name in ("reduce_frame", "fold_frame", "sample_frame", "on_worker"):
                if hasattr(mod, name):
                    self.saved.append((mod, name, getattr(mod, name)))
                    setattr(mod, name, self._wrap(getattr(mod, name)))
        return self

    def __exit__(self, *exc):
        for mod, name, fn in self.saved:
            setattr(mod, name, fn)

    def summary(self, total: float) -> str:
        parts = [f"{name}={sec:.2f}" for name, sec in self.log]
        return ";".join(parts + [f"client={total - sum(sec for _, sec in self.log):.2f}"])


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
        workers_pids = list(client.run(os.getpid).values())
        read_pass(ddf)                            # warm the workers (imports, file handles)
        t_sum = timed(lambda: ddf.sum().compute())[1] if SUM else float("nan")
        dp.dp_lm(FORMULA, ddf.partitions[0], eps=1.0, random_state=0)   # warm the imports
        before = timed(lambda: read_pass(ddf))[1]
        for name, kw in CASES:
            load = os.getloadavg()[0]
            fold.PIN_CHAINS = name != "default_unpinned"     # the same-run baseline
            with Peak([os.getpid(), *workers_pids]) as peak, Stages() as stages:
                fit, t = timed(lambda kw=kw: dp.dp_lm(FORMULA, ddf, eps=1.0, random_state=1,
                                                     **kw))
            fold.PIN_CHAINS = True
            after = timed(lambda: read_pass(ddf))[1]
            t_pass, before = (before + after) / 2, after
            r2 = fit.score(test) if fit.released else float("nan")
            client_mb = peak.peak[os.getpid()]
            worker_mb = [peak.peak[pid] for pid in workers_pids]
            out.append({"rows": rows, "workers": workers, "engine": "dask", "fit": name,
                        "selected": ",".join(fit.selected), "seconds": t,
                        "sum_seconds": t_sum, "pass_seconds": t_pass,
                        "passes": t / t_pass, "rows_per_s": rows / t,
                        "stages": stages.summary(t), "method": fit.method,
                        "load": (load + os.getloadavg()[0]) / 2,
                        "m": getattr(fit, "m", None),
                        "client_peak_mb": client_mb,
                        "worker_peak_mb": ";".join(f"{w:.0f}" for w in worker_mb),
                        "test_r2": r2})
            print(f"{rows:>11,} {workers} dask   {name:8s} {t:8.2f}s  {t / t_pass:6.2f} passes "
                  f"R2={r2:.4f} client {client_mb:6.0f} MB workers "
                  f"{'/'.join(f'{w:.0f}' for w in worker_mb)} MB  pass {t_pass:.2f}s "
                  f"load {load:.1f} [{stages.summary(t)}]",
                  flush=True)
    return out


def pandas_case(rows: int, test: pd.DataFrame) -> list[dict]:
    df = pd.read_parquet(Path(f"/work/dask_data/rows_{rows:.0e}"))
    out = []
    from dpstats.api.warmup import warmup
    warmup()          # every kernel compiled before timing (the 5000-row fit picks BAS)
    for name, kw in CASES:
        dp.dp_lm(FORMULA, df.iloc[:5000], eps=1.0, random_state=0, **kw)   # compile kernels
        fit, t = timed(lambda kw=kw: dp.dp_lm(FORMULA, df, eps=1.0, random_state=1, **kw))
        r2 = fit.score(test) if fit.released else float("nan")
        out.append({"rows": rows, "workers": 0, "engine": "pandas", "fit": name,
                    "method": fit.method, "m": getattr(fit, "m", None),
                    "load": os.getloadavg()[0],
                    "selected": ",".join(fit.selected), "seconds": t, "rows_per_s": rows / t,
                    "test_r2": r2})
        print(f"{rows:>11,} - pandas {name:8s} {t:8.2f}s  R2={r2:.4f}", flush=True)
    return out


def ab_rounds(args) -> None:
    """``--baseline``: each round runs the baseline tree's script and this one (fresh
    interpreters, each importing its own ``dpstats``), the order alternating by round."""
    import subprocess
    rest, skip = [], False
    for a in sys.argv[1:]:               # the options without --baseline, --rounds and --out
        if skip or a.split("=")[0] in ("--baseline", "--rounds", "--out"):
            skip = not skip and "=" not in a
            continue
        rest.append(a)
    out = [f"--out={args.out}"] if args.out else []
    here = Path(__file__).resolve().parent.parent
    trees = [("baseline", Path(args.baseline).resolve()), ("this", here)]
    for r in range(args.rounds):
        for name, root in trees if r % 2 == 0 else trees[::-1]:
            print(f"--- round {r + 1}: {name} ({root}), load {os.getloadavg()[0]:.1f}",
                  flush=True)
            env = {**os.environ, "PYTHONPATH": str(root)}
            mine = out if name == "this" else []     # (the baseline writes its own tree's)
            subprocess.run([sys.executable, str(root / "benchmarks" / "dask_scale.py"), *rest,
                            *mine], env=env, check=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1e6,1e7")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--fits", default=",".join(name for name, _ in CASES
                                                if name != "default_unpinned"))
    ap.add_argument("--no-sum", action="store_true")
    ap.add_argument("--no-pandas", action="store_true")
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None, help="the CSV to write (default: dask_scale.csv)")
    args = ap.parse_args()
    if args.baseline:
        return ab_rounds(args)
    global SUM
    SUM = not args.no_sum
    CASES[:] = [case for case in CASES if case[0] in args.fits.split(",")]
    test = chunk(10_000, 200_000)              # a fresh public sample of the same model
    rows_list = [int(float(r)) for r in args.rows.split(",")]
    workers_list = [int(w) for w in args.workers.split(",")]
    print("       rows w engine fit         time  passes  test R^2   memory", flush=True)
    records = []
    for rows in rows_list:
        for workers in workers_list:             # dask first: the client holds no frame yet
            records += run_case(rows, workers, test)
        if rows <= PANDAS_MAX and not args.no_pandas:
            records += pandas_case(rows, test)
    new = pd.DataFrame(records)
    out = Path(args.out) if args.out else OUT
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(new.rows, new.workers, new.engine, new.fit, strict=True))
        kept = [key not in done for key in zip(old.rows, old.workers, old.engine, old.fit,
                                               strict=True)]
        new = pd.concat([old[kept], new], ignore_index=True)
    out.parent.mkdir(exist_ok=True)
    new.to_csv(out, index=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
