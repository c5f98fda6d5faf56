"""SubLasso's group votes from per-group sufficient statistics (run on a worker).

A group's standardised Lasso path depends on its rows only through the centred Gram matrix of
``[X, y]`` and the number of rows ``n_g`` (the kernel centres each column, scales it to unit
RMS and solves ``(1 / 2 n_g) ||y - X b||^2 + alpha ||b||_1``). :func:`pseudo_rows` builds, for
each group, ``q_g = min(n_g, p + 2)`` rows with zero column means whose centred Gram matrix is
``(q_g / n_g)`` times the group's: every per-row average (RMS, correlations, ``X'X / n``,
``alpha_max``) is the group's, so the Lasso path, and the support the kernel reports, are the
group's own up to rounding (the kernel's relative tests for constant columns see other raw
magnitudes; they only matter for columns constant to 1e-12). The pseudo rows go through the
in-memory kernel :func:`dpstats._kernels.lasso.lasso_topk_support` in blocks of groups; only
the vote counts come back to the client, where :func:`dpstats.mechanisms.peel_topk` releases
them as in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .passes import full_gram

__all__ = ["pseudo_rows", "LassoVotes"]

#: Groups per block of pseudo rows.
_GROUPS_PER_BLOCK = 1 << 16


@lru_cache(maxsize=64)
def _contrasts(q: int) -> np.ndarray:
    """An orthonormal basis (q, q - 1) of the vectors orthogonal to the ones."""
    basis = np.linalg.qr(np.column_stack([np.ones(q), np.eye(q)[:, :q - 1]]))[0]
    return basis[:, 1:]


def centred_gram(sums: dict, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centred Gram matrices of ``[X, y]`` (g, p+1, p+1) of ``groups`` and their counts."""
    p = sums["xty"].shape[0]
    n = sums["count"][groups]
    s = np.concatenate([sums["sum"][:, groups], sums["ysum"][None, groups]]).T      # (g, p+1)
    G = np.zeros((groups.size, p + 1, p + 1))
    G[:, :p, :p] = full_gram(sums["tri"][:, groups], p)
    G[:, :p, p] = G[:, p, :p] = sums["xty"][:, groups].T
    G[:, p, p] = sums["yy"][groups]
    safe = np.maximum(n, 1.0)[:, None, None]
    return G - s[:, :, None] * s[:, None, :] / safe, n


def pseudo_rows(C: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``Z`` (with a group label each) standing in for groups with centred Gram matrices
    ``C`` (g, p+1, p+1) and row counts ``n`` (see the module docstring).

    >>> A = np.sin(np.arange(21.0).reshape(7, 3) * [1.0, 1.7, 2.3]); A -= A.mean(0)
    >>> Z, lab = pseudo_rows((A.T @ A)[None], np.array([7.0]))
    >>> Z.shape, bool(np.allclose(Z.T @ Z / Z.shape[0], A.T @ A / 7)), lab.tolist()
    ((4, 3), True, [0, 0, 0, 0])
    """
    k = C.shape[1]
    q = np.minimum(n, k + 1).astype(np.int64)
    rows, labels = [], []
    for qv in np.unique(q):
        idx = np.flatnonzero(q == qv)
        if qv < 1:
            continue
        Z = _factor_rows(C[idx] * (qv / n[idx])[:, None, None], int(qv))
        rows.append(Z.reshape(-1, k))
        labels.append(np.repeat(idx, int(qv)))
    if not rows:
        return np.zeros((0, k)), np.zeros(0, dtype=np.int64)
    order = np.argsort(np.concatenate(labels), kind="stable")
    return np.concatenate(rows)[order], np.concatenate(labels)[order]


def _factor_rows(C: np.ndarray, q: int) -> np.ndarray:
    """``q`` rows per group (g, q, k) with zero column means and ``Z'Z = C``: from a Cholesky
    factor when every ``C`` is positive definite and ``q > k``, else from the top ``q - 1``
    eigenpairs (a group of ``q`` centred rows has rank at most ``q - 1``)."""
    g, k, _ = C.shape
    Q = _contrasts(q)
    if q > k:
        try:
            L = np.linalg.cholesky(C)                                       # C = L L'
            return np.einsum("qr,gjr->gqj", Q[:, :k], L)
        except np.linalg.LinAlgError:
            pass
    r = min(q - 1, k)
    if r == 0:
        return np.zeros((g, q, k))
    w, V = np.linalg.eigh(C)
    scale = np.sqrt(np.maximum(w[:, -r:], 0.0))
    return np.einsum("qr,gr,gjr->gqj", Q[:, :r], scale, V[:, :, -r:])


@dataclass(frozen=True)
class LassoVotes:
    """The finishing step of SubLasso's pass: each group's k leading Lasso features from its
    pseudo rows, counted into votes per candidate column (length ``d``)."""

    k: int

    def __call__(self, sums: dict) -> np.ndarray:
        from .._kernels.lasso import lasso_topk_support, support_votes
        d, m = sums["xty"].shape
        votes = np.zeros(d)
        for lo in range(0, m, _GROUPS_PER_BLOCK):
            groups = np.arange(lo, min(m, lo + _GROUPS_PER_BLOCK))
            C, n = centred_gram(sums, groups)
            Z, labels = pseudo_rows(C, n)
            support = lasso_topk_support(np.ascontiguousarray(Z[:, :d]),
                                         np.ascontiguousarray(Z[:, d]), labels,
                                         groups.size, self.k)
            votes += support_votes(support, d)
        return votes
