"""Private logistic regression by objective perturbation, with a private threshold.

Chaudhuri, Monteleoni & Sarwate (2011) and Kifer, Smith & Thakurta (2012): the noise enters the
objective as a random linear term, so its effect on the coefficients shrinks with the data's
own curvature (about ``1 / n``), where output perturbation's (:mod:`.outpert`) does not
(its sensitivity bound ``1 / ridge`` ignores the data). The decision threshold and the
intercept-only fallback are those of :mod:`.outpert`.

Neighbours: add/remove one row. Steps of :func:`estimate` (shares of the stage's ``(eps,
delta)``, basic composition):

1. **Bounds** (only for columns whose bounds are not public): :data:`BOUNDS_SHARE` of eps and
   of delta for one Gaussian release of log-scale histograms
   (:func:`dpstats.estimators.bounded.budgeted_design`, L2 sensitivity ``sqrt(#columns)``).
   Columns are mapped into ``[-1, 1]`` and rows divided by ``sqrt(p')``: ``||u_i|| <= 1``.
2. **Objective perturbation** (:class:`dpstats.mechanisms.objective.ObjectivePerturbation`,
   the rest of eps and delta): the mechanism draws ``b`` and sets the ridge; ``theta``
   minimises ``sum_i l(u_i . t, y_i) + ridge/2 ||t||^2 + b . t`` to gradient norm
   ``GRAD_TOL`` and is released with the mechanism's small output noise. The logistic loss on
   unit-norm rows has gradient factor ``|sigmoid - y| <= 1`` and a rank-one Hessian with factor
   ``<= 1/4``, the mechanism's conditions. No row count is used.
3. **Threshold** (:data:`~dpstats.estimators.outpert.THRESHOLD_SHARE` of eps) and **class
   counts** (:data:`~dpstats.estimators.outpert.COUNT_SHARE`), exactly as in
   :mod:`dpstats.estimators.outpert` (exponential mechanism over thresholds including the two
   intercept-only models, monotone utility of sensitivity 1; Laplace class counts).

4. **Inference** (:data:`~dpstats.estimators.inference.glm.OBJPERT_SHARE`, 10%, of eps and
   delta, taken first; option ``inference_share``, 0 for none; ``method="auto"`` passes
   :func:`inference_share`'s, up to :data:`SHARE_MAX` from 7 columns): the Fisher information at the
   released fit, analytic Gaussian on its upper triangle, L2 sensitivity 1/4 (ledger stage
   ``"inference"``, :func:`dpstats.mechanisms.curvature.release_curvature`); standard errors
   from it and the perturbation's known noise by parametric bootstrap
   (:mod:`dpstats.estimators.inference.glm`; Ferrando, Wang & Sheldon 2022). The intervals
   are centred at the coefficients minus the bootstrap's estimated bias (the ridge's
   shrinkage, the threshold's shift; ``Inference.bias``), except where the private box's cut
   tail moves the fit (symmetric about the coefficients there).

The estimator is ``(eps, delta)``-DP. Coefficients map back to the original scale for the
winsorised predictor (``Estimate.clip``). On a dask frame (``engine=``,
:mod:`dpstats.dask.glm`) the solver's evaluations and the threshold's counts are passes.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from ..mechanisms.accountant import Ledger
from ..mechanisms.curvature import release_curvature
from ..mechanisms.gdp import gdp_mu
from ..mechanisms.objective import ObjectivePerturbation
from ..validation import Option, OptionSpec, check_delta, check_eps, validate_options
from .bounded import budgeted_design, check_inputs, plan_bounds
from .inference.glm import OBJPERT_SHARE, perturbation_inference
from .outcome import Estimate
from .outpert import (
    COUNT_SHARE,
    THRESHOLD_SHARE,
    threshold_and_map,
    to_original,
    unit_rows,
)

__all__ = ["estimate", "inference_share", "BOUNDS_SHARE", "GRAD_TOL", "OPTIONS", "COMMON",
           "SHARE_REF", "SHARE_MAX", "SHARE_HEADROOM"]

#: Share of eps and delta for private bounds (when any are needed): 0.25 beat 0.15 in the
#: simulation (benchmarks/glm_auto_rule.py --part obj: median gap to the majority class 0.072
#: against 0.053; its separate Gaussian release fails more often than DP-GD's GDP part).
BOUNDS_SHARE = 0.25
#: :func:`inference_share`'s reference: the share (of the fit's eps and delta) that opened
#: intervals in every fit at 11 columns, n = 20,000, eps 1 (fit eps 0.95; design note 75:
#: 500 fits, coverage 0.960), and its rows, columns and fit eps.
SHARE_REF, REF_ROWS, REF_COLS, REF_EPS = 0.20, 20_000.0, 11, 0.95
#: The information's smallest eigenvalue falls like ``n / k`` (rows scaled by ``sqrt(k)``), a
#: k x k noise matrix's spectrum spreads like ``sqrt(k)``: the noise allowed is ``n / k^1.5``.
SHARE_POWER = 1.5
#: :func:`inference_share`'s largest share (its cost to the coefficients: design note 75).
SHARE_MAX = 0.25
#: A share above :data:`OBJPERT_SHARE` only while ``n_hat * mu`` at the fit's reduced eps is at
#: least this many times ``method="auto"``'s switch to objective perturbation.
SHARE_HEADROOM = 2.0
#: The solver's gradient-norm tolerance on the sum objective (sets the output noise).
GRAD_TOL = 1e-6

#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "intercept_col", "names", "bounds", "stage",
                    "known_x_bounds", "engine", "n_noisy"})
#: Objective perturbation's options.
OPTIONS = OptionSpec((
    Option("threshold_share", "real", THRESHOLD_SHARE, range=(0.0, 1.0),
           doc="share of eps for the private threshold, e.g. 0.15"),
    Option("bounds_share", "real", BOUNDS_SHARE, range=(0.0, 1.0),
           doc="share of eps and delta for private bounds, e.g. 0.25"),
    Option("inference_share", "real", OBJPERT_SHARE, range=(0.0, 1.0), closed=(True, False),
           doc="share of eps and delta for the Fisher information behind the standard "
               "errors (stage 'inference'; 0: none), e.g. 0.1; method='auto' sets it by "
               "inference_share()"),
))


def inference_share(k: int, eps: float, delta: float, n_hat: float | None,
                    switch: float) -> float:
    """The share of the fit's ``(eps, delta)`` for the Fisher information when
    ``method="auto"`` runs objective perturbation, from public values and the released count.

    :data:`OBJPERT_SHARE` (0.10) up to 6 columns. From 7 (``k`` columns, intercept included),
    the share whose Gaussian-DP ``mu`` is the reference's (:data:`SHARE_REF` at
    :data:`REF_COLS` columns, :data:`REF_ROWS` rows, fit eps :data:`REF_EPS`) times
    ``(k / REF_COLS)^SHARE_POWER * REF_ROWS / n_hat``: the released information's noise against
    a data-independent proxy of its smallest eigenvalue, as at the reference. Kept within
    ``[OBJPERT_SHARE, SHARE_MAX]``, and lowered (not below 0.10) until ``n_hat * mu`` at the
    eps and delta left to the fit, rescaled so that 0.10 gives ``method="auto"``'s own
    ``n_hat * mu``, is at least :data:`SHARE_HEADROOM` times ``switch`` (the switch's
    ``n_hat * mu``, :func:`dpstats.estimators.glm_auto.objpert_rows`): near the switch the
    share stays 0.10, so objective perturbation keeps its eps where it is fragile.

    Reads ``k``, ``eps``, ``delta``, ``switch`` (public) and ``n_hat`` (released) only.

    >>> inference_share(6, 0.95, 1e-5, 20_000.0, 1000.0)
    0.1
    >>> round(inference_share(11, 0.95, 1e-5, 20_000.0, 1354.0), 3)
    0.2
    >>> inference_share(11, 0.95, 1e-5, 7_000.0, 1354.0)
    0.1
    """
    if k <= 6 or n_hat is None or not n_hat > 0:
        return OBJPERT_SHARE
    eps, delta = check_eps(eps), check_delta(delta)
    target = (gdp_mu(REF_EPS * SHARE_REF, delta * SHARE_REF)
              * (k / REF_COLS) ** SHARE_POWER * REF_ROWS / float(n_hat))

    def fit_ok(s: float) -> bool:
        keep = (1.0 - s) / (1.0 - OBJPERT_SHARE)
        return float(n_hat) * gdp_mu(eps * keep, min(delta * keep, 0.5)) >= (
            SHARE_HEADROOM * switch)

    def bisect(ok, lo: float, hi: float) -> tuple[float, float]:   # ok(lo), not ok(hi)
        for _ in range(40):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo, hi

    def short(s: float) -> bool:                        # s too small to meet the target
        return gdp_mu(eps * s, delta * s) < target

    if not fit_ok(OBJPERT_SHARE) or not short(OBJPERT_SHARE):
        return OBJPERT_SHARE
    share = SHARE_MAX if short(SHARE_MAX) else bisect(short, OBJPERT_SHARE, SHARE_MAX)[1]
    if not fit_ok(share):
        share = bisect(fit_ok, OBJPERT_SHARE, share)[0]
    return float(share)


def _inference(rows, theta_k, design, kept, s: float, t: float, n_noisy, eps: float,
               delta: float, share: float, op, rng, ledger):
    """Standard errors (:mod:`dpstats.estimators.inference.glm`): the Fisher information at
    the released fit, a Gaussian release with ``share`` of the fit's eps and delta (stage
    "inference"); None when ``share`` is 0. On dask (``rows`` without ``U``) the exact sum
    comes from the workers (:meth:`dpstats.dask.glm.DaskRows.fisher`), the noise from here."""
    if share <= 0:
        return None
    U = getattr(rows, "U", None)
    exact = rows.fisher(theta_k) if U is None else None
    return perturbation_inference(
        "objpert", U, theta_k, design, kept, lambda v: to_original(design, v, s), t, n_noisy,
        eps, release=lambda V, w: release_curvature(
            V, w, 0.25, eps * share, delta * share, rng, ledger, stage="inference",
            what="Fisher information of the logistic fit", exact=exact),
        ridge=op.ridge, noise={"s": op.sigma, "sigma_out": op.sigma_out}, share=share,
        share_of="eps", row_scale=s)


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, bounds: object = "auto",
             intercept_col: int | None = None, names=None, stage: str = "regression",
             known_x_bounds: dict | None = None, threshold_share: float = THRESHOLD_SHARE,
             bounds_share: float = BOUNDS_SHARE, inference_share: float = OBJPERT_SHARE,
             n_noisy: float | None = None, engine=None) -> Estimate:
    """Private logistic regression by objective perturbation and a private threshold.

    Parameters
    ----------
    X, y : arrays
        Design matrix (rows are the privacy units) and 0/1 label.
    eps, delta : float
        Budget of this stage (module docstring for its split).
    rng, ledger, bounds, intercept_col, names, stage, known_x_bounds
        As in :func:`dpstats.estimators.dpgd.estimate`.
    threshold_share, bounds_share, inference_share
        Options (:data:`OPTIONS`; standard errors: :mod:`dpstats.estimators.inference.glm`).
    n_noisy : float, optional (the released row count, for the intervals' gate only)
    engine : object, optional
        Dask statistics (:mod:`dpstats.dask.glm`; X and y have no rows). On dask the Fisher
        information's exact sum comes from the threshold's pass on the workers (no extra
        pass); its noise, and everything after, is drawn here as in memory.

    Returns
    -------
    Estimate
        ``details``: public facts (``ridge``, ``sigma``, ``threshold``, ...).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> y = (rng.uniform(size=5000) < 1 / (1 + np.exp(-3 * X[:, 1]))).astype(float)
    >>> est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, bounds=(-1, 1), intercept_col=0)
    >>> bool(2.0 < est.params[1] < 4.0)
    True
    """
    opt = validate_options(OPTIONS, {"threshold_share": threshold_share, "bounds_share":
                                     bounds_share, "inference_share": inference_share})
    eps_all, delta_all, inf = check_eps(eps), check_delta(delta), opt["inference_share"]
    eps, delta = eps_all * (1.0 - inf), delta_all * (1.0 - inf)
    X, y, icol = check_inputs(X, y, intercept_col, rng)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("objective perturbation needs a label coded 0/1; recode it first")
    plan = plan_bounds(X, bounds, intercept_col=icol, names=names, label=False,
                       known=known_x_bounds)
    eps_t, eps_c = ((eps * opt["threshold_share"], eps * COUNT_SHARE) if icol is not None
                    else (0.0, 0.0))
    design, eps_b, delta_b = budgeted_design(
        X, y, plan, method="hist", share=opt["bounds_share"], eps=eps, delta=delta, q=0.01,
        rng=rng, ledger=ledger, stage=stage, counts_of=engine and engine.counts_of)
    kept = [j for j in design.kept if design.half[j] > 2.0**-30 or j == icol]
    s = math.sqrt(len(kept))
    rows = unit_rows(design, kept, s, y, engine)               # rows of L2 norm <= 1
    op = ObjectivePerturbation(len(kept), eps - eps_t - eps_c - eps_b, delta - delta_b, rng,
                               ledger, tol=GRAD_TOL, stage=stage,
                               what="logistic loss on rows scaled to L2 norm <= 1")
    theta_k = op.release(rows.ridge_fit(op.ridge, tol=GRAD_TOL, linear=op.b))
    t, only, beta = threshold_and_map(rows, theta_k, design, kept, s, icol, X.shape[1],
                                      eps_t, eps_c, rng, ledger, stage)
    inference = _inference(rows, theta_k, design, kept, s, t, n_noisy, eps_all, delta_all, inf,
                           op, rng, ledger)
    details = {"ridge": op.ridge, "sigma": op.sigma, "threshold": t, "intercept_only": only,
               "bounds": plan.source(coarse=True), "eps_bounds": eps_b,
               "eps_threshold": eps_t, "eps_counts": eps_c}
    return Estimate(params=beta, released=True, inference=inference, clip=design.clip,
                    dropped=design.dropped, details=details)
