"""``warmup()``: compile every numba kernel ahead of time (``python -m dpstats warmup``).

numba caches compiled kernels on disk (``cache=True``), so only the first fit that may use a
kernel after installing (or after the cache is cleared) pays for compiling it, and says so on
stderr (:mod:`dpstats._kernels.prepare`). ``warmup`` pays for every unit at once, at a time of
the user's choosing, with one line per unit: each unit compiles on tiny synthetic inputs of the
argument types a fit passes (the fits then compile nothing; the tests check it per method and
selector). It reads no user data and draws no randomness.

It cannot run at install time: a wheel is unpacked by pip/uv without running package code (no
post-install hook), and the cache is specific to the machine's CPU and numba version, so a
compiled cache cannot ship inside the wheel either.
"""

from __future__ import annotations

import sys
import time

from .._kernels.prepare import UNITS, missing_units, prepare

__all__ = ["warmup", "STEPS"]

#: The units compiled, in order (every kernel a fit can call).
STEPS = tuple(UNITS)


def warmup(out=None) -> float:
    """Compile every kernel unit missing from the cache (a no-op when the cache is warm) and
    print one line per unit to ``out`` (default stdout); returns the total seconds.

    Examples
    --------
    >>> import io
    >>> from dpstats._kernels.prepare import missing_units
    >>> buf = io.StringIO()
    >>> _ = warmup(buf)
    >>> missing_units(STEPS)
    ()
    """
    out = sys.stdout if out is None else out
    start = time.perf_counter()
    todo = missing_units(STEPS)
    cached = [name for name in STEPS if name not in todo]
    if cached:
        print(f"warmup: already cached: {', '.join(UNITS[n].label for n in cached)}", file=out,
              flush=True)

    def say(line: str, end: str = "\n") -> None:
        line = line.replace("dpstats:   ", "").replace("dpstats: ", "warmup: ")
        print(line, end=end, file=out, flush=True)

    prepare(todo, say=say)
    total = time.perf_counter() - start
    print(f"warmup: every kernel compiled and cached ({total:.1f} s)", file=out, flush=True)
    return total
