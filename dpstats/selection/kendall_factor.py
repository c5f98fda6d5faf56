"""DPKendall's score of a factor: the best Kendall correlation over codings of its levels.

A factor of ``m`` levels (its ``m - 1`` treatment dummies, or ``m`` full-coding dummies) maps each
row to a level code ``c(row) = sum_j (j + 1) x_j`` (0 for the reference level; a fixed row-wise
map, rounded and clipped to ``0 .. L``). Every ordering ``sigma`` of the codes gives one numeric
column ``sigma(c(row))``; its (n/2)-scaled Kendall correlation with a pivot (the label, or a
column picked earlier), ties broken by the mechanism's random row order, is an ordinary
``tau_hat`` of sensitivity 3/2 under add/remove one row (003 Lemma 3.2). The factor's score is
the maximum of ``|tau_hat|`` over all ``m!`` orderings and over its dummy columns: a maximum
over a data-independent family of functions of sensitivity 3/2 has sensitivity 3/2.

Exact maximum. With ties broken by position, the discordant pairs of ordering ``sigma`` are
``D_sigma = D_within + sum_{a before b in sigma} C[a, b]``, where ``C[a, b]`` counts pairs of a
row of level ``a`` and a row of level ``b`` with the first above the second in the pivot, and
``D_within`` (pairs inside a level, ordered by position) does not depend on ``sigma``. The
smallest and largest ``D_sigma`` are linear-ordering problems, solved exactly by dynamic
programming over subsets of levels (``O(2^m m)``); factors of more than :data:`MAX_LEVELS`
levels keep the dummy-column score only (a public rule: ``m`` comes from the formula).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_LEVELS", "level_codes", "ordering_tau_max", "min_linear_order"]

#: Largest number of levels whose orderings are searched (2^10 subsets x 10 levels).
MAX_LEVELS = 10


def level_codes(X_term: np.ndarray) -> np.ndarray:
    """Row-wise level code ``sum_j (j + 1) x_j`` of a factor's dummy columns, in ``0 .. L``.

    >>> level_codes(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])).tolist()
    [0, 1, 2]
    """
    L = X_term.shape[1]
    code = np.rint(X_term @ np.arange(1, L + 1, dtype=np.float64))
    return np.clip(code, 0, L).astype(np.int64)


def min_linear_order(C: np.ndarray) -> int:
    """``min over orderings sigma of sum_{a before b} C[a, b]`` (exact, integers), by dynamic
    programming over the set of levels placed first.

    >>> min_linear_order(np.array([[0, 5, 1], [2, 0, 7], [3, 4, 0]]))  # order 2, 1, 0
    9
    """
    m = C.shape[0]
    full = 1 << m
    W = np.zeros((full, m), dtype=np.int64)      # W[S, b] = sum_{a in S} C[a, b]
    for S in range(1, full):
        low = S & -S
        W[S] = W[S ^ low] + C[low.bit_length() - 1]
    best = np.full(full, np.iinfo(np.int64).max, dtype=np.int64)
    best[0] = 0
    for S in range(full - 1):
        base = best[S]
        for b in range(m):
            bit = 1 << b
            if not S & bit:
                cand = base + W[S, b]
                if cand < best[S | bit]:
                    best[S | bit] = cand
    return int(best[full - 1])


def _cross_counts(codes: np.ndarray, pivot: np.ndarray, m: int) -> np.ndarray:
    """``C[a, b] = #{i in a, i' in b : pivot_i > pivot_i'}`` (pivot values are distinct)."""
    sorted_by = [np.sort(pivot[codes == a]) for a in range(m)]
    C = np.zeros((m, m), dtype=np.int64)
    for a in range(m):
        for b in range(m):
            if a != b and sorted_by[a].size and sorted_by[b].size:
                C[a, b] = int(np.searchsorted(sorted_by[b], sorted_by[a]).sum())
    return C


def ordering_tau_max(codes: np.ndarray, code_ranks: np.ndarray, pivot: np.ndarray, m: int,
                     discordant) -> float:
    """``max over orderings sigma of |tau_hat(sigma(codes), pivot)|``, ties broken by position.

    ``codes`` are the level codes in the mechanism's row order, ``code_ranks`` their ranks with
    ties broken by position (one row of ``permuted_ranks``), ``pivot`` the pivot's ranks in
    the same order and ``discordant`` the kernel
    :func:`~dpstats._kernels.kendall_ranks.discordant_ranked`.
    """
    n = codes.size
    if n < 2:
        return n / 2.0
    C = _cross_counts(codes, pivot, m)
    d_identity = int(discordant(code_ranks[None, :], pivot)[0])
    d_within = d_identity - int(np.triu(C, 1).sum())
    sizes = np.bincount(codes, minlength=m).astype(np.int64)
    n_cross = (int(sizes.sum()) ** 2 - int((sizes * sizes).sum())) // 2
    d_min = d_within + min_linear_order(C)
    d_max = d_within + n_cross - min_linear_order(C.T.copy())
    hi = n / 2.0 - 2.0 * d_min / (n - 1)
    lo = n / 2.0 - 2.0 * d_max / (n - 1)
    return max(abs(hi), abs(lo))
