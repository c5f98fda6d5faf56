"""Sums over rows whose floating-point error does not grow with the square of the row count.

A mechanism's sensitivity bounds how much one row moves an exact sum. A float sum over ``n``
rows added one after another can move by more: each addition rounds, and removing one row
changes what every later addition rounds (Casacuberta, Shoemate, Vadhan and Wagaman, CCS
2022). For any order of adding ``m`` terms the error is at most ``gamma_(m-1) sum |x_i|``
(``gamma_m = m u / (1 - m u)``, ``u = 2^-53``; Higham, *Accuracy and Stability of Numerical
Algorithms*, ch. 4), so a sum over all rows in BLAS's or a loop's order is only bounded by
about ``n u`` times ``n`` rows' worth, a relative excess of the sensitivity of ``2 n^2 u``
(0.2 at 1e6 rows).

:func:`tdot` computes ``A.T @ B`` over blocks of at most :data:`ROWS` rows (BLAS within a
block, whatever its order: at most ``ROWS`` additions deep) and adds the blocks' results with
Neumaier's compensated summation (error at most ``2 u |sum| + O(blocks u^2) sum |x|``). Its
result is within ``(ROWS + 5) u sum |x|`` of the exact sum of the terms (two more roundings
in forming a term allowed), so two neighbouring data sets'
computed sums differ by at most the sensitivity times ``1 + 2 (ROWS + 5) u n``: 1 + 9e-7 at
1e6 rows, 1 + 9e-5 at 1e8 (``benchmarks/float_summation.py`` measures it).
Deterministic; no randomness, no privacy logic.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROWS", "tdot", "compensated_add", "excess"]

#: Rows per block of :func:`tdot` (BLAS stays efficient at a few thousand rows).
ROWS = 4096
U = 2.0 ** -53


def compensated_add(s: np.ndarray, c: np.ndarray, a) -> None:
    """Neumaier's step, in place and elementwise: ``s + c`` becomes the sum with ``a`` added,
    ``c`` collecting what each addition rounded away.

    >>> s, c = np.array([1e16]), np.zeros(1)
    >>> for _ in range(4):
    ...     compensated_add(s, c, np.array([1.0]))
    >>> float(s[0] + c[0]) - 1e16
    4.0
    """
    a = np.asarray(a, dtype=np.float64)
    t = s + a
    big = np.abs(s) >= np.abs(a)
    c += np.where(big, (s - t) + a, (a - t) + s)
    s[...] = t


def tdot(A: np.ndarray, B: np.ndarray, rows: int = ROWS) -> np.ndarray:
    """``A.T @ B`` summed over blocks of ``rows`` rows, the blocks added with compensation
    (see the module docstring); ``B`` a matrix or a vector with ``A``'s rows. Up to ``rows``
    rows it is ``A.T @ B`` itself, bit for bit.

    >>> A = np.arange(12.0).reshape(6, 2)
    >>> bool(np.array_equal(tdot(A, A, rows=4), A.T @ A))
    True
    """
    n = A.shape[0]
    if n <= rows:
        return A.T @ B
    s = np.array(A[:rows].T @ B[:rows], dtype=np.float64)
    c = np.zeros_like(s)
    for a in range(rows, n, rows):
        compensated_add(s, c, A[a:a + rows].T @ B[a:a + rows])
    return s + c


def excess(n: float, rows: int = ROWS) -> float:
    """``2 (rows + 5) u n``: the worst-case relative excess over the sensitivity of a sum over
    ``n`` rows computed by :func:`tdot` (module docstring).

    >>> f"{excess(1e6):.1e}", f"{excess(1e8):.1e}"
    ('9.1e-07', '9.1e-05')
    """
    return 2.0 * (min(float(n), float(rows)) + 5.0) * U * float(n)
