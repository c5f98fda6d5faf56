"""Standard errors for the logistic Tukey mechanism (dp_glm ``method="tukey"``): a private
spread of the group logistic fits, scaled as the linear Tukey intervals.

The released point is about the coordinate-wise median of m group fits (each median-bias
reduced, :mod:`dpstats.estimators.tukey.glm_bias`) plus the exponential mechanism's
displacement, so, as for dp_lm's Tukey (:mod:`.tukey`, design notes 33 and 46),
``Var(point_j) ~= f sigma_j^2 / m`` with ``sigma_j`` the Gaussian-equivalent spread of the
models' coordinate ``j`` and ``f`` simulated through the real mechanism
(:func:`dpstats.mechanisms.model_spread.tukey_noise_factor`). What differs is the private
guess of the spread. A group of ``n_g = n / m`` rows fitted by maximum likelihood has
covariance about ``(n_g E[w z z'])^-1`` with the logistic weight ``w = mu (1 - mu)`` and
``z = (1, (x - c) / s)``; there is no residual scale. The inference stage (ledger stage
``"inference"``, :data:`TUKEY_GLM_INFERENCE_SHARE` = 8% of the Tukey stage's eps, taken from
the PTR test and the exponential mechanism; neighbours add/remove one row) releases:

1. :data:`SCALE_SHARE`: private medians ``s_j`` of ``|x_j - c_j|`` per column on at most
   2^15 random rows (:func:`.tukey._scales`; and a row count when none was released);
2. :data:`MOMENT_SHARE`: the weighted moments ``(sum w, sum w u, sum w u u')`` of
   ``u = clip((x - c) / s, -3, 3)`` at the released point
   (:func:`dpstats.mechanisms.weighted_moments.weighted_moments`, Laplace, L1 sensitivity
   ``(1 + k B + k (k + 1) / 2 B^2) / 4``; a column whose released ``s_j`` is 0, a 0/1
   column with its centre at 0, takes the factor dummies' public scale
   :data:`.tukey.DUMMY_SCALE`, so that a one reaches 2.97 of the clip 3: at 1 its moments
   were a ninth as large, under their noise at n = 1e5, eps = 1, and the windows missed by
   4-7x). Their floored inverse, divided by ``n_g``, is the
   group models' covariance ``V`` in the mechanism's coordinates: windows
   ``w_j = 0.6745 sqrt(V_jj)`` (:data:`WINDOW_SDS`; a public guess of each coordinate's
   median absolute deviation) and the correlations ``corr(V)``;
3. the rest: the window counts of :func:`.tukey.model_spread` (Laplace, L1 sensitivity p),
   ``sigma_j = w_j / Phi^-1((1 + q_j) / 2)``.

Standard errors are ``sqrt(f / m) sigma_j cv_j / 1.96`` with a **noise-aware critical value**
``cv_j`` (:func:`noise_aware_quantile`): ``sigma_j`` carries the counts' Laplace noise and
their binomial spread, ``Var(log sigma_j) ~= (2 (p / eps_c)^2 / m^2 + q (1 - q) / m) /
(2 z phi(z))^2`` at ``z = Phi^-1((1 + q) / 2)`` (delta method, public: released ``q``,
``m``, ``p``, eps), and ``cv_j`` solves ``E[2 Phi(cv e^L) - 1] = 0.95`` for
``L ~ N(0, Var(log sigma_j))`` (2.07-2.18 at n = 1e5, p = 5, eps = 1, instead of 1.96). Where
m is above the choice of m's bias cap (the release gate forced it, or a user's m), the part of
the group fits' residual median bias beyond the accepted one (:func:`bias_excess`, a public
bound) is covered too: ``cv_j`` is then :func:`.tukey_bias.critical_value`'s.
The covariance is ``A V A'`` with the point's correlation ``arcsin(rho) / f``
(:mod:`.tukey_cov`). Intervals are released only where the release gate passes
(:func:`plan_glm_inference`): the linear Tukey gate ``m eps / p >= 250`` and at least
:data:`GLM_ROWS_PER_COLUMN` released rows per column per group (smaller groups' logistic fits
are far from Gaussian and often separated). On a dask frame the models come back to the client
(the shuffle's group fits) and the rows the scales and the weighted moments read are
:class:`dpstats.dask.inference.TukeyRows`' Bernoulli subsample (every row below 2^20 released
rows; the first pass's kept rows, or one pass), as dp_lm's Tukey intervals on dask: the same
releases as in memory given the same labels while the scales read every row (below 2^15).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from ...mechanisms.model_spread import tukey_noise_factor
from ...mechanisms.plan import forfeit
from ...mechanisms.sampling import random_groups
from ...mechanisms.weighted_moments import weighted_moments
from ..outcome import Inference
from . import gate
from .tukey import (
    DUMMY_SCALE,
    MOMENT_ROWS,
    STAGE,
    InferencePlan,
    _scales,
    gated,
    mechanism_point,
    model_spread,
    plan_inference,
)
from .tukey_bias import (
    BIAS_TARGET,
    critical_value,
    glm_median_bias,
    log_sigma_variance,
    noise_aware_quantile,
)
from .tukey_cov import (
    correlation,
    floored_inverse,
    intercept_map,
    median_correlation,
    moment_matrix,
    reported_covariance,
)

__all__ = ["plan_glm_inference", "glm_tukey_inference", "noise_aware_quantile", "bias_excess",
           "TUKEY_GLM_INFERENCE_SHARE", "SCALE_SHARE", "MOMENT_SHARE", "GLM_ROWS_PER_COLUMN",
           "REFERENCE", "COVERS"]

#: Default share of the logistic Tukey stage's eps for inference.
TUKEY_GLM_INFERENCE_SHARE = 0.08
#: Shares of the inference eps: column scales, weighted moments (the rest, 70%: window counts,
#: whose Laplace noise dominates the standard errors' own noise; the scales only set the
#: moments' clipping, and the moments only the windows and the correlations).
SCALE_SHARE = 0.10
MOMENT_SHARE = 0.20
#: Windows at this many of each coordinate's modelled standard deviations (its median absolute
#: deviation). One sd (``z = 1``) would minimise ``1 / (2 z phi(z))``, the count noise's leverage
#: on ``log sigma``, by 11%, but with skewed covariates the clipped moments overstate the spread
#: by ~1.3x: 28% of 50 fits had a count above 0.95 m (no interval) and the rest covered 0.991
#: (the windows reached the group fits' heavier tails); see the design note.
WINDOW_SDS = 0.6744897501960817
#: Fewest released rows per column per group for intervals.
GLM_ROWS_PER_COLUMN = 10.0
_Z = 1.959963984540054
REFERENCE = ("the coordinate-wise median of m median-bias-reduced subsample logistic fits "
             "(Kenne Pagui, Salvan and Sartori 2017) with the Tukey mechanism's noise "
             "simulated; private window counts of the models and private weighted design "
             "moments")
COVERS = ("the logistic model's coefficients (the population fit of the selected terms); the "
          "spread of the group fits carries a misspecified link's variance")


def rows_reason(n_hat: float, m: int, p: int) -> str:
    """The note of a fit whose groups are too small for intervals (public values only)."""
    return (f"intervals not released: {m:,} logistic Tukey groups of about "
            f"{max(float(n_hat), 0.0) / (m * p):.3g} rows per column (released count); "
            f"intervals need at least {GLM_ROWS_PER_COLUMN:g} (smaller groups' logistic fits "
            f"are far from Gaussian and often separated), so fewer models (m=) or more rows")


def plan_glm_inference(share: float, eps_stage: float, m: int, p: int, identify: str,
                       dask: bool, n_hat: float | None = None) -> InferencePlan:
    """The inference budget of a logistic Tukey fit, decided before the fit from public
    values and the released ``n_hat`` (None: checked after the inference stage's count); the
    same on a dask frame (``dask``, kept for the planner's signature).

    >>> plan_glm_inference(0.08, 0.95, 1666, 6, "off", False, 1e5).eps > 0
    True
    >>> plan_glm_inference(0.08, 0.95, 1111, 6, "off", False, 1e5).eps
    0.0
    >>> plan_glm_inference(0.08, 0.95, 3000, 6, "off", False, 1e5).reason[:24]
    'intervals not released: '
    >>> plan_glm_inference(0.08, 0.95, 1666, 6, "off", True, 1e5).eps > 0    # dask too
    True
    """
    if share <= 0:
        return InferencePlan(0.0, 0.0)
    base = plan_inference(share, eps_stage, m, p, identify, False, GLM_ROWS_PER_COLUMN)
    if base.eps > 0 and n_hat is not None and n_hat < GLM_ROWS_PER_COLUMN * m * p:
        return InferencePlan(0.0, share, rows_reason(n_hat, m, p))
    return base


def bias_excess(n_hat: float, m: int, p: int, f: float) -> float:
    """The residual median bias beyond :data:`~.tukey_bias.BIAS_TARGET`, in standard errors
    of the released point: ``max(0, b - BIAS_TARGET) sqrt(pi / 2 / f)`` with ``b`` the public
    bound :func:`~.tukey_bias.glm_median_bias` (the median's own sd is ``sqrt(pi/2 / f)`` of
    the point's). 0 where m is at most the choice of m's ``m_bias``; above it (m forced up by
    the release gate, or a user's m) the critical value covers it
    (:func:`~.tukey_bias.critical_value`).

    >>> bias_excess(200_000, 2609, 6, 2.1), round(bias_excess(200_000, 3158, 6, 2.5), 3)
    (0.0, 0.105)
    """
    b = glm_median_bias(n_hat, m, p)
    return max(0.0, b - BIAS_TARGET) * math.sqrt(math.pi / 2.0 / float(f))


def _bias_note(r: float) -> str:
    return (f" and the groups' residual median bias beyond the accepted one, {r:.2g} "
            f"standard errors: more models than the bias cap for these groups' sizes")


def _group_covariance(X, point, c, scale, intercept_col, n_hat, m, eps, rng, ledger,
                      rows=None):
    """Covariance of one group's logistic fit in the mechanism's coordinates, from the private
    weighted moments at the released point (every row, or above
    :data:`.tukey.MOMENT_ROWS` released rows a Bernoulli row subsample: same sensitivity;
    on a dask frame ``rows.sample``, the law of the in-memory subsample)."""
    p = X.shape[1]
    cols = [j for j in range(p) if j != intercept_col]
    cen = np.zeros(p) if c is None else np.asarray(c, dtype=np.float64)
    s = np.where(np.isfinite(scale), np.where(scale > 0, scale, DUMMY_SCALE), 1.0)
    parts = max(1, int(math.ceil(n_hat / MOMENT_ROWS)))
    if rows is not None:          # a dask frame: usually the first pass's kept rows
        Xm = rows.sample(1.0 / parts, rng)[0]
    else:
        Xm = X if parts == 1 else X[random_groups(X.shape[0], parts, rng) == 0]
    w = expit(Xm @ np.asarray(point, dtype=np.float64))
    w *= 1.0 - w
    S0, S1, S2 = weighted_moments(Xm, w, cen[cols], s[cols], eps, rng, ledger, stage=STAGE,
                                  cols=cols, what="weighted design moments (the logistic "
                                                  "group fits' information)")
    M = moment_matrix(S1, S2, n_hat / parts, intercept_col, p, S0=S0)
    d = np.ones(p)
    d[cols] = s[cols]
    return floored_inverse(M) / np.outer(d, d) * (m / max(float(n_hat), 1.0))


def glm_tukey_inference(X, y, models, point, c, intercept_col, *, plan: InferencePlan,
                        n_hat, multiplier: float, monotone: bool, rng, ledger,
                        names=None, ident=None, rows=None) -> Inference:
    """The :class:`~dpstats.estimators.outcome.Inference` of a released logistic Tukey point
    (the signature of :func:`.tukey.tukey_inference`). Charges ``plan.eps`` to stage
    ``"inference"``. ``rows``: on a dask frame (``X``, ``y`` without rows), the row count
    and subsamples (:class:`dpstats.dask.inference.TukeyRows`)."""
    p = point.size
    m = models.shape[0]
    stop = gated(plan, m, p, ledger, rows_per_column=GLM_ROWS_PER_COLUMN)
    if stop is not None:
        return stop
    B = np.asarray(models, dtype=np.float64)
    theta = mechanism_point(point, c, intercept_col)
    scale, _, n_hat = _scales(X, y, point, c, intercept_col, n_hat, SCALE_SHARE * plan.eps,
                              rng, ledger, names, rows, residual=False)
    if n_hat < GLM_ROWS_PER_COLUMN * m * p:       # the count was released just now
        forfeit(ledger, "weighted moments and window counts", (1 - SCALE_SHARE) * plan.eps,
                0.0, stage=STAGE, detail="not run: too few rows per group (its share counts "
                                         "as spent)")
        return Inference(cov=np.full((p, p), np.nan), method=gate.GATED + rows_reason(
            n_hat, m, p), reference="", share=plan.share, covers="")
    V = _group_covariance(X, point, c, scale, intercept_col, n_hat, m,
                          MOMENT_SHARE * plan.eps, rng, ledger, rows)
    windows = WINDOW_SDS * np.sqrt(np.maximum(np.diag(V), 0.0))
    eps_counts = (1.0 - SCALE_SHARE - MOMENT_SHARE) * plan.eps
    sigma, q = model_spread(B, theta, windows, eps_counts, rng, ledger, ident)
    f = tukey_noise_factor(int(m), int(p), float(multiplier), bool(monotone))
    r = bias_excess(n_hat, m, p, f)
    crit = np.array([critical_value(r, v) if np.isfinite(s) else np.nan
                     for v, s in zip(log_sigma_variance(q, m, p, eps_counts), sigma,
                                     strict=True)])
    se = math.sqrt(f / m) * sigma * crit / _Z
    cov = reported_covariance(se, median_correlation(correlation(V), f),
                              intercept_map(c, intercept_col, p))
    finite = crit[np.isfinite(crit)]
    return Inference(
        cov=cov, share=plan.share, reference=REFERENCE, covers=COVERS,
        method=(f"Tukey (logistic): spread of the {m:,} median-bias-reduced group fits near "
                f"the released point, private (window counts, weighted design moments and "
                f"column scales, {100 * plan.share:.3g}% of eps), times sqrt(f/m) with "
                f"f = {f:.3g} (the median's pi/2 plus the exponential mechanism's noise, by "
                f"simulation), with a noise-aware critical value "
                f"({np.min(finite) if finite.size else math.nan:.3g}"
                f"-{np.max(finite) if finite.size else math.nan:.3g} instead of 1.96: the "
                f"counts' noise in the spread"
                f"{_bias_note(r) if r > 0 else ''}); released because the release gate passed "
                f"(m*eps/columns \u2248 {gate.tukey_index(m, plan.eps / plan.share, p):,.0f} >= "
                f"{gate.TUKEY_THRESHOLD:,.0f}, >= {GLM_ROWS_PER_COLUMN:g} rows per column per "
                f"group); correlations: arcsin(rho)/f with rho those of the weighted design "
                f"moments' inverse"))
