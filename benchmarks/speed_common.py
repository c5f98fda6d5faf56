"""Shared helpers of the speed benchmarks: timing, peak memory, stage timing, data, output.

Imported by speed_synthetic.py, speed_real.py and highdim_speed.py (not a benchmark itself).
The scripts import dpstats from the checkout they live in (this file puts it first on
``sys.path``), so a worktree measures its own code.

* :func:`timed` runs a call ``repeats`` times and keeps the fastest wall time (with its CPU
  time, all threads) and the peak extra resident memory of the calls.
* :func:`peak_extra_mb` resets the kernel's high-water mark (``/proc/self/clear_refs``) and reports
  how far the resident set rose above where it started: numpy, numba and BLAS allocations all
  count (tracemalloc misses numba's). Off Linux it falls back to ``ru_maxrss`` growth.
* :func:`stage_times` patches the functions ``dp_lm`` calls for one run and reports the wall
  time spent in each stage.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results"
SHARED = ROOT.parent / "shared" / "data"
if not SHARED.exists():                      # a worktree one level deeper than the main checkout
    SHARED = ROOT.parents[1] / "shared" / "data"

#: The data-generating coefficients of the synthetic sets (the first five columns matter).
BETA = np.array([3.0, -2.0, 1.5, 1.0, -0.5])


def synthetic_frame(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    """``y = X[:, :5] @ BETA + N(0, 1)`` with ``d`` standard-normal columns ``x0..``; float64."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X[:, :min(5, d)] @ BETA[:min(5, d)] + rng.standard_normal(n)
    cols = {f"x{j}": X[:, j] for j in range(d)}   # one block per column, as read_csv gives
    cols["y"] = y
    return pd.DataFrame(cols, copy=True)


def patsy_formula(label: str, columns) -> str:
    """``label ~ a + Q('b c') + ...`` for ``statsmodels.formula.api.ols`` (patsy has no ``.``)."""
    def term(c):
        return c if c.isidentifier() else f"Q('{c}')"
    return f"{term(label)} ~ " + " + ".join(term(c) for c in columns if c != label)


def checkout_frame(root: str, n: int, d: int):
    """In a fresh worker process: put checkout ``root`` first on ``sys.path``, import its
    dpstats (asserted to be that checkout's) and return ``(dpstats, frame, patsy formula)`` of
    the synthetic ``n`` x ``d`` data (warnings silenced)."""
    sys.path.insert(0, root)
    import warnings

    import dpstats as dp
    assert Path(dp.__file__).resolve().is_relative_to(Path(root).resolve()), dp.__file__
    warnings.simplefilter("ignore")
    df = synthetic_frame(n, d)
    return dp, df, patsy_formula("y", [c for c in df.columns if c != "y"])


def run_checkout(script: str, root: str, n: int, d: int, repeats: int) -> dict:
    """Run ``script --worker ROOT --n --d --repeats`` (an A/B script's worker, timing checkout
    ``root``) in a fresh quiet interpreter; its last ``{``-line of stdout is the JSON result."""
    cmd = [sys.executable, script, "--worker", root, "--n", str(n), "--d", str(d),
           "--repeats", str(repeats)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                         env={**os.environ, "DPSTATS_QUIET": "1"})
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError((out.stderr.strip().splitlines() or ["no output"])[-1])
    return json.loads(lines[-1])


def _trim_heap() -> None:
    """Hand freed heap memory back to the OS (glibc), so a peak is measured from a low base."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


@contextlib.contextmanager
def peak_extra_mb(out: dict, key: str = "peak_mb"):
    """Record in ``out[key]`` the peak resident memory (MB) above the start of the block."""
    _trim_heap()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")                    # reset VmHWM to the current RSS
        start, hwm = _status_kb("VmRSS"), "VmHWM"
    except OSError:
        start, hwm = None, None
    before_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        yield out
    finally:
        if start is not None and hwm is not None:
            out[key] = max(_status_kb(hwm) - start, 0) / 1024.0
        else:                                # pragma: no cover - not Linux
            now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            out[key] = max(now - before_max, 0) / 1024.0


def wrap_timed(real, stage: dict):
    """``real`` wrapped so that each call adds its wall and CPU seconds to ``stage["wall"]``
    and ``stage["cpu"]`` (a stage's own time inside a fit)."""
    def timed_call(*args, **kw):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kw)
        finally:
            stage["wall"] += time.perf_counter() - t0
            stage["cpu"] += time.process_time() - c0
    return timed_call


