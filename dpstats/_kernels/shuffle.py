"""Fisher-Yates shuffle from given swap positions (numba), with a plain-Python reference.

Pure and deterministic: the caller draws the swap positions (``j[k]`` uniform on ``0..n-1-k``)
and this kernel only applies them, so the permutation is uniform exactly when the positions are.
Used by :meth:`dpstats.mechanisms.rng.SecureGenerator.permutation`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .runtime import watch_compiles

__all__ = ["fisher_yates", "fisher_yates_reference"]


@njit(cache=True)
def fisher_yates(j: np.ndarray) -> np.ndarray:
    """Permutation of ``range(len(j) + 1)``: for ``i = n-1 .. 1`` swap ``a[i]`` and ``a[j[n-1-i]]``.

    ``j[k]`` must lie in ``0..n-1-k`` (``k = n-1-i``).
    """
    n = j.shape[0] + 1
    a = np.arange(n)
    for k in range(n - 1):
        i = n - 1 - k
        t = a[i]
        a[i] = a[j[k]]
        a[j[k]] = t
    return a


def fisher_yates_reference(j) -> np.ndarray:
    """Plain-Python version of :func:`fisher_yates` (for the tests)."""
    n = len(j) + 1
    a = list(range(n))
    for k in range(n - 1):
        i = n - 1 - k
        a[i], a[int(j[k])] = a[int(j[k])], a[i]
    return np.array(a, dtype=np.int64)


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
