"""A single-threaded OpenBLAS while a parallel numba kernel calls LAPACK on small matrices.

numba's ``np.linalg`` calls LAPACK through SciPy's OpenBLAS. Inside a ``prange`` over thousands
of groups, every 50 x 50 SVD then wakes OpenBLAS's own thread pool: on two busy cores this was
measured at 30 s of CPU time instead of 1.3 s for the same 2,000 SVDs (and it grows with the
core count). :func:`single_threaded_blas` sets every OpenBLAS loaded in the process to one
thread for the duration of a call and restores the previous counts. It finds the libraries in
``/proc/self/maps`` (Linux); elsewhere, or for another BLAS, it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os

__all__ = ["single_threaded_blas"]

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
