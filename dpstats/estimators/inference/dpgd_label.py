"""The label clip's attenuation of squared-loss DP-GD's fit, as a bias its intervals hold.

DP-GD (squared loss) fits the label clipped to its released range, mapped to ``[-1, 1]``: its
descent converges to the least-squares fit ``t_c`` of ``clip(y)`` on the scaled rows, not to
the model's coefficients ``t``. Under the linear model with normal errors, ``E[clip(y) | x] =
eta + m(eta)`` with ``m(eta) = E[clip(eta + e)] - eta``, so ``t_c - t`` is the least-squares
fit of ``m(eta)`` on the rows. For normal rows (Stein's lemma) every slope is scaled by
``1 + E[m'(eta)] = 1 - pi``, ``pi`` the share of clipped labels, so ``t = t_c / (1 - pi)`` for
the slopes, and the intercept is the one that gives the unclipped label's mean. The label
``Y = eta + e`` is taken normal, ``N(mu, tau^2)``, with ``mu`` and ``tau`` solved from the
clipped label's mean and variance, which the released values give: the mean fitted value
``m_u' t_c`` (``m_u`` the column means, from the intercept column of the released Gram matrix
``C``, which also gives ``n``) and the fitted values' variance ``t_c' C t_c / n - mean^2``
plus the released residual variance. Post-processing of released values only (the curvature
part, the residual sum of squares, the coefficients).

Measured (design-notes.md, "dp_lm DP-GD: the label clip's attenuation and the box's cut"):
at n = 20,000, p = 5, eps 1 with 0/1 covariates about 0.7% of labels are clipped, the slopes
of ``t_c`` are 0.2-0.32 sampling sd short of the model's, and the intervals, which held no such
bias, covered 0.938 (0.928-0.946) over 500 fits; holding it, 0.944 (0.930-0.954). Over six
cells the coefficients outside [0.93, 0.98] fell from 3 to 1 (the label clip alone: 5, the
Gaussian cells' slopes over-covered).

**The box's cut** (``cut`` of :func:`label_clip_bias`, :func:`box_cut`): the inputs are
clipped to the released box too, and a Gaussian covariate's box cuts both tails, which
steepens its slope: the label clip's attenuation and the box's cut partly cancel. Each
column's unclipped mean and sd (normal) are solved from the clipped column's mean and
variance in the released Gram matrix, as the label's, and for independent columns (Stein
again) its clipped slope is the model's times ``sd^2 (1 - pi_j) / var(clip x_j)``, unless the
released log-histogram counts past the box (:data:`BOX_REACH` half-widths, both sides) fall
short of half the ``n pi_j`` rows this predicts by :data:`BOX_Z` sd of their noise (a 0/1
column's box holds its values; without counts no column is taken as cut).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

__all__ = ["label_clip_bias", "box_cut", "clip_bias", "clip_model", "BOX_REACH", "BOX_Z",
           "CLIP_GAIN", "unclipped_normal"]

#: How far beyond the box (in half-widths) the released counts are read for a cut: a Gaussian
#: covariate's cut rows lie within about one half-width of the edge.
BOX_REACH = 1.0
#: A column's normal cut is used unless its released counts past the box (both sides) fall
#: short of half the rows it predicts by more than this many sd of their noise (a 0/1 column,
#: whose box holds its values, is then left uncut).
BOX_Z = 3.0
#: Whether the covariance is that of the error left after the clip plug-in (its gain
#: ``I - J`` on the coefficients' error, ``J`` the plug-in's derivative in the coefficients it
#: is computed from, per plausible curvature; :func:`clip_model`). Off: the plug-in, computed
#: from the noisy coefficients, moves with their gradient noise against it (eps 0.5: the
#: intercept's error after the plug-in had sd 1.04-1.14 of its model; design notes 81 and 83:
#: on fits at offset 9000, unseen when the lead's rule was written, it lifted the lowest
#: coefficient from 0.924 to 0.926 at 0.8-2% more width, the count outside the band equal).
CLIP_GAIN = True
#: The finite-difference step of ``J`` (unit scale).
GAIN_STEP = 1e-5

_SQRT_2PI = np.sqrt(2.0 * np.pi)


def _clipped_moments(mu, tau):
    """Mean and variance of ``clip(Y, -1, 1)``, ``Y ~ N(mu, tau^2)``, and ``P(|Y| > 1)``."""
    a, b = (-1.0 - mu) / tau, (1.0 - mu) / tau
    pa, pb = ndtr(a), ndtr(b)
    fa, fb = np.exp(-0.5 * a * a) / _SQRT_2PI, np.exp(-0.5 * b * b) / _SQRT_2PI
    inside = pb - pa
    m1 = -pa + (1.0 - pb) + mu * inside + tau * (fa - fb)
    m2 = pa + (1.0 - pb) + mu * mu * inside + 2.0 * mu * tau * (fa - fb) \
        + tau * tau * (inside + a * fa - b * fb)
    return m1, np.maximum(m2 - m1 * m1, 1e-300), 1.0 - inside


def unclipped_normal(m_c, v_c, steps: int):
    """``(mu, tau, pi)`` of the normal whose clip to ``[-1, 1]`` has mean ``m_c`` and variance
    ``v_c`` (fixed-point steps; ``pi`` the clipped share, at most 0.5)."""
    v_c = np.maximum(v_c, 1e-24)
    mu, tau = np.array(m_c, dtype=np.float64), np.sqrt(v_c)
    for _ in range(steps):
        m1, var, _pi = _clipped_moments(mu, tau)
        mu, tau = mu + (m_c - m1), tau * np.sqrt(v_c / var)
    return mu, tau, np.clip(_clipped_moments(mu, tau)[2], 0.0, 0.5)


def label_clip_bias(Cs, theta, sigma2, icol: int, tails=None, steps: int = 30) -> np.ndarray:
    """``(K, p)``: the expected shift ``t_c - t`` of the clipped fit from the model's, on the
    unit scale, per plausible Gram matrix ``Cs`` ``(K, p, p)`` (of the scaled rows, the
    intercept column ``icol`` all ``1 / sqrt(p)``), the clipped fit ``theta`` ``(K, p)`` or
    ``(p,)`` and residual variance ``sigma2`` ``(K,)`` on the unit scale; ``tails`` the
    released counts past the box and their noise sd per column (:func:`box_cut`; NaN or None:
    not cut; module docstring).

    >>> C = np.diag([0.5, 0.5]) * 1000.0          # a centred column, the intercept
    >>> d = label_clip_bias(C[None], np.array([0.0, 0.0]), np.array([0.01]), 1)
    >>> float(np.abs(d).max()) < 1e-12               # nothing near the clip: no shift
    True
    >>> d = label_clip_bias(C[None], np.array([0.5, 0.0]), np.array([0.1]), 1)
    >>> bool(-0.05 < d[0, 0] < 0.0), float(abs(d[0, 1])) < 1e-12   # attenuated, symmetric
    (True, True)
    >>> C2 = np.diag([100.0, 500.0])                 # a column of sd 0.45 box half-widths
    >>> d = label_clip_bias(C2[None], np.array([0.5, 0.0]), np.array([0.1]), 1,
    ...                     ([50.0, np.nan], [1.0, np.nan]))
    >>> bool(d[0, 0] > 0.0)                          # its cut steepens the slope
    True
    """
    Cs = np.asarray(Cs, dtype=np.float64)
    K, p, _ = Cs.shape
    t = np.broadcast_to(np.asarray(theta, dtype=np.float64), (K, p))
    s = np.sqrt(p)
    n = s * s * Cs[:, icol, icol]
    mean_u = s * Cs[:, icol, :] / n[:, None]
    m_c = np.einsum("kj,kj->k", mean_u, t)
    v_c = np.maximum(np.einsum("ki,kij,kj->k", t, Cs, t) / n - m_c * m_c, 0.0) \
        + np.maximum(np.asarray(sigma2, dtype=np.float64), 0.0)
    mu, _tau, pi = unclipped_normal(m_c, v_c, steps)
    feat = np.arange(p) != icol
    factor, means = np.ones((K, p)), s * mean_u          # the columns' means, box units
    obs, noise = (np.full(p, np.nan),) * 2 if tails is None else map(np.asarray, tails)
    cut = np.isfinite(obs) & feat
    if cut.any():
        x_m = means[:, cut]
        x_v = s * s * np.einsum("kjj->kj", Cs)[:, cut] / n[:, None] - x_m * x_m
        m, sd, pi_x = unclipped_normal(x_m, x_v, steps)
        ok = obs[cut] >= 0.5 * (n[:, None] * pi_x).mean(axis=0) - BOX_Z * noise[cut]
        factor[:, cut] = np.where(ok, sd * sd * (1.0 - pi_x) / np.maximum(x_v, 1e-300), 1.0)
        means[:, cut] = np.where(ok, m, x_m)
    model = t / ((1.0 - pi)[:, None] * factor)
    model[:, icol] = s * mu - np.einsum("kj,kj->k", model[:, feat], means[:, feat])
    return t - model


def box_cut(hist, design, kept) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, noise)`` over ``kept`` (the fitted columns, intercept last): the sum of the
    released log-histogram counts past the box (:data:`BOX_REACH` half-widths, both sides)
    and its noise sd; NaN for columns without counts. ``hist`` the released
    :class:`~dpstats.estimators.bounds_release.HistCounts` (None: none), ``design`` the
    bounded design (``half``, ``clip_lo``, ``clip_hi``).
    """
    kept = list(kept)
    obs, noise = np.full(len(kept), np.nan), np.full(len(kept), np.nan)
    for j, row in ({} if hist is None else hist.cols).items():
        half = float(design.half[j])
        if j not in kept or not (half > 0 and math.isfinite(half)):
            continue
        (up, _), (down, _) = hist.tail(row, design.clip_lo[j], design.clip_hi[j],
                                       BOX_REACH * half)
        k = kept.index(j)
        obs[k], noise[k] = float(np.sum(up) + np.sum(down)), hist.sigma * math.sqrt(
            max(up.size + down.size, 1))
    return obs, noise


