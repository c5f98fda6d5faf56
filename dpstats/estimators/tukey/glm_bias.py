"""Median bias reduction of every group's logistic fit (Kenne Pagui, Salvan and Sartori 2017).

The logistic Tukey mechanism (:mod:`.glm`) releases, coordinate by coordinate, about the median
of m group maximum-likelihood fits. In small groups (10-15 rows per column) each group's MLE
is median-biased away from 0 by a term of order ``1 / n_g``, and the median of the m fits
inherits that bias while its standard error shrinks as ``1 / sqrt(n)``: at n = 1e5, p = 5 the
shift is a sizeable fraction of the interval. Kenne Pagui, Salvan and Sartori ("Median bias
reduction of maximum likelihood estimates", Biometrika 104, 2017) modify the score so that
each component of the solution is median unbiased to third order:

    s~(b) = s(b) + A^E(b) - i(b) F~(b),

``A^E`` Firth's mean-bias adjustment ``A^E_t = tr{i^-1 P_t} / 2`` and ``F~_r =
[i^-1]_r' F~_r.`` with ``F~_rt = tr{h_r (P_t / 3 + Q_t / 2)}``, ``h_r = [i^-1]_r [i^-1]_r' /
[i^-1]_rr`` (``P_t = E[s s' s_t]``, ``Q_t = E[-j s_t]``). For the canonical logistic model the
observed information is the expected one, so ``Q_t = 0`` and ``P_t = sum_i k3_i x_i x_i' x_it``
with the third cumulant ``k3_i = mu_i (1 - mu_i) (1 - 2 mu_i)``; with ``q_i = i^-1 x_i``:

    A^E_t = (1/2) sum_i k3_i (q_i . x_i) x_it,   F~_rt = (1/3) sum_i k3_i q_ir^2 x_it / [i^-1]_rr.

(One column: ``A = k3 / (6 i)``, a third of Firth's ``k3 / (2 i)``, the scalar result of the
paper.) :func:`median_bias_reduce` takes ``steps`` quasi-Fisher steps
``b <- b + i^-1 (s + A^E) - F~`` from each group's fit (the first step from the MLE is the
explicit correction; the second solves the adjusted score to the next order). A group whose
step is not finite, or larger than :data:`MAX_STEP` times its model's size (a separated group,
whose MLE is an artefact of the kernel's ridge), keeps its fit.

**Privacy.** Each corrected model is a function of its own group's rows only (the sums below
are per group), so one row still changes one model: the Tukey mechanism's privacy statement
is unchanged. Deterministic, no noise.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ...errors import ValidationError

__all__ = ["median_bias_reduce", "resolve_bias", "BIAS", "MAX_STEP", "STEPS"]

#: Accepted values of the ``bias`` option of :func:`dpstats.estimators.tukey.glm.estimate`.
BIAS = ("auto", "median", "none")
#: Quasi-Fisher steps of the adjusted score from the MLE.
STEPS = 2
#: A step larger than this multiple of ``1 + |b|`` (largest coordinate) is not taken.
MAX_STEP = 1.0
#: Rows per block of the group sums.
_BLOCK = 1 << 15


def resolve_bias(bias: str, intervals: bool) -> str:
    """``"median"`` or ``"none"``: ``"auto"`` corrects when the fit releases intervals (the
    correction centres them; without them the released point is the old one).

    >>> resolve_bias("auto", True), resolve_bias("auto", False), resolve_bias("none", True)
    ('median', 'none', 'none')
    """
    if bias not in BIAS:
        raise ValidationError(f"bias must be one of {BIAS}; got {bias!r}")
    if bias == "auto":
        return "median" if intervals else "none"
    return bias


def _group_sums(labels: np.ndarray, m: int, rows) -> np.ndarray:
    """``sum over the rows of each group`` of ``rows(start, stop) -> (b, k)``: an (m, k) array
    (blocks of rows; empty groups give 0)."""
    n = labels.size
    out = None
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        Z = rows(start, stop)
        G = sp.csr_matrix((np.ones(stop - start), (labels[start:stop],
                                                   np.arange(stop - start))),
                          shape=(m, stop - start))
        part = np.asarray(G @ Z)
        out = part if out is None else out + part
    return np.zeros((m, 0)) if out is None else out


def _step(X, y, labels, m, B):
    """One quasi-Fisher step of the median-bias-reduced score for every group: (m, p)."""
    p = X.shape[1]
    mu = expit(np.einsum("ij,ij->i", X, B[labels]))
    w = mu * (1.0 - mu)
    k3 = w * (1.0 - 2.0 * mu)
    info = _group_sums(labels, m, lambda a, b: (
        (w[a:b, None] * X[a:b])[:, :, None] * X[a:b, None, :]).reshape(b - a, p * p))
    info = info.reshape(m, p, p)
    inv = np.linalg.pinv(info, hermitian=True)

    def q_rows(a, b):
        return np.einsum("nij,nj->ni", inv[labels[a:b]], X[a:b])

    def adjust(a, b):
        Xb, Q = X[a:b], q_rows(a, b)
        score = (y[a:b] - mu[a:b])[:, None] * Xb
        firth = (0.5 * k3[a:b] * np.einsum("ni,ni->n", Q, Xb))[:, None] * Xb
        third = ((k3[a:b, None] * Q * Q / 3.0)[:, :, None] * Xb[:, None, :])
        return np.c_[score + firth, third.reshape(b - a, p * p)]

    sums = _group_sums(labels, m, adjust)
    grad = sums[:, :p]
    F = sums[:, p:].reshape(m, p, p)
    diag = np.einsum("gii->gi", inv)
    with np.errstate(divide="ignore", invalid="ignore"):
        F_tilde = np.einsum("grt,grt->gr", inv, F) / diag
    return np.einsum("gij,gj->gi", inv, grad) - F_tilde


def median_bias_reduce(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int,
                       models: np.ndarray, steps: int = STEPS) -> np.ndarray:
    """The (m, p) group fits ``models`` moved to the solutions of the median-bias-reduced
    logistic score of each group (module docstring); ``labels`` in ``[0, m)`` give the groups.

    >>> X = np.c_[np.ones(8), [-1.0, -1, 0, 0, 1, 1, 2, 2]]
    >>> y = np.array([0.0, 0, 0, 1, 1, 0, 1, 1])
    >>> mle = np.array([[0.0, 0.0]])
    >>> b = median_bias_reduce(X, y, np.zeros(8, dtype=np.int64), 1, mle, steps=6)
    >>> bool(np.all(np.isfinite(b)))
    True
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    B = np.array(models, dtype=np.float64)
    for _ in range(int(steps)):
        step = _step(X, y, labels, int(m), B)
        size = 1.0 + np.abs(B).max(axis=1)
        good = np.isfinite(step).all(axis=1) & (np.abs(step).max(axis=1) <= MAX_STEP * size)
        B[good] += step[good]
    return B
