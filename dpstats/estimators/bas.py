"""Boosted AdaSSP (Tang et al. 2023; the BAS baseline of 003 section 4.2), in Gaussian DP.

Neighbours: add/remove one row. On rows ``x''`` of L2 norm at most 1 and residuals clipped to
``[-1, 1]``:

1. release the upper triangle of ``X''^T X''`` with symmetric noise (L2 sensitivity
   ``||x||^2 <= 1``) and the smallest eigenvalue of ``X''^T X''`` (sensitivity 1: adding a row
   adds the PSD matrix ``x x^T``);
2. ridge from the noisy eigenvalue (:func:`dpstats.estimators.adassp.adaptive_ridge`, shift
   ``sqrt(2 log(1/rho))`` noise sigmas), ``G = (noisy X''^T X'' + ridge I)^+``;
3. ``T`` boosting rounds from ``theta = 0``: ``r = clip(y - X'' theta, -1, 1)``, release
   ``g = X''^T r`` (L2 sensitivity ``||x|| |r| <= 1``) and step ``theta += shrinkage G g``.

All Gaussian releases compose adaptively under Gaussian DP
(:class:`dpstats.mechanisms.gdp.GaussianGDP`): the total ``mu`` is the **largest** with
``delta(mu) <= delta`` at ``eps`` (:func:`dpstats.mechanisms.gdp.gdp_mu`, bisection; the
reference code returns the first grid value that violates ``delta``). ``mu^2`` is shared by the
parts in proportion to ``split``; each round gets ``1/T`` of the rounds' share.

Variants
--------
``"scaled"`` (default): bounds as in :mod:`dpstats.estimators.adassp` map every non-intercept
column and ``y`` into ``[-1, 1]`` (:mod:`dpstats.estimators.bounded`; public bounds, or
``"auto"``: the log-histogram release of :func:`dpstats.estimators.bounded.histogram_bounds`
as one more part of the same GDP plan, L2
sensitivity ``sqrt(k)`` for k bounded columns); the intercept stays 1; rows are divided by
``sqrt(p)`` (a public constant: the model stays linear and ``||x''|| <= 1`` exactly); the
coefficients are mapped back to the original scale. Defaults measured on the ten regression
files (benchmarks/adassp_bas_utility.py): ``shrinkage = 0.1`` and ``split = (1, 0.1, 2, 1)``
for (Gram, eigenvalue, rounds, bounds).

**Residuals on the unclipped rows** (``residuals="unclipped"``, the default; issue 16). The
rounds release ``sum_i z_i clip(y_i - x_i theta, -1, 1)`` where ``z_i`` is the row mapped and
clipped to the released box (norm <= 1) and ``x_i``, ``y_i`` are the same row and label mapped
by the same affine map but clipped only to ``[-RESID_BOX, RESID_BOX]`` (:data:`RESID_BOX` = 2
half-widths of the box about its centre,
:meth:`~dpstats.estimators.bounded.BoundedDesign.unclipped`). The sensitivity is unchanged
(``||z_i|| |clip(.)| <= 1`` whatever ``x_i`` and ``y_i`` are; the label's box only sets its
scale). The fixed point solves an estimating equation whose expectation is 0 at the model's
coefficients whenever the errors are symmetric given x and the rows lie within twice the box,
so winsorizing x at the box and clipping y to its range no longer bias the fit (they did by
up to 1.5 standard errors with skewed covariates and heteroscedastic errors; with K = 2 the
simulated bias is at most 0.08: benchmarks/bas_clipping_bias.py). A larger K predicts worse
from clipped inputs on heavy-tailed data (design note "BAS residuals"). The residual sum of
squares and the sandwich meat of the intervals use the same residuals.
``residuals="clipped"`` gives the behaviour before (residuals on the clipped rows: the fit
targets the regression of the clipped label on the winsorized inputs).

``"paper"``: the reference behaviour of 003: raw rows (intercept included) clipped to L2 norm
1, raw labels, residuals clipped to 1, no bounds, ``shrinkage = 1``, ``mu^2`` in thirds. The
reference's privacy defects are not repeated (``mu`` is the largest meeting ``delta``; Gram
noise is symmetric).
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.row_sums import GridMatrix
from ..errors import ValidationError
from ..mechanisms.accountant import Ledger
from ..mechanisms.gdp import GaussianGDP
from ..validation import Option, OptionSpec, check_delta, check_eps, validate_options
from .adassp import (
    BOUNDS_METHOD,
    BOUNDS_Q,
    BOUNDS_SHARE,
    RHO,
    adaptive_ridge,
    clip_rows,
    row_norm_bound,
)
from .bounded import (
    BOUNDS_METHODS,
    BoundedDesign,
    bounded_design,
    budgeted_design,
    check_inputs,
    hist_release,
    plan_bounds,
)
from .inference.sandwich import COV_TYPES, HC_SHARE
from .inference.ssp import (
    INFERENCE_SHARE,
    affine_matrix,
    inference_budget,
    release_and_infer,
)
from .outcome import Estimate, Withheld, withheld

__all__ = ["estimate", "boost", "T_DEFAULT", "DEFAULTS", "OPTIONS", "COMMON"]

#: Default number of boosting rounds (003 and Tang et al.).
T_DEFAULT = 100
#: Where the boosting's residuals are computed (the default first): on the rows mapped but
#: not clipped to the released box, or (the behaviour before issue 16) on the clipped rows.
RESIDUALS = ("unclipped", "clipped")
#: With ``residuals="unclipped"`` the residuals' rows and label are clipped to this many
#: half-widths of the released box about its centre (a public constant; the gradient's rows
#: stay in the box).
RESID_BOX = 2.0
#: Per variant: shrinkage and the shares of mu^2 for (Gram, eigenvalue, all rounds, bounds).
DEFAULTS = {"scaled": (0.1, (1.0, 0.1, 2.0, 1.0)), "paper": (1.0, (1.0, 1.0, 1.0, 0.0))}


def boost(Xn: np.ndarray, y: np.ndarray, plan: GaussianGDP, T: int, shrinkage: float,
          rho: float, stats=None, out: dict | None = None,
          resid=None) -> tuple[np.ndarray, float]:
    """Boosted AdaSSP on rows of norm <= 1 with residuals clipped to 1: ``(theta, ridge)``.

    Releases through ``plan``: ``"gram"`` (sensitivity 1), ``"lambda_min"`` (sensitivity 1)
    and ``T`` times ``"rounds"`` (``X^T r``, sensitivity 1). ``resid``: ``(X_r, y_r)``, the
    rows the residuals ``r = clip(y_r - X_r theta, -1, 1)`` are computed on (default ``Xn``,
    ``y``); a round's sensitivity is ``||x|| |r| <= 1`` whatever they are. ``stats``:
    ``(X'X, round)`` computed elsewhere (dask: ``round(theta)`` is one pass for the round's
    statistic). ``out``, when given, receives the released Gram matrix and the noise scales
    (for inference: post-processing).
    """
    Xr, yr = (Xn, y) if resid is None else resid
    p = Xn.shape[1]
    grid = GridMatrix(Xn, 1.0) if stats is None else None    # rows quantised once (row_sums)
    gram = grid.tdot() if stats is None else stats[0]
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    gram_noisy = plan.release("gram", gram, 1.0, symmetric=True)
    lam_noisy = plan.release("lambda_min", lam_min, 1.0)
    ridge = adaptive_ridge(lam_noisy, plan.sigma("lambda_min", 1.0), plan.sigma("gram", 1.0),
                           p, rho, math.sqrt(2.0 * math.log(1.0 / rho)))
    if out is not None:
        out.update(gram=gram_noisy, sigma_gram=plan.sigma("gram", 1.0),
                   sigma_lam=plan.sigma("lambda_min", 1.0), sigma_round=plan.sigma("rounds", 1.0),
                   T=T, shrinkage=shrinkage, rho=rho, shift=math.sqrt(2.0 * math.log(1.0 / rho)))
    G = np.linalg.pinv(gram_noisy + ridge * np.eye(p), hermitian=True)
    theta = np.zeros(p)
    for _ in range(T):
        grad = (grid.tdot(np.clip(yr - Xr @ theta, -1.0, 1.0), 1.0) if stats is None
                else stats[1](theta))
        theta += shrinkage * (G @ plan.release("rounds", grad, 1.0))
    return theta, ridge



def _check_split(split, variant: str) -> list[float]:
    if split is None:
        return list(DEFAULTS[variant][1])
    try:
        shares = [float(s) for s in split]
    except (TypeError, ValueError):
        shares = []
    if len(shares) == 3:
        shares.append(DEFAULTS[variant][1][3])
    if len(shares) != 4 or not all(math.isfinite(s) and s >= 0 for s in shares) \
            or min(shares[:3]) <= 0:
        raise ValidationError(f"split must be 3 or 4 numbers: positive shares of mu^2 for the "
                              f"Gram matrix, the eigenvalue and the rounds, and a share >= 0 "
                              f"for histogram bounds; got {split!r}")
    return shares


def _finish(values: dict, fixed) -> dict:
    """Defaults that depend on the variant: shrinkage, and the shares of ``split``."""
    variant = values["variant"]
    if values["shrinkage"] is None:
        values["shrinkage"] = DEFAULTS[variant][0]
    values["split"] = _check_split(values["split"], variant)
    return values


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "intercept_col", "names", "bounds",
                    "stage", "engine"})
#: Boosted AdaSSP's options.
OPTIONS = OptionSpec((
    Option("variant", "choice", "scaled", choices=tuple(DEFAULTS),
           doc="'scaled' (bounded, rescaled data) or 'paper' (003's reference)"),
    Option("bounds_method", "choice", BOUNDS_METHOD, choices=BOUNDS_METHODS,
           doc="how 'auto' bounds are released"),
    Option("T", "int", T_DEFAULT, range=(1, 100_000), doc="boosting rounds, e.g. 100",
           message="T (boosting rounds) must be an integer in 1..100000, e.g. 100; "
                   "got {value!r}"),
    Option("shrinkage", "real", None, range=(0.0, 1.0), closed=(False, True), allow_none=True,
           doc="step size; default 0.1 for 'scaled', 1 for 'paper'"),
    Option("split", "any", None,
           doc="shares of mu^2 for Gram matrix, eigenvalue, rounds (and histogram bounds)"),
    Option("bounds_share", "real", BOUNDS_SHARE, range=(0.0, 1.0),
           doc="share of eps for bounds_method='quantile'"),
    Option("q", "real", BOUNDS_Q, range=(0.0, 0.5),
           doc="tail mass outside each bound of bounds_method='quantile'"),
    Option("rho", "real", RHO, range=(0.0, 1.0), doc="failure probability of the ridge rule"),
    Option("inference_share", "real", INFERENCE_SHARE, range=(0.0, 1.0), closed=(True, False),
           doc="share of eps for the residual sum of squares behind the standard errors "
               "(0: no standard errors; 'paper' variant: none)"),
    Option("residuals", "choice", RESIDUALS[0], choices=RESIDUALS,
           doc="rows the boosting's clipped residuals are computed on: 'unclipped' (mapped, "
               "not clipped to the box: no clipping bias for symmetric errors) or 'clipped'"),
    Option("cov_type", "choice", "nonrobust", choices=COV_TYPES,
           doc="'nonrobust' (constant error variance) or 'HC1' (private sandwich meat)"),
    Option("hc_share", "real", HC_SHARE, range=(0.0, 1.0), closed=(False, False),
           doc="share of eps and delta for the sandwich meat (cov_type='HC1' only)"),
), finish=_finish)


def _gdp_plan(eps: float, delta: float, opt: dict, hist: bool, rng, ledger,
              stage: str) -> GaussianGDP:
    """The Gaussian-DP plan of every release: (histograms,) Gram, eigenvalue, T rounds."""
    shares, T = opt["split"], opt["T"]
    parts = {"gram": (1, shares[0]), "lambda_min": (1, shares[1]), "rounds": (T, shares[2])}
    if hist:
        parts = {"bounds": (1, shares[3]), **parts}
    return GaussianGDP(eps, delta, parts, rng, ledger, stage=stage,
                       what=f"Boosted AdaSSP ({opt['variant']}): "
                            + ("log-histograms for bounds (L2 sensitivity sqrt(#bounded "
                               "columns)), " if hist else "")
                            + f"X'X, lambda_min and {T} rounds of X'r (L2 sensitivity 1 each)")


def _design_and_plan(Xa, ya, plan, opt: dict, eps: float, delta: float, rng, ledger,
                     stage: str, counts_of=None) -> tuple[BoundedDesign | None, GaussianGDP,
                                                          float]:
    """The bounded design (None for "paper") and the Gaussian-DP plan, in release order:
    pure-eps quantile bounds before the plan, histogram bounds as its first part.
    Returns ``(design, plan, eps_bounds)``."""
    hist = plan is not None and plan.private and opt["bounds_method"] == "hist"
    if hist and opt["split"][3] <= 0:
        raise ValidationError("split[3] (share of mu^2 for histogram bounds) must be > 0 when "
                              "bounds are estimated with bounds_method='hist'")
    design, eps_b = None, 0.0
    if plan is not None and not hist:   # public bounds, or pure-eps quantiles before the plan
        design, eps_b, _ = budgeted_design(Xa, ya, plan, method="quantile",
                                           share=opt["bounds_share"], eps=eps, delta=delta,
                                           q=opt["q"], rng=rng, ledger=ledger, stage=stage)
    gdp = _gdp_plan(eps - eps_b, delta, opt, hist, rng, ledger, stage)
    if hist:
        extra = () if counts_of is None else (counts_of,)      # dask: counts given
        design = bounded_design(Xa, ya, plan, hist_release(
            lambda v, s: (gdp.release("bounds", v, s), gdp.sigma("bounds", s)), *extra))
    return design, gdp, eps_b


def _fit(Xa, ya, design: BoundedDesign | None, plan: GaussianGDP, opt: dict,
         eps_b: float, budget: dict | None = None, rng=None, ledger=None,
         engine=None) -> Estimate:
    """Boost on the mapped rows (scaled) or on norm-clipped raw rows (paper); map back."""
    resid = None
    if design is not None:
        C = row_norm_bound(Xa.shape[1])        # ||x'|| <= sqrt(p), so ||x'/C|| <= 1
        Xn, yn = design.X / C, design.y
        if opt["residuals"] == "unclipped":    # see the module docstring (issue 16)
            Xl, yl = design.unclipped(Xa, ya, RESID_BOX)
            resid = (Xl / C, yl)
    else:
        Xn, yn = clip_rows(Xa), ya
    released = {}
    stats = None if engine is None else engine.boost_stats(
        design, C, RESID_BOX if opt["residuals"] == "unclipped" else None)
    extra = {"resid": resid} if stats is None else {"stats": stats}
    theta, ridge = boost(Xn, yn, plan, opt["T"], opt["shrinkage"], opt["rho"], out=released,
                         **extra)
    params = theta if design is None else design.to_original(theta / C)
    facts = {"clip": None if design is None else design.clip, "details": {
        "variant": opt["variant"], "bounds": "none" if design is None else design.source,
        "ridge": ridge, "mu": plan.mu_total, "sigma_round": plan.sigma("rounds", 1.0),
        "T": opt["T"], "shrinkage": opt["shrinkage"], "eps_bounds": eps_b}}
    if design is not None and design.unusable:
        return withheld(Xa.shape[1], Withheld.LABEL_BOUNDS, **facts)
    inference = None
    if design is not None and budget is not None and budget["eps_rss"] > 0:
        icol = design.intercept_col
        inference = release_and_infer(
            "bas", Xn, yn, theta, released, budget, rng=rng, ledger=ledger,
            n_hat=np.nan if icol is None else released["gram"][icol, icol] * C * C,
            icol=icol, row_bound2=1.0, x0sq=1.0 / (C * C), y_half=design.y_half,
            M=affine_matrix(lambda t: design.to_original(np.asarray(t) / C), theta.size),
            unusable=design.no_interval, resid=resid, residuals=opt["residuals"],
            rows=None if engine is None else engine.residual_rows(
                design, C, RESID_BOX if opt["residuals"] == "unclipped" else None))
    return Estimate(params=params, released=True, inference=inference, **facts)


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None,
             intercept_col: int | None = None, names=None, bounds="auto",
             variant: str = "scaled", T: int = T_DEFAULT, shrinkage: float | None = None,
             split=None, bounds_method: str = BOUNDS_METHOD, bounds_share: float = BOUNDS_SHARE,
             q: float = BOUNDS_Q, rho: float = RHO, inference_share: float = INFERENCE_SHARE,
             cov_type: str = "nonrobust", hc_share: float = HC_SHARE,
             residuals: str = RESIDUALS[0], stage: str = "regression", engine=None) -> Estimate:
    """Private linear regression by Boosted AdaSSP.

    Neighbours: add/remove one row. Every Gaussian release of the boosting has L2 sensitivity 1
    (rows of norm <= 1, residuals clipped to 1: Gram upper triangle and eigenvalue
    ``||x||^2``, ``X^T r``: ``||x|| |r|``); the histograms for ``"auto"`` bounds have
    ``sqrt(k)`` for k bounded columns. (eps, delta)-DP: all Gaussian releases together are
    ``mu``-GDP with ``delta(mu) <= delta`` at ``eps`` (``bounds_method="quantile"``: its
    exponential-mechanism quantiles take ``bounds_share * eps`` first, basic composition).

    Parameters
    ----------
    X, y, eps, delta, rng, intercept_col, names, bounds, stage
        As in :func:`dpstats.estimators.adassp.estimate` (``variant="paper"``: no bounds).
    ledger : Ledger, optional
        Charged once for the composed GDP release (detail: total ``mu`` and every part's
        per-release ``mu``; ``sigma = sensitivity / mu``), plus the quantile releases of
        ``bounds_method="quantile"``.
    variant : {"scaled", "paper"}
        See the module docstring.
    T, shrinkage
        Boosting rounds (100, as 003) and step size in (0, 1] ("scaled" 0.1, "paper" 1).
    split : 3 or 4 numbers, optional
        Shares of ``mu^2`` for the Gram matrix, the eigenvalue, all rounds together and the
        bounds histograms; default per variant (:data:`DEFAULTS`).
    bounds_method, bounds_share, q, rho
        As in :func:`dpstats.estimators.adassp.estimate` (``bounds_share`` and ``q`` only
        for ``bounds_method="quantile"``).
    inference_share, cov_type, hc_share, residuals
        Standard errors (:mod:`dpstats.estimators.inference.ssp`): ``inference_share`` of eps
        (0.05; 0, ``"paper"`` or dask: none) on the clipped residual sum of squares,
        ``"HC1"``: ``hc_share`` (0.15) of eps and delta more on a private sandwich meat;
        ``residuals``: "unclipped" or "clipped" rows for the residuals (module docstring).
    engine : object, optional
        Dask statistics (:mod:`dpstats.dask`): histograms, Gram, a pass a round; no rows.

    Returns
    -------
    Estimate
        ``params`` on the original scale; ``clip`` the released box (None for "paper");
        ``details`` (public): ``variant``, ``bounds`` ("public", "private", mixed, or "none"
        for "paper"), ``ridge`` (released, mapped scale), ``mu`` (total GDP parameter),
        ``sigma_round`` (noise of one round), ``T``, ``shrinkage``, ``eps_bounds``.

    Raises
    ------
    ValidationError
        For bad data or arguments, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> est = estimate(X, 2 + X[:, 1], eps=1e6, delta=1e-5, rng=rng, intercept_col=0,
    ...                bounds=(-4, 4))
    >>> np.round(est.params, 2).tolist(), est.details["T"]
    ([2.0, 1.0], 100)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    Xa, ya, intercept_col = check_inputs(X, y, intercept_col, rng)
    opt = validate_options(OPTIONS, {
        "variant": variant, "bounds_method": bounds_method, "T": T, "shrinkage": shrinkage,
        "split": split, "bounds_share": bounds_share, "q": q, "rho": rho,
        "inference_share": inference_share, "cov_type": cov_type, "hc_share": hc_share,
        "residuals": residuals})
    plan = plan_bounds(Xa, bounds, intercept_col=intercept_col, names=names) \
        if opt["variant"] == "scaled" else None
    inf = inference_budget(eps, delta, opt, opt["variant"] == "scaled")
    design, gdp, eps_b = _design_and_plan(Xa, ya, plan, opt, eps - inf["eps"],
                                          delta - inf["delta"], rng, ledger, stage,
                                          None if engine is None else engine.counts_of)
    return _fit(Xa, ya, design, gdp, opt, eps_b, inf, rng, ledger, engine)
