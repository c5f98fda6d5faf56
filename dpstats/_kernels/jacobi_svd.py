"""One-sided Jacobi SVD for small matrices, in plain numba loops (no LAPACK call).

The Tukey mechanism fits tens of thousands of tiny least-squares problems (a few dozen rows,
k + 1 columns). Calling LAPACK for each costs more in call overhead (and, with a threaded BLAS,
in waking BLAS threads for a 20 x 6 matrix) than the arithmetic itself. Hestenes' one-sided
Jacobi method orthogonalises the columns of ``A`` by plane rotations, ``A V = U diag(s)``; it is
simple, needs no workspace beyond ``V`` and computes small singular values to high relative
accuracy (Demmel & Veselic 1992), so rank decisions match an SVD's.

:func:`jacobi_svd_reference` checks it against :func:`numpy.linalg.svd` in the tests.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .runtime import watch_compiles

__all__ = ["householder_qr", "jacobi_svd", "jacobi_svd_reference"]

#: Rotate a pair of columns while ``|a_i . a_j| > _TOL * ||a_i|| ||a_j||``.
_TOL = 1e-15
#: Sweeps after which the iteration stops regardless (convergence is quadratic: 6-10 suffice).
_MAX_SWEEPS = 60


@njit(cache=True, boundscheck=False)
def householder_qr(A, y):
    """Reduce ``A`` (n x p) to ``R`` by Householder reflections, applying them to ``y`` too.

    On return the leading ``min(n, p)`` rows of ``A`` hold ``R`` (zeros below the diagonal) and
    ``y`` holds ``Q^T y``; returns ``min(n, p)``. ``A = Q R`` with ``Q`` orthogonal, so ``R`` has
    the singular values and right singular vectors of ``A``.

    Row by row: each reflection's dot products with the later columns (and ``y``) are summed
    side by side in one pass over the rows, and applied in a second pass that also sums the next
    column's norm. Every sum runs over the rows in ascending order, as one column at a time
    would, so the result is the same to the bit (``tests/kernels/test_kernels_jacobi.py``
    compares it with the column-by-column loops), at a fraction of the time on a C-ordered
    ``A``: contiguous inner loops and independent sums instead of one chain per column.
    """
    n, p = A.shape
    rows = min(n, p)
    f = np.empty(p)
    nrm_next = 0.0
    have_next = False            # nrm_next holds column k's squared norm from rows k..n-1
    for k in range(rows):
        if have_next:
            nrm = nrm_next
        else:
            nrm = 0.0
            for r in range(k, n):
                nrm += A[r, k] * A[r, k]
        have_next = False
        nrm = math.sqrt(nrm)
        if nrm == 0.0:
            continue
        alpha = -nrm if A[k, k] >= 0.0 else nrm
        A[k, k] -= alpha                       # v = x - alpha e_1 (stored in column k)
        vnorm2 = 0.0
        for j in range(k + 1, p):
            f[j] = 0.0
        fy = 0.0
        for r in range(k, n):                  # every dot with v, each in row order
            v = A[r, k]
            vnorm2 += v * v
            for j in range(k + 1, p):
                f[j] += v * A[r, j]
            fy += v * y[r]
        for j in range(k + 1, p):
            f[j] = 2.0 * f[j] / vnorm2
        fy = 2.0 * fy / vnorm2
        nxt = 0.0
        for r in range(k, n):                  # apply the reflection; the next column's norm
            v = A[r, k]
            for j in range(k + 1, p):
                A[r, j] -= f[j] * v
            y[r] -= fy * v
            if r > k and k + 1 < p:
                nxt += A[r, k + 1] * A[r, k + 1]
        nrm_next = nxt
        have_next = k + 1 < p
        A[k, k] = alpha
        for r in range(k + 1, n):
            A[r, k] = 0.0
    return rows


@njit(cache=True, boundscheck=False)
def jacobi_svd(A, V):
    """Overwrite ``A`` (n x p) by ``U diag(s)`` and ``V`` (p x p) by the right singular vectors.

    Returns ``s`` (p,), the column norms of the rotated ``A`` (unsorted); column ``i`` of ``A``
    divided by ``s[i]`` is the left singular vector of ``s[i]`` when ``s[i] > 0``.
    """
    n, p = A.shape
    for i in range(p):
        for j in range(p):
            V[i, j] = 1.0 if i == j else 0.0
    for _ in range(_MAX_SWEEPS):
        rotated = False
        for i in range(p - 1):
            for j in range(i + 1, p):
                alpha = 0.0
                beta = 0.0
                gamma = 0.0
                for r in range(n):
                    ai = A[r, i]
                    aj = A[r, j]
                    alpha += ai * ai
                    beta += aj * aj
                    gamma += ai * aj
                if gamma == 0.0 or abs(gamma) <= _TOL * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for r in range(n):
                    ai = A[r, i]
                    aj = A[r, j]
                    A[r, i] = c * ai - s * aj
                    A[r, j] = s * ai + c * aj
                for r in range(p):
                    vi = V[r, i]
                    vj = V[r, j]
                    V[r, i] = c * vi - s * vj
                    V[r, j] = s * vi + c * vj
        if not rotated:
            break
    sv = np.empty(p)
    for i in range(p):
        acc = 0.0
        for r in range(n):
            acc += A[r, i] * A[r, i]
        sv[i] = math.sqrt(acc)
    return sv


def jacobi_svd_reference(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Singular values (descending) and right singular vectors (columns) by numpy, for tests.

    >>> s, V = jacobi_svd_reference(np.diag([1.0, 3.0]))
    >>> s.tolist()
    [3.0, 1.0]
    """
    _, s, vt = np.linalg.svd(np.asarray(A, dtype=np.float64), full_matrices=False)
    return s, vt.T


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
