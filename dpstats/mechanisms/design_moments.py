"""Private first and second moments of clipped, scaled design columns (Laplace).

The Tukey intervals (:mod:`dpstats.estimators.inference.tukey`) need the *correlations* of the
group OLS models, which a per-coordinate spread cannot give. For OLS on groups of rows drawn
from the same population, ``Cov(b_g)`` is proportional to ``E[z z']^-1`` with ``z`` the row's
design vector (a constant and the centred columns), so correlations follow from the design's
moment matrix, which is cheap to release from the rows (``n eps`` in the thousands) where the
models themselves are not (``m eps`` ranks; a noisy sign Gram of the models would carry
correlation noise of order 1 at the default budget: docs/design-notes.md, "Tukey covariances").

:func:`design_moments` releases ``S1 = sum_i u_i`` and the upper triangle (diagonal included)
of ``S2 = sum_i u_i u_i'`` for rows ``u_i = clip((x_i - c) / s, -B, B)`` with public or
released ``c`` (centres), ``s`` (scales) and public ``B``.

**Neighbours and sensitivity.** Add/remove one row: the released vector changes by the row's
own ``(u, upper(u u'))``, whose L1 norm is at most ``k B + k (k + 1) / 2 * B^2`` for ``k``
columns (:func:`moments_sensitivity`). The Laplace mechanism with that L1 sensitivity is
eps-DP; ``c``, ``s`` and ``B`` must be released or public (adaptive composition).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._kernels.row_sums import GridMatrix
from .accountant import Ledger
from .additive import laplace

__all__ = ["design_moments", "clipped_sums", "moments_sensitivity", "MOMENT_BOUND"]

#: Clipping bound of the scaled columns ``(x - c) / s`` with ``s`` the median of ``|x - c|``:
#: 3 such units are 2 standard deviations of a Gaussian column.
MOMENT_BOUND = 3.0
#: From this many rows on, :func:`clipped_sums` sums its blocks on two threads.
THREADED_ROWS = 1 << 18
#: Rows per block of :func:`clipped_sums`.
_CHUNK = 1 << 15


def moments_sensitivity(k: int, bound: float = MOMENT_BOUND) -> float:
    """L1 sensitivity of ``(sum u, upper(sum u u'))`` for ``k`` columns clipped to ``[-B, B]``.

    >>> moments_sensitivity(2, 1.0)
    5.0
    """
    return float(k * bound + k * (k + 1) / 2 * bound ** 2)


def clipped_sums(X: np.ndarray, centre: np.ndarray, scale: np.ndarray, bound: float,
                 chunk: int = _CHUNK, cols=None, kernel: bool = False, weights=None,
                 weight_bound: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``(sum u, sum u u')`` of ``u = clip((X - centre) / scale, -bound, bound)``, in
    blocks of rows (cache-sized; no noise: the caller releases them); ``cols``: the columns of
    ``X`` used (default all; selected per block, so ``X`` is never copied whole). ``kernel``:
    each block's ``u`` by the numba kernel
    (:func:`dpstats._kernels.moments.clip_block`, into a reused buffer: the same bits; the
    caller decides from public sizes and has compiled it). ``weights``: one per row, clipped
    to ``[0, weight_bound]``, ``(sum w u, sum w u u')`` instead.

    The sums are exact on a fixed-point grid of the public bound
    (:mod:`dpstats._kernels.row_sums`: each block's rows quantised once,
    :class:`~dpstats._kernels.row_sums.GridMatrix`, and ``sum u`` and ``sum u u'`` both taken
    from those integers; weighted, from ``z = u sqrt(w)``: ``sum z z'`` and ``sum z sqrt(w)``;
    the blocks added as integers), so they are the same bits in any block order and on one
    thread or two, and one row moves them by exactly its own quantised terms, within the
    sensitivity. (``sum u`` on its own 2^30 grid, a second numba pass over the block, made
    the Tukey inference stage 31% of a 1e6 x 20 default fit; design note 88.)

    >>> S1, S2 = clipped_sums(np.array([[5.0], [-1.0]]), np.zeros(1), np.ones(1), 2.0, chunk=1)
    >>> S1.round(5).tolist(), S2.round(5).tolist()
    ([1.0], [[5.0]])
    """
    cols = np.arange(X.shape[1]) if cols is None else np.asarray(cols, dtype=np.intp)
    k = cols.size
    if weights is not None:          # the grid is set by public bounds, never by the data
        w_max = float(weight_bound)
        weights = np.clip(np.asarray(weights, dtype=np.float64), 0.0, w_max)
    inv = 1.0 / scale
    if kernel:
        import threading

        from .._kernels.moments import clip_block
        X = np.ascontiguousarray(X, dtype=np.float64)
        local = threading.local()

    def block(start: int) -> tuple[np.ndarray, np.ndarray]:
        if kernel:
            if not hasattr(local, "buf"):        # one buffer per thread
                local.buf = np.empty((chunk, k), order="F")   # as X[rows, cols] is
            stop = min(start + chunk, X.shape[0])
            U = clip_block(X, start, stop, cols, centre, inv, bound, local.buf)
        else:
            U = X[start:start + chunk, cols] - centre
            U *= inv
            np.clip(U, -bound, bound, out=U)
        if weights is None:          # exact sums on one grid of the bound (row_sums)
            grid = GridMatrix(U, bound, in_place=kernel)     # the kernel's buffer: reused
            return grid.col_sums(), grid.tdot_fixed()
        w = np.sqrt(weights[start:start + U.shape[0]])
        grid = GridMatrix(U * w[:, None], bound * math.sqrt(w_max))  # w u u' = z z'
        return grid.tdot_fixed(w, math.sqrt(w_max)), grid.tdot_fixed()     # w u = z sqrt(w)

    starts = range(0, X.shape[0], chunk)
    if X.shape[0] >= THREADED_ROWS:           # blocks on threads (numpy releases the GIL),
        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            parts = list(pool.map(block, starts))   # added in block order: the same bits
    else:
        parts = map(block, starts)
    parts = list(parts)
    if not parts:
        return np.zeros(k), np.zeros((k, k))
    s1, s2 = parts[0]
    for a, b in parts[1:]:             # integers: exact, in any order
        s1, s2 = s1 + a, s2 + b
    return s1.value, s2.value


def design_moments(X: np.ndarray, centre: np.ndarray, scale: np.ndarray, eps: float,
                   rng: np.random.Generator, ledger: Ledger | None = None, *,
                   bound: float = MOMENT_BOUND, stage: str | None = None,
                   what: str = "design moments", cols=None, kernel: bool = False,
                   sums: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Noisy ``(S1, S2)`` of the rows ``u = clip((X - centre) / scale, -bound, bound)``, eps-DP.

    ``cols`` selects columns of ``X`` (``centre`` and ``scale`` are then theirs); ``kernel``:
    the rows by the numba kernel (:func:`clipped_sums`; the same sums to the bit). ``sums``:
    those exact :func:`clipped_sums` of the rows, computed where the rows are (a dask
    frame's worker, :mod:`dpstats.dask.inference`); ``X`` is then not read, and the release,
    its noise and its charge are the same.
    Neighbours: add/remove one row; L1 sensitivity :func:`moments_sensitivity` (``centre``,
    ``scale`` and ``bound`` public or released). ``S2`` is symmetric (the upper triangle is
    released and mirrored).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.0]])
    >>> S1, S2 = design_moments(X, np.array([1.0, 0.0]), np.ones(2), 1e9,
    ...                         np.random.default_rng(0))
    >>> (np.round(S1, 4) + 0.0).tolist(), (np.round(S2, 4) + 0.0).tolist()
    ([0.0, 0.0], [[2.0, -2.0], [-2.0, 2.0]])
    """
    if sums is None:
        X = np.asarray(X, dtype=np.float64)
        sums = clipped_sums(X, np.asarray(centre, dtype=np.float64),
                            np.asarray(scale, dtype=np.float64), bound, cols=cols,
                            kernel=kernel)
    s1, s2 = (np.asarray(v, dtype=np.float64) for v in sums)
    k = s1.size
    iu = np.triu_indices(k)
    value = np.r_[s1, s2[iu]]
    noisy = np.asarray(laplace(value, moments_sensitivity(k, bound), eps, rng, ledger,
                               stage=stage, what=what + f" ({k} columns clipped at "
                                                        f"+-{bound:g} scales)"),
                       dtype=np.float64).reshape(-1)
    S2 = np.zeros((k, k))
    S2[iu] = noisy[k:]
    S2 = S2 + np.triu(S2, 1).T
    return noisy[:k], S2