def clip_bias(Cs, theta, bias, sigma2, design, kept, box: bool = True) -> np.ndarray:
    """``(K, p)``: the clipped fit's expected shift from the model's per plausible Gram matrix
    ``Cs`` (:func:`label_clip_bias`; with ``box``, the box's cut from :func:`box_cut`);
    ``theta`` the released coefficients and ``bias`` the descent's plug-ins ``(K, p)`` (unit
    scale; the intercept last in ``kept``)."""
    hist = getattr(design.bounds, "hist", None)     # the released log-histogram (.glm_tail)
    tails = box_cut(hist, design, kept) if box else None
    return label_clip_bias(Cs, np.asarray(theta, dtype=np.float64)[None] - bias, sigma2,
                           len(kept) - 1, tails)


def clip_model(Cs, theta, bias, cov, sigma2, design, kept, box: bool = True,
               gain: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(bias, cov)`` per plausible Gram matrix ``Cs`` with the clips' shift
    (:func:`clip_bias`) added to the descent's plug-ins ``bias`` ``(K, p)`` and, with ``gain``
    (default :data:`CLIP_GAIN`), the covariance ``cov`` ``(K, p, p)`` (unit scale) mapped by
    the plug-in's gain ``I - J``: the model's coefficients are estimated by ``t - d(t)``, ``d``
    the shift at the bias-corrected coefficients ``t``, whose error is ``(I - J)`` times
    theirs (``J = dd/dt`` by central differences, :data:`GAIN_STEP`). Post-processing of
    released values only."""
    gain = CLIP_GAIN if gain is None else gain
    hist = getattr(design.bounds, "hist", None)     # the released log-histogram (.glm_tail)
    tails = box_cut(hist, design, kept) if box else None
    t = np.asarray(theta, dtype=np.float64)[None] - bias
    icol = len(kept) - 1
    shift = label_clip_bias(Cs, t, sigma2, icol, tails)
    if not gain:
        return bias + shift, cov
    K, p = Cs.shape[:2]
    G = np.empty((K, p, p))
    for j in range(p):
        e = np.zeros(p)
        e[j] = GAIN_STEP
        up, down = (label_clip_bias(Cs, t + s * e, sigma2, icol, tails) for s in (1.0, -1.0))
        G[:, :, j] = -(up - down) / (2.0 * GAIN_STEP)
    G += np.eye(p)
    return bias + shift, np.einsum("kij,kjl,kml->kim", G, cov, G)
