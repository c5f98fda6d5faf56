"""Standard errors for the Tukey-depth mechanism: a private spread of the group models.

The released Tukey point is a function of ``m`` group OLS models (one row changes one model).
Approximate Tukey depth is a per-coordinate rank, so coordinate ``j`` of the point is, to first
order, the median of the models' coordinate ``j`` plus the exponential mechanism's
displacement; for a cloud whose coordinate ``j`` has Gaussian-equivalent scale ``sigma_j``
near its centre, ``Var(point_j) ~= f sigma_j^2 / m`` with ``f`` the median's ``pi/2`` plus the
mechanism's share, simulated on spherical Gaussian clouds through the real mechanism
(:func:`dpstats.mechanisms.model_spread.tukey_noise_factor`; no data). The mechanism only
sees each coordinate's sorted values, so ``f`` does not depend on the cloud's correlations
(checked on correlated, anisotropic clouds in tests/inference/test_tukey_inference.py).

``sigma_j`` is released in the ledger stage ``"inference"`` with ``share`` of the Tukey
stage's eps (default :data:`TUKEY_INFERENCE_SHARE`, 6.5%), in three steps (neighbours:
add/remove one row), each in the mechanism's coordinates (with a centre ``c``: the prediction
at ``c`` in place of the intercept, then the slopes):

1. **Windows** (:data:`SCALE_SHARE` of it): private medians of ``|x_j - c_j|`` per column and of
   the residuals ``|y - x theta|`` of the released point, on a data-independent random subset
   of :func:`scale_rows` rows (2^15, more at small eps) (the 1-D Tukey-depth mechanism of
   :func:`dpstats.mechanisms.private_centre_value`, sensitivity 1, bounds-free; plus a private
   row count when none was released). From them a public guess ``w_j`` of each coordinate's
   median absolute deviation: ``0.6745 s_r / (s_j sqrt(n/m - p - 1))`` for a slope and, for the
   intercept coordinate, the centred intercept's ``s_r / sqrt(n/m)``.
2. **Counts** (the rest): ``N_j = #{g : |b_gj - theta_j| <= w_j}`` over the group models
   (:func:`dpstats.mechanisms.model_spread.window_counts`, Laplace, L1
   sensitivity p). Then ``sigma_j = w_j / Phi^-1((1 + N_j/m) / 2)``: exact for a Gaussian
   cloud, and for the heavier-tailed clouds of small groups a scale between the density at the
   centre (what the median's variance needs) and the standard deviation. A count outside
   ``[0.05, 0.95] m`` (the guess missed by far), or within :data:`Q_NOISE` Laplace scales of
   0, gives that coordinate no interval.

3. **Correlations** (:data:`COV_SHARE`): private first and second moments of the clipped,
   scaled columns (:func:`dpstats.mechanisms.design_moments.design_moments`), whose inverse
   gives the group models' correlations ``rho``; the point's are ``arcsin(rho) / f``, and the
   reported coefficients' covariance is ``A V A'`` (:mod:`.tukey_cov`: the reported
   intercept is the mechanism's intercept minus ``c . slopes``, a combination of medians, not
   the median of the groups' reported intercepts; with skewed columns the two differ).
   ``get_prediction`` uses this covariance.

Standard errors are ``sqrt(f / m) sigma_j cv_j / 1.96``, ``cv_j`` the critical value of
:func:`.tukey_bias.critical_value` for a bias of at most ``r = b / sqrt(f / m)`` standard errors
(``b sigma_j`` bounds the median's shift by the expected share of groups with fewer rows than
columns, :func:`deficient_share`, :func:`median_shift`: their minimum-norm models pull the
median; Armstrong and Kolesar, Quantitative Economics 2020) and a noisy ``sigma_j``
(``Var(log sigma_j)`` from the counts' Laplace noise and binomial spread,
:func:`.tukey_bias.log_sigma_variance`; public values; it replaced a factor 1.05 that
under-covered at 1e6 x 20, design note 55). Intervals are given only where the release gate
passes (:func:`.gate.tukey_passes`, ``m * eps / p``, public). With factor terms
(``identify="regroup"``) a group is counted only in the coordinates it identifies (one row
changes one group's model and identification set: a count moves by at most 1), a coordinate
where every group votes (too rarely identified: pulled towards 0) gets no interval, and a
factor's dummy columns take the public scale :data:`DUMMY_SCALE` (their median ``|x - c|`` is
0 or 1). ``identify="votes"`` gets none. On a dask frame the windows' rows are drawn on the
workers and the design moments summed there (:mod:`dpstats.dask.inference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ..._kernels.prepare import prepare
from ..._kernels.tukey_ols import uses_kernel
from ...mechanisms import private_centre_value
from ...mechanisms.additive import private_count
from ...mechanisms.design_moments import MOMENT_BOUND, design_moments
from ...mechanisms.model_spread import tukey_noise_factor, window_counts
from ...mechanisms.plan import forfeit
from ...mechanisms.sampling import random_groups
from ..outcome import Inference
from . import gate
from .tukey_bias import (
    bias_aware_quantile,
    critical_value,
    deficient_share,
    log_sigma_variance,
    median_shift,
)
from .tukey_cov import intercept_map, median_correlation, model_correlation, reported_covariance

__all__ = ["InferencePlan", "plan_inference", "tukey_inference", "deficient_share", "gated",
           "mechanism_point", "model_spread", "median_shift", "bias_aware_quantile",
           "SCALE_SHARE", "SCALE_ROWS", "SCALE_NEPS", "STAGE", "REFERENCE", "COVERS", "Q_RANGE",
           "Q_NOISE", "COV_SHARE", "TUKEY_INFERENCE_SHARE"]

#: Default share of the Tukey stage's eps for inference: 5% for the variances (as AdaSSP/BAS:
#: 1% windows, 4% counts) plus 1.5% for the correlations (design moments).
TUKEY_INFERENCE_SHARE = 0.065
#: Share of the inference eps spent on the windows (row-level scales, and a row count).
SCALE_SHARE = 2.0 / 13.0
#: Share of the inference eps spent on the design moments (the models' correlations).
COV_SHARE = 3.0 / 13.0
#: Most rows (in expectation) the row-level scales are computed on, unless each private median
#: needs more (:data:`SCALE_NEPS`).
SCALE_ROWS = 1 << 15
#: Least ``rows x eps`` of each private scale median: with less, the mechanism's release falls
#: outside 1.5x the median in 2-80% of draws (at 1e6 x 20, eps 1, 2^15 rows give 15: 8 of 21
#: coefficients without an interval); from 40 on in <= 0.5% (benchmarks/tukey_scale_neps.py:
#: a data-independent simulation of Gaussian, off-centre, t(3) and skewed columns).
SCALE_NEPS = 40.0
#: Above this many released rows the design moments of the correlations read a Bernoulli row
#: subsample of about this size (their Laplace noise is then that of 2^20 rows: correlations
#: need not be finer; time and, on a dask frame, the first pass's kept rows stay bounded).
MOMENT_ROWS = 1 << 20
#: Public scale (median |x - c| of a Gaussian-equivalent column) of a factor's dummy column:
#: 0.6745 times the largest standard deviation of a 0/1 column, 0.5 (a window needs it only
#: within a factor ~3: levels with share >= 3%).
DUMMY_SCALE = 0.5 * 0.6744897501960817
#: A count must exceed ``Q_NOISE`` Laplace scales (``p / eps``) to give an interval: a window
#: far too small (a private scale median that missed, at small eps) holds ~0 models, and noise
#: alone above 5% of m gave standard errors of 1e-10..1e-20 in 15 of 3,000 coefficient fits
#: at eps 0.5 (benchmarks/tukey_coverage.py); 3 scales let noise through with probability
#: ``e^-3 / 2`` = 2.5%, and a true window (~68% of m) is cut only at small ``m eps``.
Q_NOISE = 3.0
Q_RANGE = (0.05, 0.95)  #: usable fractions of models inside a window
STAGE = "inference"  #: ledger stage of the inference releases
_Z = 1.959963984540054  # the normal 97.5% quantile
_MAD = 0.6744897501960817  # median absolute deviation of a standard normal
REFERENCE = ("the coordinate-wise median of m subsample models (subsample and aggregate) "
             "with the Tukey mechanism's noise simulated; private window counts of the models")
COVERS = ("the least-squares coefficients of the model (the population fit of the selected "
          "terms); the spread of the group models carries heteroscedastic and heavy-tailed "
          "errors (benchmarks/tukey_coverage.py)")


@dataclass(frozen=True)
class InferencePlan:
    """What the Tukey fit sets aside for inference: ``eps`` (0: none) and, when none, the
    public ``reason`` (None: ``share == 0``, nothing asked for)."""

    eps: float
    share: float
    reason: str | None = None


def plan_inference(share: float, eps_stage: float, m: int, p: int, identify: str,
                   dask: bool, rows_per_column: float = gate.GATE_ROWS_PER_COLUMN
                   ) -> InferencePlan:
    """The inference stage's budget, from public values only before the fit (``rows_per_column``:
    the groups' floor the gate's reason quotes).

    >>> plan_inference(0.05, 1.0, 5555, 6, "off", False).eps
    0.05
    >>> plan_inference(0.05, 1.0, 5555, 6, "votes", False).eps
    0.0
    """
    if share <= 0:
        return InferencePlan(0.0, 0.0)
    if identify not in ("off", "regroup"):
        return InferencePlan(0.0, share, "Tukey intervals are not built for identify='votes' "
                                         "(no released share of groups identifying each "
                                         "coefficient); identify='regroup' gives them")
    if not gate.tukey_passes(m, eps_stage, p):
        return InferencePlan(0.0, share, gate.tukey_gate_reason(m, eps_stage, p,
                                                                rows_per_column))
    return InferencePlan(share * eps_stage, share)


def scale_rows(each: float) -> float:
    """Rows (in expectation) the row-level scales read when each private median has ``each``
    eps: :data:`SCALE_ROWS`, or ``SCALE_NEPS / each`` where that is more (public).

    >>> scale_rows(0.01), round(scale_rows(4e-4))
    (32768, 100000)
    """
    return max(SCALE_ROWS, SCALE_NEPS / each)


def _scales(X, y, point, c, intercept_col, n_hat, eps, rng, ledger, names, rows=None,
            kernel=False, residual: bool = True):
    """Private ``(column scales, residual scale, n_hat)`` on a random subset of rows
    (``rows``: a dask frame's row count and subsample, :class:`dpstats.dask.inference.
    TukeyRows`; the same law: each row kept independently with probability ``1 / parts``).
    ``kernel``: the medians' inputs counted in grid cells by the numba kernel (the same
    releases; public sizes decide). ``residual=False``: no residual scale (NaN; the logistic
    intervals need none)."""
    n, p = (X.shape[0] if rows is None else rows.n), X.shape[1]
    dummy = [j for j in range(p) if names is not None and "[" in str(names[j])]
    cols = [j for j in range(p) if j != intercept_col and j not in dummy]
    k = len(cols) + bool(residual) + (n_hat is None)
    each = eps / k
    if n_hat is None:
        n_hat = max(private_count(n, each, rng, ledger, stage=STAGE), 1.0)
    parts = max(1, int(math.ceil(n_hat / scale_rows(each))))
    if rows is not None:
        Xs, ys = rows.sample(1.0 / parts, rng)
    elif parts == 1:
        Xs, ys = X, y
    else:                   # the rows labelled 0, gathered (no mask over every row)
        keep = np.flatnonzero(random_groups(n, parts, rng) == 0)
        Xs, ys = X.take(keep, axis=0), y.take(keep)
    cen = np.zeros(p) if c is None else c
    scale = np.ones(p)
    scale[dummy] = DUMMY_SCALE           # public: a factor's 0/1 column (names are public)
    A = np.empty((Xs.shape[0], p + 1))              # |x - c| of every column, |residual| last
    np.abs(np.subtract(Xs, cen, out=A[:, :p]), out=A[:, :p])
    todo = cols + [p] if residual else list(cols)
    if residual:
        A[:, p] = np.abs(ys - Xs @ point)
    cells = None
    if kernel:                          # one numba pass per column, no sort
        from ..tukey.centre import kernel_cells
        cells = kernel_cells(A, todo)
    resid = math.nan
    for j in todo:
        name = names[j] if names is not None and j < p else f"column {j}"
        what = ("residual scale (median |y - x theta|)" if j == p
                else f"scale of {name} (median |x - c|)")
        values, counts = (A[:, j], None) if cells is None else cells[j]
        scale_j = private_centre_value(values, each, rng, ledger, stage=STAGE, what=what,
                                       counts=counts)
        if j < p:
            scale[j] = scale_j
        else:
            resid = scale_j
    return scale, float(resid), float(n_hat)


def _use_kernel(m: int, p: int) -> bool:
    """Whether the rows' passes take the numba kernels: from the public ``m`` and ``p``, as the
    group OLS does (:func:`dpstats._kernels.tukey_ols.uses_kernel`; compiled there, else here
    with the notice)."""
    if not uses_kernel(m, p):
        return False
    prepare(("tukey",))
    return True


def _model_correlation(X, c, scale, intercept_col, n_hat, eps, rng, ledger, names, rows=None,
                       kernel=False):
    """Correlation of the group models (mechanism's coordinates) from private design moments
    (:func:`dpstats.mechanisms.design_moments.design_moments`, ``eps``) of every row, or above
    :data:`MOMENT_ROWS` released rows of a Bernoulli(``1 / parts``) row subsample (a row is in
    it or not: the sensitivity is unchanged; on a dask frame ``rows.sample``, the law of the
    in-memory subsample)."""
    p = X.shape[1]
    cols = [j for j in range(p) if j != intercept_col]
    cen = np.zeros(p) if c is None else np.asarray(c, dtype=np.float64)
    s = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    parts = max(1, int(math.ceil(n_hat / MOMENT_ROWS)))
    Xm, sums = None, None
    if rows is not None:              # a dask frame: the exact sums of the subsample's rows,
        sums = rows.moment_sums(1.0 / parts, rng, cen[cols], s[cols], MOMENT_BOUND, cols,
                                kernel)             # usually on the worker holding them
    else:
        Xm = X if parts == 1 else X.take(np.flatnonzero(random_groups(X.shape[0], parts,
                                                                     rng) == 0), axis=0)
    S1, S2 = design_moments(Xm, cen[cols], s[cols], eps, rng, ledger, stage=STAGE, cols=cols,
                            what="design moments (correlations of the group models)",
                            kernel=kernel, sums=sums)
    return model_correlation(S1, S2, n_hat, intercept_col, p)


def windows(scale, resid, c, intercept_col, n_hat: float, m: int) -> np.ndarray:
    """Public guesses of each reported coordinate's median absolute deviation over the models.

    >>> w = windows(np.array([1.0, 2.0]), 0.6745, np.array([0.0, 0.0]), 0, 3300.0, 100)
    >>> [round(float(v), 3) for v in w]
    [0.117, 0.042]
    """
    p = scale.size
    ng = n_hat / m
    with np.errstate(divide="ignore", invalid="ignore"):
        w = _MAD * resid / (scale * math.sqrt(max(ng - p - 1.0, 1.0)))
        if intercept_col is not None:
            cen = np.zeros(p) if c is None else np.asarray(c, dtype=float)
            others = np.delete(np.arange(p), intercept_col)
            w_a = resid / math.sqrt(max(ng, 1.0))
            w[intercept_col] = math.sqrt(w_a ** 2 + float(np.sum((cen[others] * w[others]) ** 2)))
    return w


def model_spread(B, theta, w, eps, rng, ledger, ident=None) -> tuple[np.ndarray, np.ndarray]:
    """``(sigma, q)``: each coordinate's Gaussian-equivalent spread of the (m, p) models ``B``
    (the mechanism's coordinates) around ``theta`` from the released shares ``q`` of models
    within the public windows ``w`` (:func:`dpstats.mechanisms.model_spread.window_counts`,
    ``eps``, L1 sensitivity p): ``sigma = w / Phi^-1((1 + q) / 2)``, NaN where ``q`` is
    outside :data:`Q_RANGE`, within :data:`Q_NOISE` Laplace scales of 0, or the coordinate
    unusable (``ident = (identified, voting)``: factor designs, see :func:`tukey_inference`).
    """
    m, p = B.shape
    finite = np.isfinite(w) & (w > 0)
    D = B - theta
    usable = np.ones(p, dtype=bool)
    if ident is not None:           # factor designs: count a group only where it identifies
        id_mat, voting = ident
        D = np.where(np.asarray(id_mat, dtype=bool), D, np.inf)
        usable = np.zeros(p, dtype=bool) if voting is None else np.asarray(voting, dtype=bool)
    counts = window_counts(D, np.where(finite, w, 0.0), eps, rng, ledger, stage=STAGE,
                           what="group models within a public window of the released point")
    q = counts / m
    q_low = max(Q_RANGE[0], Q_NOISE * p / (eps * m))
    ok = finite & usable & (q >= q_low) & (q <= Q_RANGE[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.where(ok, w / ndtri((1.0 + np.clip(q, 0.0, 0.999)) / 2.0), np.nan)
    return sigma, q


def gated(plan: InferencePlan, m: int, p: int, ledger, eps: float | None = None,
          rows_per_column: float = gate.GATE_ROWS_PER_COLUMN) -> Inference | None:
    """The gated :class:`Inference` (NaN, the public reason) when the plan reserved nothing,
    or when ``m`` (fewer groups after a regroup) no longer passes the gate: then ``eps``
    (default the whole ``plan.eps``) is forfeited (charged, nothing released); else None.
    ``rows_per_column``: the groups' floor the reason quotes."""
    nan = np.full((p, p), np.nan)
    if plan.eps <= 0:
        return Inference(cov=nan, method=gate.GATED + str(plan.reason), reference="",
                         share=plan.share, covers="")
    eps_stage = plan.eps / plan.share
    if gate.tukey_passes(m, eps_stage, p):
        return None
    forfeit(ledger, "window counts", plan.eps if eps is None else eps, 0.0, stage=STAGE,
            detail="not run: the groups were regrouped below the release gate (its share "
                   "counts as spent)")
    return Inference(cov=nan, method=gate.GATED + gate.tukey_gate_reason(m, eps_stage, p,
                                                                        rows_per_column),
                     reference="", share=plan.share, covers="")


def mechanism_point(point, c, intercept_col) -> np.ndarray:
    """The released point in the mechanism's coordinates (with a centre ``c``: the
    prediction at ``c`` in place of the intercept)."""
    theta = np.array(point, dtype=np.float64)
    if c is not None:
        theta[intercept_col] += float(np.delete(c, intercept_col) @
                                      np.delete(theta, intercept_col))
    return theta


def _range(values) -> str:
    """``"a-b"`` (3 significant digits) of finite critical values, ``"nan"`` for none."""
    if not len(values):
        return "nan"
    lo, hi = float(np.min(values)), float(np.max(values))
    return f"{lo:.3g}" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}-{hi:.3g}"


def tukey_inference(X, y, models, point, c, intercept_col, *, plan: InferencePlan,
                    n_hat, multiplier: float, monotone: bool, rng, ledger,
                    names=None, ident=None, rows=None) -> Inference:
    """The :class:`~dpstats.estimators.outcome.Inference` of a released Tukey point.

    ``models`` are the (m, p) group models as the mechanism saw them (with a centre ``c``, the
    intercept coordinate is the prediction at ``c``); ``point`` is the released point on the
    original scale. Charges ``plan.eps`` to stage ``"inference"``; with ``plan.eps == 0``
    only the plan's reason (no charge). ``ident = (identified, voting)`` for factor designs:
    which coordinates each group identifies (m, p) and in which the groups vote only where
    they identify (public, from the released identification counts); a group counts only
    where it identifies, and a coordinate where every group votes gets no interval. ``rows``:
    on a dask frame (``X``, ``y`` without rows), the row count and subsamples
    (:class:`dpstats.dask.inference.TukeyRows`).
    """
    p = point.size
    m = models.shape[0]
    stop = gated(plan, m, p, ledger)
    if stop is not None:
        return stop
    B = np.asarray(models, dtype=np.float64)     # the mechanism's coordinates
    theta = mechanism_point(point, c, intercept_col)
    kernel = _use_kernel(m, p)
    scale, resid, n_hat = _scales(X, y, point, c, intercept_col, n_hat,
                                  SCALE_SHARE * plan.eps, rng, ledger, names, rows, kernel)
    w = windows(scale, resid, None, intercept_col, n_hat, m)
    eps_counts = (1 - SCALE_SHARE - COV_SHARE) * plan.eps
    sigma, q = model_spread(B, theta, w, eps_counts, rng, ledger, ident)
    rho = _model_correlation(X, c, scale, intercept_col, n_hat, COV_SHARE * plan.eps, rng,
                             ledger, names, rows, kernel)
    f = tukey_noise_factor(int(m), int(p), float(multiplier), bool(monotone))
    short = deficient_share(n_hat, m, p)
    base = math.sqrt(f / m)
    shift = median_shift(short)
    crit = np.array([critical_value(shift / base, v) if np.isfinite(sd) else math.nan
                     for v, sd in zip(log_sigma_variance(q, m, p, eps_counts), sigma,
                                      strict=True)])
    se = base * crit / _Z * sigma
    finite = crit[np.isfinite(crit)]
    cov = reported_covariance(se, median_correlation(rho, f), intercept_map(c, intercept_col, p))
    return Inference(
        cov=cov, share=plan.share, reference=REFERENCE, covers=COVERS,
        method=(f"Tukey: spread of the {m:,} group models near the released point, private "
                f"(window counts and design moments, {100 * plan.share:.3g}% of eps), times "
                f"sqrt(f/m) with f = {f:.3g} (the median's pi/2 plus the exponential "
                f"mechanism's noise, by simulation)"
                + (f", with a critical value of {_range(finite)} instead of 1.96 for the "
                   f"window counts' noise in the spread" if _range(finite) != "1.96" else "")
                + (f" and the median's largest shift {shift:.2g} sigma_j (r = "
                   f"{shift / base:.2g} standard errors) by the expected {short:.2g} share "
                   f"of groups with fewer rows than columns (their minimum-norm models "
                   f"shrink towards 0)" if short >= 1e-6 else "")
                + f"; released because the release gate passed (m*eps/columns \u2248 "
                  f"{gate.tukey_index(m, plan.eps / plan.share, p):,.0f} >= "
                  f"{gate.TUKEY_THRESHOLD:,.0f}); correlations: arcsin(rho)/f with rho the group "
                  f"models' correlations from private design moments (clipped at "
                  f"{MOMENT_BOUND:g} scales, {COV_SHARE:.0%} of the inference eps; exact for "
                  f"constant error variance)"),
        sigma=resid / _MAD)
