"""AdaSSP: private linear regression from noisy sufficient statistics (Wang 2018, Algorithm 2).

Neighbours: add/remove one row. AdaSSP needs a bound ``B_x`` on every row's L2 norm and
``B_y`` on ``|y|``; dpstats gets them without reading the data for free:

1. **Bounds.** Public bounds from ``bounds=`` (:func:`dpstats.mechanisms.bounds.parse_bounds`) cost
   nothing. ``"auto"`` (the default) spends :data:`BOUNDS_SHARE` of ``eps`` and of ``delta`` on
   one Gaussian release of log-scale histograms of every non-intercept column and of ``y``
   (:func:`dpstats.estimators.bounded.histogram_bounds`; L2 sensitivity ``sqrt(k)`` for ``k``
   bounded columns). Each
   column's bounds are the outer edges of its cells whose noisy count clears a detection
   threshold, so tails thinner than the threshold are clipped. ``bounds_method="quantile"``
   uses :func:`dpstats.mechanisms.bounds.private_bounds` instead (``2 k`` exponential-mechanism
   quantiles at ``eps / (2 k)`` each: mostly noise at ``eps ~ 1`` and ``n ~ 10^4``, see
   benchmarks/adassp_bas_utility.py).
2. **Mapping.** Non-intercept columns and ``y`` go into ``[-1, 1]`` by
   :func:`dpstats.mechanisms.bounds.to_unit` (centre at the midpoint, divide by the half-width,
   clip). The intercept stays 1, so every row has ``||x'||_2 <= B_x = sqrt(p)``, p the number of
   columns **including the intercept**, and ``|y'| <= B_y = 1``, whatever the data.
3. **AdaSSP** with ``eps_r = eps - eps_bounds`` and ``delta_r = delta - delta_bounds``, both
   split in thirds over three :func:`dpstats.mechanisms.gaussian` releases (analytic
   calibration):

   * ``lambda_min(X'^T X')``: adding a row adds the PSD matrix ``x x^T``, which moves the
     smallest eigenvalue by at most ``||x||^2``: L2 sensitivity ``B_x^2``;
   * the upper triangle (diagonal included) of ``X'^T X'``, mirrored into symmetric noise:
     ``sqrt(sum_{i<=j} (x_i x_j)^2) <= ||x||^2``: L2 sensitivity ``B_x^2``;
   * ``X'^T y'``: changes by ``x y``: L2 sensitivity ``B_x B_y``.

   Ridge from the noisy eigenvalue as in Wang (2018), with the analytic sigmas in place of
   the classic ones: ``lam~ = max(lam_noisy - sigma_lam sqrt(log(6/delta)), 0)`` and
   ``ridge = max(0, sigma_xx sqrt(p log(2 p^2 / rho)) - lam~)``, ``rho = 0.05``.
4. **Back to the original scale** (post-processing): slopes ``b_j = h_y t_j / h_j``, intercept
   ``m_y + h_y t_0 - sum_j b_j m_j`` (``m``, ``h``: midpoints and half-widths). Without an
   intercept column the bounds are first made symmetric about 0, so no shift is needed.

The fit is exact for the *winsorised* predictor ``clip(x, clip_lo, clip_hi) @ params`` (the
released box is ``Estimate.clip``); ``x @ params`` extrapolates linearly beyond the box.
Bounds, mapping and back-mapping are :mod:`dpstats.estimators.bounded`'s.
(eps, delta)-DP by basic composition of the bounds release and the three Gaussian releases.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.row_sums import tdot
from ..mechanisms.accountant import Ledger
from ..mechanisms.additive import analytic_gaussian_sigma, gaussian
from ..validation import Option, OptionSpec, check_delta, check_eps, validate_options
from .bounded import BOUNDS_METHODS, budgeted_design, check_inputs, plan_bounds
from .inference.sandwich import COV_TYPES, HC_SHARE
from .inference.ssp import (
    INFERENCE_SHARE,
    affine_matrix,
    inference_budget,
    release_and_infer,
)
from .outcome import Estimate, Withheld, withheld

__all__ = ["estimate", "adassp_core", "adaptive_ridge", "row_norm_bound", "clip_rows",
           "BOUNDS_SHARE", "BOUNDS_METHOD", "BOUNDS_Q", "RHO", "OPTIONS", "COMMON"]

#: How ``"auto"`` bounds are estimated: "hist" (:func:`~dpstats.estimators.bounded.
#: histogram_bounds`) or "quantile" (:func:`dpstats.mechanisms.bounds.private_bounds`).
BOUNDS_METHOD = "hist"
#: Share of ``eps`` (and, for "hist", of ``delta``) spent on private bounds by AdaSSP (0.1 and
#: 0.3 were worse on the regression files); Boosted AdaSSP uses it only for "quantile".
BOUNDS_SHARE = 0.20
#: Tail mass outside each bound for ``bounds_method="quantile"``.
BOUNDS_Q = 0.01
#: Failure probability of the ridge rule (Wang 2018).
RHO = 0.05

#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "intercept_col", "names", "bounds",
                    "stage", "engine"})
#: AdaSSP's options.
OPTIONS = OptionSpec((
    Option("bounds_method", "choice", BOUNDS_METHOD, choices=BOUNDS_METHODS,
           doc="how 'auto' bounds are released"),
    Option("bounds_share", "real", BOUNDS_SHARE, range=(0.0, 1.0),
           doc="share of eps (and of delta for 'hist') spent on private bounds"),
    Option("q", "real", BOUNDS_Q, range=(0.0, 0.5),
           doc="tail mass outside each bound of bounds_method='quantile'"),
    Option("rho", "real", RHO, range=(0.0, 1.0), doc="failure probability of the ridge rule"),
    Option("inference_share", "real", INFERENCE_SHARE, range=(0.0, 1.0), closed=(True, False),
           doc="share of eps for the residual sum of squares behind the standard errors "
               "(0: no standard errors)"),
    Option("cov_type", "choice", "nonrobust", choices=COV_TYPES,
           doc="'nonrobust' (constant error variance) or 'HC1' (private sandwich meat)"),
    Option("hc_share", "real", HC_SHARE, range=(0.0, 1.0), closed=(False, False),
           doc="share of eps and delta for the sandwich meat (cov_type='HC1' only)"),
))


def row_norm_bound(p: int) -> float:
    """``B_x = sqrt(p)``: L2 norm bound of a mapped row of ``p`` coordinates in ``[-1, 1]``
    (the intercept, 1, included)."""
    return math.sqrt(p)


def clip_rows(X: np.ndarray, norm: float = 1.0) -> np.ndarray:
    """Scale every row with L2 norm above ``norm`` down to ``norm`` (others unchanged).

    >>> np.round(clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]])), 12).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    lengths = np.linalg.norm(X, axis=1)
    return X * np.minimum(1.0, norm / np.maximum(lengths, np.finfo(float).tiny))[:, None]


