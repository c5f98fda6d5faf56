"""Runtime helpers of the numba kernels: thread control and cheap finiteness checks.

* :func:`single_threaded_blas`: numba's ``np.linalg`` calls LAPACK through SciPy's OpenBLAS.
  Inside a ``prange`` over thousands of groups, every 50 x 50 SVD then wakes OpenBLAS's own
  thread pool: on two busy cores this was measured at 30 s of CPU time instead of 1.3 s for the
  same 2,000 SVDs (and it grows with the core count). It sets every OpenBLAS loaded in the
  process to one thread for the duration of a call and restores the previous counts. It finds
  the libraries in ``/proc/self/maps`` (Linux); elsewhere, or for another BLAS, it does nothing.
* :func:`kernel_threads`: a parallel kernel on a small input spends more time starting and
  waiting for its threads than working (group OLS on 8,192 rows: 22 ms on two threads, 8 ms on
  one, measured on the shared two-core machine). Below :data:`PARALLEL_MIN_WORK` entries the
  kernel runs on the calling thread only (``numba.set_num_threads`` is per calling thread).
* :func:`all_finite`: finite-value checks of large arrays without an array-sized boolean
  temporary.
* :func:`run_chunks` and :func:`one_signature`: serial kernels run on threads over ranges, and
  one compiled signature per kernel (each ``parallel=True`` twin or extra layout cost seconds
  of compiling on a cold cache).
* :func:`watch_compiles` and :func:`compile_stats`: each kernel module calls
  :func:`watch_compiles` when imported; it counts numba's ``"numba:compile"`` events (fired only
  for a real compile, not a cache load) of dpstats kernels, for the tests. The compile notice
  itself is :mod:`dpstats._kernels.prepare`: it is decided from the request and the cache
  state, not from these events (which would follow the data's code path). ``DPSTATS_QUIET=1``
  (:func:`quiet`) silences it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["single_threaded_blas", "kernel_threads", "run_chunks", "one_signature",
           "PARALLEL_MIN_WORK", "all_finite", "watch_compiles", "compile_stats", "quiet"]

#: Inputs with fewer entries (rows x columns) than this run a parallel kernel on one thread.
PARALLEL_MIN_WORK = 1 << 18

_PREFIXES = ("", "scipy_")
_SUFFIXES = ("", "64_")


def _controls_of(path: str) -> list[tuple[object, object]]:
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, AttributeError):
        return []
    found = []
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                found.append((get, put))
    return found


@functools.lru_cache(maxsize=1)
def _openblas_controls() -> tuple[tuple[object, object], ...]:
    """``(get_num_threads, set_num_threads)`` of every OpenBLAS loaded (after SciPy's LAPACK)."""
    try:
        import scipy.linalg.cython_lapack  # noqa: F401  (the LAPACK numba calls)
        with open("/proc/self/maps") as fh:
            fields = [line.split() for line in fh]
    except (OSError, ImportError):
        return ()
    paths = sorted({f[5] for f in fields if len(f) >= 6 and f[5].startswith("/")
                    and "openblas" in os.path.basename(f[5]).lower() and ".so" in f[5]})
    return tuple(c for path in paths for c in _controls_of(path))


@contextlib.contextmanager
def single_threaded_blas():
    """Context manager: OpenBLAS runs on one thread inside, as it did before outside.

    >>> with single_threaded_blas():
    ...     pass
    """
    controls = _openblas_controls()
    before = []
    for get, put in controls:
        try:
            before.append((put, int(get())))
            put(1)
        except (OSError, ValueError):  # pragma: no cover - a library without the control
            continue
    try:
        yield
    finally:
        for put, count in before:
            put(count)


@contextlib.contextmanager
def kernel_threads(work: int):
    """Context manager: numba kernels called inside use one thread when ``work`` (entries of
    the input) is below :data:`PARALLEL_MIN_WORK`, all configured threads otherwise.

    >>> with kernel_threads(10):
    ...     import numba
    ...     numba.get_num_threads()
    1
    """
    if work >= PARALLEL_MIN_WORK:
        yield
        return
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def run_chunks(kernel, count: int, work: int, *args) -> None:
    """Call ``kernel(*args, lo, hi)`` over ``[0, count)``, split into one contiguous range per
    thread (as a static ``prange`` would); one range on the calling thread when ``work`` is
    below :data:`PARALLEL_MIN_WORK` or numba is set to one thread.

    The kernel is a serial ``@njit(nogil=True)`` function writing disjoint outputs per index:
    it compiles once, with no parallel twin (a ``parallel=True`` loop costs seconds more to
    compile), and Python threads run its ranges concurrently because it releases the GIL.

    >>> seen = []
    >>> run_chunks(lambda out, lo, hi: out.append((lo, hi)), 10, 0, seen)
    >>> seen
    [(0, 10)]
    """
    import numba
    threads = min(count, numba.get_num_threads()) if work >= PARALLEL_MIN_WORK else 1
    if threads <= 1:
        kernel(*args, 0, count)
        return
    bounds = [count * t // threads for t in range(threads + 1)]
    pool = _pool(threads - 1)
    futures = [pool.submit(kernel, *args, bounds[t], bounds[t + 1]) for t in range(1, threads)]
    try:
        kernel(*args, bounds[0], bounds[1])
    finally:
        for future in futures:
            future.result()


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool kept for the process (a kernel called every iteration, as Frank-Wolfe's
    gradient is, would otherwise start threads on every call)."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpstats-kernel")


def one_signature(dispatcher, signature: str) -> None:
    """Compile (or load from the cache) ``dispatcher`` for ``signature`` at its first use, and
    no other variant afterwards (arguments of other layouts convert to it): one compile
    instead of one per layout, and none at import time."""
    if not dispatcher.signatures:
        dispatcher.compile(signature)
        dispatcher.disable_compile()


def all_finite(a) -> bool:
    """Whether every entry of ``a`` is finite.

    A sum of finite numbers is finite unless it overflows, and a NaN or infinity anywhere makes
    it non-finite; so one reduction settles the common case and the elementwise check runs
    only when the sum is not finite.

    >>> all_finite(np.array([[1.0, 2.0], [3.0, 4.0]])), all_finite([1.0, np.nan])
    (True, False)
    >>> all_finite([1e308, 1e308])        # the sum overflows; the values are finite
    True
    """
    a = np.asarray(a)
    with np.errstate(over="ignore", invalid="ignore"):
        if a.size == 0 or np.isfinite(a.sum()):
            return True
    return bool(np.isfinite(a).all())



class _CompileWatch:
    """Counts the seconds numba spends compiling dpstats kernels (outermost compiles only)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.installed = False
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0      # total compile time of dpstats kernels in this process
        self.count = 0          # outermost compiles of dpstats kernels in this process

    def on_start(self, event) -> None:
        if _is_ours(event):
            self.depth += 1
            if self.depth == 1:
                self.started = time.perf_counter()

    def on_end(self, event) -> None:
        if _is_ours(event):
            self.depth -= 1
            if self.depth == 0:
                self.seconds += time.perf_counter() - self.started
                self.count += 1


_WATCH = _CompileWatch()


def _is_ours(event) -> bool:
    data = getattr(event, "data", None) or {}
    func = getattr(data.get("dispatcher"), "py_func", None)
    return str(getattr(func, "__module__", "")).startswith("dpstats.")


def quiet() -> bool:
    """Whether ``DPSTATS_QUIET`` silences the compile messages (any value but "", "0")."""
    return os.environ.get("DPSTATS_QUIET", "") not in ("", "0")


def watch_compiles() -> None:
    """Listen to numba's compile events (idempotent; imports numba, so kernel modules call it)."""
    with _WATCH.lock:
        if _WATCH.installed:
            return
        from numba.core import event

        class _Listener(event.Listener):
            def on_start(self, ev):
                _WATCH.on_start(ev)

            def on_end(self, ev):
                _WATCH.on_end(ev)

        event.register("numba:compile", _Listener())
        _WATCH.installed = True


def compile_stats() -> tuple[int, float]:
    """``(compiles, seconds)``: outermost compiles of dpstats kernels so far in this process
    (numba's ``"numba:compile"`` event fires only for a real compile, not a cache load)."""
    return _WATCH.count, _WATCH.seconds