def timed(fn, repeats: int = 3, warmup: bool = False) -> dict:
    """Fastest of ``repeats`` calls: ``seconds`` (wall), ``cpu_seconds``, ``result``; and
    ``peak_mb``, the largest peak of them."""
    if warmup:
        fn()
    best = {"seconds": float("inf")}
    peak = 0.0
    for _ in range(repeats):
        rec: dict = {}
        with peak_extra_mb(rec):
            c0, t0 = time.process_time(), time.perf_counter()
            result = fn()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = max(peak, rec["peak_mb"])
        if wall < best["seconds"]:
            best = {"seconds": wall, "cpu_seconds": cpu, "result": result}
    best["peak_mb"] = peak
    return best


def best_seconds(fn, repeats: int = 3) -> float:
    """Fastest wall time of ``repeats`` calls after a warm-up call (kernels compiled)."""
    return timed(fn, repeats, warmup=True)["seconds"]


def ols_baseline(df: pd.DataFrame, label: str = "y", repeats: int = 3) -> float:
    """statsmodels OLS of ``label`` on every other column: fastest of ``repeats`` warm calls."""
    import statsmodels.formula.api as smf
    formula = patsy_formula(label, df.columns)
    return best_seconds(lambda: smf.ols(formula, df).fit(), repeats)


@contextlib.contextmanager
def stage_times(out: dict, cpu: dict | None = None):
    """Accumulate into ``out`` the wall seconds of each stage of ``dp_lm`` (patched calls), and
    into ``cpu`` (when given) their CPU seconds (all threads of the process)."""
    import dpstats._kernels.kendall_ranks as kr
    import dpstats._kernels.lasso as lasso
    import dpstats.estimators.tukey.linear as tukey
    import dpstats.pipeline.budget as budget
    import dpstats.pipeline.estimate as estimate
    import dpstats.pipeline.levels as levels
    import dpstats.pipeline.select as select
    targets = [(levels, "build_design", "design"), (budget, "private_count", "private n"),
               (select, "run_selection", "selection"), (estimate, "choose_m", "choose m"),
               (kr, "permuted_ranks", "  kendall: ranks"),
               (kr, "discordant_ranked", "  kendall: discordant pairs"),
               (lasso, "lasso_topk_support", "  sublasso: group Lasso paths"),
               (tukey, "private_centre", "tukey: private centre"),
               (tukey, "fit_models", "tukey: partition + group OLS"),
               (tukey, "group_fits", "tukey: group OLS"),
               (tukey, "jitter_sort", "tukey: jitter + sort"),
               (tukey, "log_depth_volumes", "tukey: depth volumes"),
               (tukey, "ptr_check", "tukey: PTR"),
               (tukey, "restricted_tukey_em", "tukey: exponential mechanism"),
               (tukey, "_with_inference", "tukey: inference (standard errors)")]
    saved = []

    def wrap(fn, label):
        def inner(*a, **kw):
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                out[label] = out.get(label, 0.0) + time.perf_counter() - t0
                if cpu is not None:
                    cpu[label] = cpu.get(label, 0.0) + time.process_time() - c0
        return inner

    for mod, name, label in targets:
        saved.append((mod, name, getattr(mod, name)))
        setattr(mod, name, wrap(getattr(mod, name), label))
    try:
        yield out
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def run_worker(script: Path, args: list[str], timeout: float) -> list[dict]:
    """Run ``script --worker ...`` in a fresh interpreter; its last stdout line is JSON rows."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        out = subprocess.run([sys.executable, str(script), "--worker", *args], env=env,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return [{"error": f"timed out after {timeout:.0f} s"}]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("[")]
    if out.returncode != 0 or not lines:
        return [{"error": (out.stderr.strip().splitlines() or ["no output"])[-1][:200]}]
    return json.loads(lines[-1])


def available_mb() -> float:
    """MemAvailable from /proc/meminfo (inf when unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("inf")


def load_note() -> str:
    """The 1-minute load average and core count, to print beside the timings."""
    try:
        load = os.getloadavg()[0]
    except OSError:                          # pragma: no cover
        return ""
    return f"load average {load:.1f} on {os.cpu_count()} cores"


def save(table: pd.DataFrame, name: str, round_to: int = 3) -> Path:
    """Write ``benchmarks/results/<name>.csv`` and print the table."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.csv"
    table.to_csv(path, index=False)
    with pd.option_context("display.width", 220, "display.max_columns", 40,
                           "display.max_rows", 500):
        print(table.round(round_to).to_string(index=False))
    print(f"\nwrote {path.relative_to(ROOT)}")
    return path
