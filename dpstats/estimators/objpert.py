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
   delta, taken first; option ``inference_share``, 0 for none): the Fisher information at the
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

__all__ = ["estimate", "BOUNDS_SHARE", "GRAD_TOL", "OPTIONS", "COMMON"]

#: Share of eps and delta for private bounds (when any are needed): 0.25 beat 0.15 in the
#: simulation (benchmarks/glm_auto_rule.py --part obj: median gap to the majority class 0.072
#: against 0.053; its separate Gaussian release fails more often than DP-GD's GDP part).
BOUNDS_SHARE = 0.25
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
               "errors (stage 'inference'; 0: none), e.g. 0.1"),
))


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
    X, y, icol, plan = checked(X, y, intercept_col, rng, bounds, names, known_x_bounds)
    design, eps_b, delta_b = budgeted_design(
        X, y, plan, method="hist", share=opt["bounds_share"], eps=eps_all * (1.0 - inf),
        delta=delta_all * (1.0 - inf), q=0.01, rng=rng, ledger=ledger, stage=stage,
        counts_of=engine and engine.counts_of)
    return fit_in_box(X.shape[1], y, design, icol, plan, eps_all=eps_all, delta_all=delta_all,
                      inf=inf, eps_b=eps_b, delta_b=delta_b,
                      threshold_share=opt["threshold_share"], n_noisy=n_noisy, rng=rng,
                      ledger=ledger, stage=stage, engine=engine)


def checked(X, y, intercept_col, rng, bounds, names, known_x_bounds):
    """:func:`estimate`'s input checks and bounds plan: ``(X, y, icol, plan)``."""
    X, y, icol = check_inputs(X, y, intercept_col, rng)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("objective perturbation needs a label coded 0/1; recode it first")
    plan = plan_bounds(X, bounds, intercept_col=icol, names=names, label=False,
                       known=known_x_bounds)
    return X, y, icol, plan


def fit_in_box(p: int, y, design, icol, plan, *, eps_all: float, delta_all: float, inf: float,
               eps_b: float, delta_b: float, threshold_share: float, n_noisy, rng, ledger,
               stage: str, engine=None) -> Estimate:
    """:func:`estimate` after the released box (``design``, its bounds' budget ``eps_b``,
    ``delta_b``): objective perturbation, the threshold and the inference, with ``inf`` of
    ``(eps_all, delta_all)`` for the inference (``p`` columns of the design)."""
    eps, delta = eps_all * (1.0 - inf), delta_all * (1.0 - inf)
    eps_t, eps_c = ((eps * threshold_share, eps * COUNT_SHARE) if icol is not None
                    else (0.0, 0.0))
    kept = [j for j in design.kept if design.half[j] > 2.0**-30 or j == icol]
    s = math.sqrt(len(kept))
    rows = unit_rows(design, kept, s, y, engine)               # rows of L2 norm <= 1
    op = ObjectivePerturbation(len(kept), eps - eps_t - eps_c - eps_b, delta - delta_b, rng,
                               ledger, tol=GRAD_TOL, stage=stage,
                               what="logistic loss on rows scaled to L2 norm <= 1")
    theta_k = op.release(rows.ridge_fit(op.ridge, tol=GRAD_TOL, linear=op.b))
    t, only, beta = threshold_and_map(rows, theta_k, design, kept, s, icol, p,
                                      eps_t, eps_c, rng, ledger, stage)
    inference = _inference(rows, theta_k, design, kept, s, t, n_noisy, eps_all, delta_all, inf,
                           op, rng, ledger)
    details = {"ridge": op.ridge, "sigma": op.sigma, "threshold": t, "intercept_only": only,
               "bounds": plan.source(coarse=True), "eps_bounds": eps_b,
               "eps_threshold": eps_t, "eps_counts": eps_c}
    return Estimate(params=beta, released=True, inference=inference, clip=design.clip,
                    dropped=design.dropped, details=details)