def adaptive_ridge(lam_noisy: float, sigma_lam: float, sigma_xx: float, p: int, rho: float,
                   shift: float) -> float:
    """Ridge from a noisy smallest eigenvalue (Wang 2018, Alg. 2; post-processing only).

    ``lam~ = max(lam_noisy - shift * sigma_lam, 0)`` is a high-probability lower bound on the
    smallest eigenvalue and ``sigma_xx sqrt(p log(2 p^2 / rho))`` bounds the operator norm of
    the symmetric Gram noise with probability ``1 - rho``; the ridge makes up the difference.

    >>> adaptive_ridge(100.0, 1.0, 1.0, 2, 0.05, 3.0), round(adaptive_ridge(0, 1, 1, 2, .05, 3), 4)
    (0.0, 3.186)
    """
    lam_tilde = max(lam_noisy - shift * sigma_lam, 0.0)
    return max(0.0, sigma_xx * math.sqrt(p * math.log(2.0 * p * p / rho)) - lam_tilde)


def adassp_core(Xs, ys, eps: float, delta: float, rng, ledger, *, rho: float, stage: str,
                B_x: float, B_y: float = 1.0, stats=None,
                out: dict | None = None) -> tuple[np.ndarray, float]:
    """AdaSSP on rows with L2 norm <= ``B_x`` and ``|y| <= B_y``: ``(theta, ridge)``.

    Three Gaussian releases at ``(eps/3, delta/3)`` each, L2 sensitivities ``B_x^2``,
    ``B_x^2`` (upper triangle of the Gram matrix) and ``B_x B_y`` under add/remove one row.
    ``out``, when given, receives the released Gram matrix and the noise scales (for
    inference: post-processing). ``stats``: ``(X'X, X'y)`` of the mapped rows computed
    elsewhere (summed over the partitions of a dask frame); ``Xs`` then only gives the
    number of columns.
    """
    p = Xs.shape[1]
    e3, d3 = eps / 3.0, delta / 3.0
    s_xx, s_xy = B_x * B_x, B_x * B_y
    gram = tdot(Xs, Xs, B_x, B_x) if stats is None else stats[0]
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    lam_noisy = gaussian(lam_min, s_xx, e3, d3, rng, ledger, stage=stage,
                         what="smallest eigenvalue of X'X (mapped data)")
    iu = np.triu_indices(p)
    tri = gaussian(gram[iu], s_xx, e3, d3, rng, ledger, stage=stage,
                   what="upper triangle of X'X (mapped data), symmetric noise")
    xty = gaussian(tdot(Xs, ys, B_x, B_y) if stats is None else stats[1], s_xy, e3, d3, rng,
                   ledger, stage=stage, what="X'y (mapped data)")
    gram_noisy = np.zeros((p, p))
    gram_noisy[iu] = tri
    gram_noisy = gram_noisy + np.triu(gram_noisy, 1).T
    sigma = analytic_gaussian_sigma(s_xx, e3, d3)          # eigenvalue and Gram noise alike
    ridge = adaptive_ridge(lam_noisy, sigma, sigma, p, rho, math.sqrt(math.log(6 / delta)))
    if out is not None:
        out.update(gram=gram_noisy, xty=np.atleast_1d(xty), sigma_gram=sigma, sigma_lam=sigma,
                   sigma_xy=analytic_gaussian_sigma(s_xy, e3, d3), rho=rho,
                   shift=math.sqrt(math.log(6 / delta)))
    A = gram_noisy + ridge * np.eye(p)
    try:
        theta = np.linalg.solve(A, np.atleast_1d(xty))
    except np.linalg.LinAlgError:
        theta = np.linalg.lstsq(A, np.atleast_1d(xty), rcond=None)[0]
    return theta, ridge


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None,
             intercept_col: int | None = None, names=None, bounds="auto",
             bounds_method: str = BOUNDS_METHOD, bounds_share: float = BOUNDS_SHARE,
             q: float = BOUNDS_Q, rho: float = RHO, inference_share: float = INFERENCE_SHARE,
             cov_type: str = "nonrobust", hc_share: float = HC_SHARE, stage: str = "regression",
             engine=None) -> Estimate:
    """Private linear regression by AdaSSP on bounded, rescaled data.

    Neighbours: add/remove one row. With ``p`` columns including the intercept,
    ``B_x = sqrt(p)`` and ``B_y = 1`` after mapping, the L2 sensitivities are: smallest
    eigenvalue of ``X'X`` and upper triangle of ``X'X``: ``B_x^2``; ``X'y``: ``B_x``;
    histograms for private bounds: ``sqrt(k)`` (k bounded columns). (eps, delta)-DP.

    Parameters
    ----------
    X, y : arrays
        Design matrix (with the intercept column, if any) and label.
    eps, delta : float
        Budget of this stage. ``"auto"`` bounds take ``bounds_share`` of both ("quantile":
        of eps only); the rest is split in thirds over the three Gaussian releases.
    rng, ledger : numpy.random.Generator, Ledger
        The noise source; the ledger is charged by every release.
    intercept_col, names : int or None, sequence of str
        The all-ones column (neither bounded nor rescaled); column names for ``bounds``.
    bounds : "auto", (lo, hi), dict or Bounds
        See :func:`dpstats.mechanisms.bounds.parse_bounds`; ``"x"`` covers the non-intercept
        columns.
    bounds_method, bounds_share, q, rho
        The options of :data:`OPTIONS` (bounds, their share, quantile level, ridge rule).
    inference_share, cov_type, hc_share : float, {"nonrobust", "HC1"}, float
        Standard errors (:mod:`dpstats.estimators.inference.ssp`): ``inference_share`` of eps
        (0.05; 0: none) on the clipped residual sum of squares, ``"HC1"``: ``hc_share`` (0.15)
        of eps and delta more on a private sandwich meat (stage ``"inference"``).
    stage, engine : str, object
        Ledger stage; dask statistics (:mod:`dpstats.dask`: no rows; residual sums, 1 pass).

    Returns
    -------
    Estimate
        ``params`` on the original scale, ``clip`` the released box; ``details`` (public):
        ``bounds`` ("public", "private" or mixed), ``ridge`` (released, mapped scale),
        ``eps_bounds``/``delta_bounds``, ``B_x``; withheld when the label's bounds fail.

    Raises ``ValidationError`` for bad data or arguments, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> est = estimate(X, 2 + X[:, 1], eps=1e6, delta=1e-5, rng=rng, intercept_col=0,
    ...                bounds=(-4, 4))
    >>> np.round(est.params, 2).tolist(), est.details["bounds"]
    ([2.0, 1.0], 'public')
    """
    eps, delta = check_eps(eps), check_delta(delta)
    Xa, ya, intercept_col = check_inputs(X, y, intercept_col, rng)
    opt = validate_options(OPTIONS, {"bounds_method": bounds_method, "bounds_share": bounds_share,
                                     "q": q, "rho": rho, "inference_share": inference_share,
                                     "cov_type": cov_type, "hc_share": hc_share})
    plan = plan_bounds(Xa, bounds, intercept_col=intercept_col, names=names)
    inf = inference_budget(eps, delta, opt)
    eps, delta = eps - inf["eps"], delta - inf["delta"]      # the fit's budget
    design, eps_b, delta_b = budgeted_design(
        Xa, ya, plan, method=opt["bounds_method"], share=opt["bounds_share"], eps=eps,
        delta=delta, q=opt["q"], rng=rng, ledger=ledger, stage=stage,
        counts_of=None if engine is None else engine.counts_of)
    B_x = row_norm_bound(Xa.shape[1])
    released = {}
    theta, ridge = adassp_core(design.X, design.y, eps - eps_b, delta - delta_b, rng, ledger,
                               rho=opt["rho"], stage=stage, B_x=B_x, out=released,
                               stats=None if engine is None else engine.gram(design))
    facts = {"clip": design.clip, "details": {
        "bounds": design.source, "ridge": ridge, "eps_bounds": eps_b, "delta_bounds": delta_b,
        "B_x": B_x, "eps_inference": inf["eps"]}}
    if design.unusable:
        return withheld(Xa.shape[1], Withheld.LABEL_BOUNDS, **facts)
    inference = _inference(design, theta, ridge, released, inf, rng, ledger, engine)
    return Estimate(params=design.to_original(theta), released=True, inference=inference,
                    **facts)


def _inference(design, theta, ridge, released: dict, budget: dict, rng, ledger, engine=None):
    """The inference releases (stage "inference") and the bootstrap; None when not asked
    (``engine``: a dask frame's residual sums, :mod:`dpstats.dask.inference`)."""
    if budget["eps_rss"] <= 0:
        return None
    icol = design.intercept_col
    return release_and_infer(
        "adassp", design.X, design.y, theta, released, budget, rng=rng, ledger=ledger,
        n_hat=np.nan if icol is None else released["gram"][icol, icol], icol=icol,
        row_bound2=float(design.X.shape[1]), x0sq=1.0, ridge=ridge, y_half=design.y_half,
        M=affine_matrix(design.to_original, theta.size), unusable=design.no_interval,
        rows=None if engine is None else engine.residual_rows(design))
