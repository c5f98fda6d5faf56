"""Run dpstats' defaults and every method on the evaluation corpus (benchmarks/corpus/README.md).

Regression (45 tasks): eps = ln 3, delta = 1e-5, seeded random 90/10 splits (10), median
test R^2; a withheld fit (``fit.released`` False) scores -inf. Configurations: ``default``
(``dp.dp_lm(formula, train, eps=..., delta=...)``, whatever the checked-out default is), each
``method=`` of tukey/adassp/bas/fw/dpgd with the default selection, ``default_nosel``
(``select=None``), ``bas_nosel`` (``method="bas", select=None``) and non-private ``ols``
(``method="ols", select=None``) on the same split.

Classification (20 tasks): eps = 1, delta = 1e-5, seeded random 80/20 splits (5), median test
accuracy: ``default`` ``dp.dp_glm``, each method of ``dpstats.estimators._MODULES["binomial"]``
(read at run time), non-private ``logistic`` (scikit-learn, standardised dummies) and the
``majority`` class of the training split. A withheld fit scores -inf.

The formula of every task is ``"<response> ~ ."`` on the task's loaded frame (tasks.py).
Splits depend only on (task, split number); a fit's random_state on (task, config, split).

    nice -n 10 python benchmarks/corpus/run_corpus.py [--jobs 2] [--tasks 'AER/*' ...]
        [--kind regression|classification] [--splits N] [--configs default,bas,ols]
        [--fast] [--resume] [--out 'benchmarks/results/corpus_{kind}.csv']
    python benchmarks/corpus/run_corpus.py --summary benchmarks/results/corpus_*.csv

Writes one row per task x config (n, p, p_design, median score, scores, n withheld, n errors,
seconds) to ``--out`` (``{kind}`` is replaced by regression/classification), rewritten after
every finished unit, and prints a line per unit with an ETA, then a table of medians.
``--fast`` runs two small tasks with one split (the CI version, tests/lab/test_corpus.py).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
import warnings
import zlib
from functools import lru_cache
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import summary as summ  # noqa: E402
import tasks as T  # noqa: E402

ROOT = HERE.parents[1]
DEFAULT_OUT = str(ROOT / "benchmarks" / "results" / "corpus_{kind}.csv")
REG_EPS, CLS_EPS, DELTA = math.log(3), 1.0, 1e-5
SPLITS = {"regression": 10, "classification": 5}
TEST_FRACTION = {"regression": 0.1, "classification": 0.2}
FIT_TIMEOUT = 180  # seconds per fit; a fit over the cap is recorded as an error (n_error)
FAST_TASKS = ["Ecdat/Wages1", "causaldata/titanic"]
COLUMNS = ["task", "kind", "config", "n", "p", "p_design", "n_splits", "score", "scores",
           "n_withheld", "n_error", "seconds", "sec_per_fit", "error"]


def regression_configs() -> dict:
    out = {"default": {}}
    out.update({m: {"method": m} for m in ("tukey", "adassp", "bas", "fw", "dpgd")})
    out["default_nosel"] = {"select": None}
    out["bas_nosel"] = {"method": "bas", "select": None}
    out["ols"] = {"method": "ols", "select": None}
    return out


def classification_configs() -> dict:
    from dpstats.estimators import _MODULES

    out = {"default": {}}
    out.update({m: {"method": m} for m in _MODULES["binomial"]})
    out["logistic"] = "logistic"
    out["majority"] = "majority"
    return out


def configs_for(kind: str) -> dict:
    return regression_configs() if kind == "regression" else classification_configs()


def split(n: int, task: str, k: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([k, zlib.crc32(task.encode())])
    perm = rng.permutation(n)
    n_test = max(1, int(round(TEST_FRACTION[kind] * n)))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def fit_seed(task: str, config: str, k: int) -> int:
    return zlib.crc32(f"{task}|{config}|{k}".encode())


def p_design(df: pd.DataFrame) -> int:
    """Design columns besides the intercept, from the declared dtypes only."""
    return int(sum(len(df[c].cat.categories) - 1 if isinstance(df[c].dtype, pd.CategoricalDtype)
                   else 1 for c in df.columns[1:]))


@lru_cache(maxsize=4)
def _frame(name: str) -> pd.DataFrame:
    return T.load(T.by_name([name])[0])


def _r2(y: np.ndarray, yhat: np.ndarray) -> float:
    sst = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((y - yhat) ** 2)) / sst if sst > 0 else float("nan")


def _dummies(df: pd.DataFrame) -> pd.DataFrame:
    return pd.get_dummies(df, drop_first=True, dtype=float)


def _baseline_accuracy(config: str, train: pd.DataFrame, test: pd.DataFrame) -> float:
    ytr, yte = train.iloc[:, 0].to_numpy(), test.iloc[:, 0].to_numpy()
    if config == "majority":
        return float(np.mean(yte == float(ytr.mean() >= 0.5)))
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    xtr, xte = _dummies(train.iloc[:, 1:]), _dummies(test.iloc[:, 1:])
    scale = StandardScaler().fit(xtr)
    model = LogisticRegression(max_iter=2000).fit(scale.transform(xtr), ytr)
    return float(np.mean(model.predict(scale.transform(xte)) == yte))


def _one_fit(task: T.Task, config: str, spec, train, test, k: int) -> tuple[float, bool]:
    """(score, released) of one fit on one split."""
    import dpstats as dp

    formula = T.formula(task)
    y = test.iloc[:, 0].to_numpy()
    if isinstance(spec, str):
        return _baseline_accuracy(spec, train, test), True
    seed = fit_seed(task.name, config, k)
    if task.kind == "regression":
        fit = dp.dp_lm(formula, train, eps=REG_EPS, delta=DELTA, random_state=seed, **spec)
        if not fit.released:
            return -math.inf, False
        return _r2(y, fit.predict(test).to_numpy(dtype=float)), True
    fit = dp.dp_glm(formula, train, eps=CLS_EPS, delta=DELTA, random_state=seed, **spec)
    if not fit.released:
        return -math.inf, False
    prob = fit.predict(test).to_numpy(dtype=float)
    return float(np.mean((prob >= 0.5) == (y >= 0.5))), True


def _alarm(signum, frame):
    raise TimeoutError(f"fit exceeded {FIT_TIMEOUT} s")


def run_unit(unit: tuple[str, str, int]) -> dict:
    """Every split of one (task, config); the row of the results CSV."""
    name, config, n_splits = unit
    task = T.by_name([name])[0]
    spec = configs_for(task.kind)[config]
    df = _frame(name)
    scores, withheld, errors, first_error = [], 0, 0, ""
    start = time.perf_counter()
    use_alarm = hasattr(signal, "SIGALRM")
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for k in range(n_splits):
        tr, te = split(len(df), name, k, task.kind)
        train, test = df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True)
        try:
            if use_alarm:
                signal.alarm(FIT_TIMEOUT)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                score, released = _one_fit(task, config, spec, train, test, k)
            withheld += not released
        except Exception as exc:  # recorded, never hidden: n_error and the first message
            score, errors = float("nan"), errors + 1
            first_error = first_error or f"{type(exc).__name__}: {exc}"[:200]
        finally:
            if use_alarm:
                signal.alarm(0)
        scores.append(score)
    seconds = time.perf_counter() - start
    valid = [s for s in scores if not math.isnan(s)]
    return {"task": name, "kind": task.kind, "config": config, "n": len(df),
            "p": df.shape[1] - 1, "p_design": p_design(df), "n_splits": n_splits,
            "score": float(np.median(valid)) if valid else float("nan"),
            "scores": ";".join(f"{s:.4f}" for s in scores), "n_withheld": withheld,
            "n_error": errors, "seconds": round(seconds, 2),
            "sec_per_fit": round(seconds / max(n_splits, 1), 3), "error": first_error}


TIMING = str(ROOT / "benchmarks" / "results" / "corpus_{kind}_before.csv")


@lru_cache(maxsize=1)
def _timings() -> dict:
    """Seconds per fit of each (task, config) in the committed baseline run, if present."""
    out = {}
    for kind in SPLITS:
        path = Path(TIMING.replace("{kind}", kind))
        if path.exists():
            frame = pd.read_csv(path, usecols=["task", "config", "sec_per_fit"])
            out.update({(t, c): s for t, c, s in frame.itertuples(index=False)})
    return out


def _cost_guess(name: str, config: str, n_splits: int) -> float:
    """Expected seconds of a unit: the baseline run's time per fit where known, else a rough
    model in n x p (for ordering the units and the printed estimate)."""
    if (name, config) in _timings():
        return float(_timings()[(name, config)]) * n_splits
    df = _frame(name)
    work = len(df) * (p_design(df) + 1)
    per_fit = 0.3 + 4e-6 * work * (3.0 if config in ("dpgd", "fw") else 1.0)
    return per_fit * n_splits


def _init_worker(nice: int) -> None:
    if nice and hasattr(os, "nice"):
        os.nice(nice)


def _write(rows: list[dict], out: str, kind: str) -> Path:
    path = Path(out.replace("{kind}", kind))
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame([r for r in rows if r["kind"] == kind], columns=COLUMNS)
    order = {t.name: i for i, t in enumerate(T.TASKS)}
    frame = frame.sort_values(["task", "config"], key=lambda s: s.map(order) if s.name == "task"
                              else s)
    frame.to_csv(path, index=False)
    return path


def _previous(out: str, kinds: list[str]) -> list[dict]:
    rows = []
    for kind in kinds:
        path = Path(out.replace("{kind}", kind))
        if path.exists():
            rows += pd.read_csv(path, keep_default_na=False,
                                na_values=[""]).to_dict("records")
    return rows


def plan(args) -> list[tuple[str, str, int]]:
    kinds = [args.kind] if args.kind else ["regression", "classification"]
    patterns = FAST_TASKS if args.fast and not args.tasks else args.tasks
    units = []
    for task in T.by_name(patterns):
        if task.kind not in kinds:
            continue
        names = list(configs_for(task.kind))
        if args.configs:
            names = [c for c in names if c in args.configs]
        n_splits = args.splits or (1 if args.fast else SPLITS[task.kind])
        units += [(task.name, c, n_splits) for c in names]
    return units


def run(args) -> list[dict]:
    units = plan(args)
    kinds = sorted({T.by_name([u[0]])[0].kind for u in units})
    done = _previous(args.out, kinds) if args.resume else []
    have = {(r["task"], r["config"]) for r in done}
    units = [u for u in units if (u[0], u[1]) not in have]
    guesses = {u: _cost_guess(*u) for u in units}
    units.sort(key=lambda u: -guesses[u])  # longest first: better balance across workers
    total = sum(guesses.values())
    n_fits = sum(u[2] for u in units)
    known = sum((u[0], u[1]) in _timings() for u in units)
    print(f"{len(units)} units ({n_fits} fits) on {args.jobs} job(s); expected run time "
          f"{total / args.jobs / 60:.1f} min ({known} units timed by the baseline run, the "
          "rest by a rough n x p model; refined as units finish)", flush=True)
    rows, start, spent_guess = list(done), time.perf_counter(), 0.0
    header = f"{'#':>9} {'task':38s} {'config':14s} {'n':>7} {'p':>4} {'score':>8} " \
             f"{'withheld':>8} {'err':>3} {'sec':>7} {'ETA':>7}"
    print(header, flush=True)
    if args.jobs > 1:
        from multiprocessing import get_context

        pool = get_context("fork").Pool(args.jobs, initializer=_init_worker,
                                        initargs=(args.nice,))
        results = pool.imap_unordered(run_unit, units)
    else:
        _init_worker(args.nice)
        pool, results = None, map(run_unit, units)
    try:
        for i, row in enumerate(results, 1):
            rows.append(row)
            spent_guess += guesses[(row["task"], row["config"], row["n_splits"])]
            elapsed = time.perf_counter() - start
            eta = elapsed * (total - spent_guess) / max(spent_guess, 1e-9)
            print(f"{i:4d}/{len(units):<4d} {row['task']:38s} {row['config']:14s} "
                  f"{row['n']:7d} {row['p_design']:4d} {row['score']:8.3f} "
                  f"{row['n_withheld']:4d}/{row['n_splits']:<3d} {row['n_error']:3d} "
                  f"{row['seconds']:7.1f} {eta / 60:6.1f}m", flush=True)
            for kind in kinds:
                _write(rows, args.out, kind)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    print(f"done in {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="*", help="package/item names or globs")
    ap.add_argument("--kind", choices=["regression", "classification"])
    ap.add_argument("--splits", type=int, help="splits per task (default 10 / 5)")
    ap.add_argument("--configs", type=lambda s: s.split(","), help="comma-separated names")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes across units")
    ap.add_argument("--nice", type=int, default=0, help="os.nice increment of the workers")
    ap.add_argument("--fast", action="store_true", help="two small tasks, one split (CI)")
    ap.add_argument("--resume", action="store_true", help="keep rows already in --out")
    ap.add_argument("--out", default=DEFAULT_OUT, help="CSV path; {kind} is substituted")
    ap.add_argument("--summary", nargs="+", metavar="CSV", help="print the targets and exit")
    args = ap.parse_args(argv)
    if args.summary:
        for path in args.summary:
            summ.print_summary(pd.read_csv(path, keep_default_na=False, na_values=[""]), path)
        return 0
    rows = run(args)
    for kind in sorted({r["kind"] for r in rows}):
        frame = pd.DataFrame([r for r in rows if r["kind"] == kind])
        print(f"\n{kind}: median test score per task x config")
        table = frame.pivot(index="task", columns="config", values="score")
        print(table.round(3).to_string())
        summ.print_summary(frame, _write(rows, args.out, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
