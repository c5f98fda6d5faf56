"""``warmup()``: compile every numba kernel ahead of time (``python -m dpstats warmup``).

numba caches compiled kernels on disk (``cache=True``), so only the first fit after installing
(or after the cache is cleared) pays for compiling: about 20 s for the default fit and a few
seconds more for each other method or selector. ``warmup`` pays it all at once, at a time of the
user's choosing: it runs every method of ``dp_lm`` and ``dp_glm`` and every selector once on a
small synthetic data set (the kernels are compiled for the same argument types a real fit
uses), then the kernels only large inputs reach, and prints the time of each step. The fits
draw from the OS generator as an unseeded fit does (its row shuffle is a kernel too); their
results are discarded, and they read no user data.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import numpy as np
import pandas as pd

from .glm import dp_glm
from .lm import dp_lm

__all__ = ["warmup", "STEPS"]

#: ``(label, kind, options)``: the fits that compile every kernel a fit can call.
STEPS = (
    ("dp_lm method='tukey'", "lm", {"method": "tukey"}),
    ("dp_lm method='adassp'", "lm", {"method": "adassp"}),
    ("dp_lm method='bas'", "lm", {"method": "bas"}),
    ("dp_lm method='fw'", "lm", {"method": "fw"}),
    ("dp_lm method='dpgd'", "lm", {"method": "dpgd"}),
    ("select='kendall'", "lm", {"select": "kendall"}),
    ("select='sublasso'", "lm", {"select": "sublasso"}),
    ("select='sis'", "lm", {"select": "sis"}),
    ("dp_glm method='fw'", "glm", {"method": "fw"}),
    ("dp_glm method='dpgd'", "glm", {"method": "dpgd"}),
    ("dp_glm method='tukey'", "glm", {"method": "tukey"}),
    ("dp_glm method='outpert'", "glm", {"method": "outpert"}),
    ("dp_glm method='objpert'", "glm", {"method": "objpert"}),
    ("dp_glm method='auto'", "glm", {"method": "auto"}),
    ("dp_lm defaults (select='auto')", "lm", {"select": "auto"}),
    ("kernels for large inputs", "large", {}),
)


def synthetic(n: int = 4000, p: int = 8) -> pd.DataFrame:
    """A small deterministic data set (no generator: sines of incommensurate frequencies):
    ``p`` numeric predictors, a numeric ``y`` and a 0/1 ``z``."""
    i = np.arange(n, dtype=np.float64)[:, None]
    freq = np.sqrt(np.arange(2, p + 2, dtype=np.float64))
    X = np.sin(i * freq + np.arange(p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = df["x0"] - 0.5 * df["x1"] + np.sin(i[:, 0] * np.sqrt(101.0))
    df["z"] = (df["y"] > 0).astype(int)
    return df


def warmup(out=None) -> float:
    """Compile every kernel (a no-op, in well under a second per step, when the cache is warm)
    and print one line per step to ``out`` (default stdout); returns the total seconds."""
    out = sys.stdout if out is None else out
    data = synthetic()
    lm_data, glm_data = data.drop(columns="z"), data.drop(columns="y")
    start = time.perf_counter()
    with _quiet_kernels():   # the steps report the compiling: no "compiling ..." notice too
        for i, (label, kind, options) in enumerate(STEPS, 1):
            _step(i, label, kind, options, lm_data, glm_data, out)
    total = time.perf_counter() - start
    print(f"warmup: every kernel compiled and cached in {total:.1f} s", file=out, flush=True)
    return total


def _step(i, label, kind, options, lm_data, glm_data, out) -> None:
    """Run one step of :data:`STEPS` and print its time."""
    print(f"[{i:2d}/{len(STEPS)}] {label} ...", end=" ", file=out, flush=True)
    t0 = time.perf_counter()
    opts = {"select": None, **options}
    if kind == "lm":
        dp_lm("y ~ .", lm_data, eps=2.0, **opts)
    elif kind == "glm":
        dp_glm("z ~ .", glm_data, eps=2.0, **opts)
    else:
        _large_inputs()
    print(f"{time.perf_counter() - t0:.1f} s", file=out, flush=True)


@contextlib.contextmanager
def _quiet_kernels():
    before = os.environ.get("DPSTATS_QUIET")
    os.environ["DPSTATS_QUIET"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["DPSTATS_QUIET"]
        else:
            os.environ["DPSTATS_QUIET"] = before


def _large_inputs() -> None:
    """The kernel variants a fit only calls on inputs of ``2**18`` entries or more."""
    from .._kernels.frank_wolfe import loss_gradient
    n = 1 << 17
    loss_gradient(np.zeros((2, n)), np.zeros(n), np.zeros(n), "squared")
