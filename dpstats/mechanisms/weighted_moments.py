"""Private weighted moments of clipped, scaled design columns (Laplace): the information matrix
of a logistic model at a released point.

The logistic Tukey intervals (:mod:`dpstats.estimators.inference.tukey_glm`) need the scale and
the correlations of the group logistic fits. A group of ``n_g`` rows fitted by maximum
likelihood has covariance about ``(n_g E[w z z'])^-1`` with ``w = mu (1 - mu)`` the logistic
weight at the coefficients and ``z`` the row's design vector, so both follow from the weighted
moment matrix ``E[w z z']``, cheap to release from the rows (``n eps`` in the thousands).

:func:`weighted_moments` releases ``S0 = sum_i w_i``, ``S1 = sum_i w_i u_i`` and the upper
triangle (diagonal included) of ``S2 = sum_i w_i u_i u_i'`` for rows
``u_i = clip((x_i - c) / s, -B, B)`` and weights ``w_i = clip(v_i, 0, 1/4)``, where ``c``
(centres), ``s`` (scales) and ``B`` are public or released and ``v_i`` is a function of row
``i`` and of released values only (the logistic weight ``mu_i (1 - mu_i) <= 1/4`` at a
released point); the clip makes the bound hold for any ``v``.

**Neighbours and sensitivity.** Add/remove one row: the released vector
``(S0, S1, upper(S2))`` changes by that row's ``w (1, u, upper(u u'))``. With ``0 <= w <= 1/4``
and ``|u_j| <= B`` for ``k`` columns its L1 norm is at most
``w (1 + k B + k (k + 1) / 2 * B^2) <= (1 + k B + k (k + 1) / 2 * B^2) / 4``
(:func:`weighted_sensitivity`; the diagonal has ``k`` entries ``w u_j^2 <= B^2 / 4``, the strict
upper triangle ``k (k - 1) / 2`` entries ``|w u_j u_l| <= B^2 / 4``). The Laplace mechanism
with that L1 sensitivity is eps-DP (adaptive composition with the releases that gave ``c``,
``s`` and the point).
"""

from __future__ import annotations

import numpy as np

from .._kernels.row_sums import row_sum
from .accountant import Ledger
from .additive import laplace
from .design_moments import MOMENT_BOUND, clipped_sums

__all__ = ["weighted_moments", "weighted_sensitivity", "WEIGHT_BOUND"]

#: Largest weight of a row (the logistic ``mu (1 - mu)``).
WEIGHT_BOUND = 0.25


def weighted_sensitivity(k: int, bound: float = MOMENT_BOUND) -> float:
    """L1 sensitivity of ``(sum w, sum w u, upper(sum w u u'))`` for ``k`` columns clipped to
    ``[-B, B]`` and weights in ``[0, 1/4]``: ``(1 + k B + k (k + 1) / 2 B^2) / 4``.

    >>> weighted_sensitivity(2, 1.0)
    1.5
    """
    return float(WEIGHT_BOUND * (1.0 + k * bound + k * (k + 1) / 2 * bound ** 2))


def weighted_moments(X: np.ndarray, weights: np.ndarray, centre: np.ndarray,
                     scale: np.ndarray, eps: float, rng: np.random.Generator,
                     ledger: Ledger | None = None, *, bound: float = MOMENT_BOUND,
                     stage: str | None = None, what: str = "weighted design moments",
                     cols=None) -> tuple[float, np.ndarray, np.ndarray]:
    """Noisy ``(S0, S1, S2)`` of the rows ``u = clip((X - centre) / scale, -bound, bound)``
    with weights clipped to ``[0, 1/4]``; eps-DP.

    Neighbours: add/remove one row; L1 sensitivity :func:`weighted_sensitivity` (``centre``,
    ``scale``, ``bound`` public or released, each weight a function of its own row and of
    released values). ``cols`` selects columns of ``X`` (``centre`` and ``scale`` are then
    theirs). ``S2`` is symmetric (the upper triangle is released and mirrored).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.0]])
    >>> S0, S1, S2 = weighted_moments(X, np.array([0.25, 0.25, 1.0]), np.array([1.0, 0.0]),
    ...                               np.ones(2), 1e9, np.random.default_rng(0))
    >>> round(S0, 4), (np.round(S1, 4) + 0.0).tolist(), (np.round(S2, 4) + 0.0).tolist()
    (0.75, [0.0, 0.0], [[0.5, -0.5], [-0.5, 0.5]])
    """
    X = np.asarray(X, dtype=np.float64)
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, WEIGHT_BOUND)
    k = X.shape[1] if cols is None else len(cols)
    iu = np.triu_indices(k)
    s1, s2 = clipped_sums(X, np.asarray(centre, dtype=np.float64),
                          np.asarray(scale, dtype=np.float64), bound, cols=cols, weights=w,
                          weight_bound=WEIGHT_BOUND)
    value = np.r_[float(row_sum(w[:, None], WEIGHT_BOUND)[0]), s1, s2[iu]]
    noisy = np.asarray(laplace(value, weighted_sensitivity(k, bound), eps, rng, ledger,
                               stage=stage, what=what + f" ({k} columns clipped at "
                                                        f"+-{bound:g} scales, weights "
                                                        f"<= 1/4)"),
                       dtype=np.float64).reshape(-1)
    S2 = np.zeros((k, k))
    S2[iu] = noisy[1 + k:]
    S2 = S2 + np.triu(S2, 1).T
    return float(noisy[0]), noisy[1:1 + k], S2
