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
from ..mechanisms.additive import analytic_gaussian_sigma
from ..mechanisms.curvature import release_curvature
from ..mechanisms.gdp import detection_threshold, log_grid_edges
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

__all__ = ["estimate", "box_share", "BOUNDS_SHARE", "GRAD_TOL", "OPTIONS", "COMMON",
           "SHARE_MARGIN", "SHARE_CAP"]

#: Share of eps and delta for private bounds (when any are needed): 0.25 beat 0.15 in the
#: simulation (benchmarks/glm_auto_rule.py --part obj: median gap to the majority class 0.072
#: against 0.053; its separate Gaussian release fails more often than DP-GD's GDP part).
BOUNDS_SHARE = 0.25
#: The solver's gradient-norm tolerance on the sum objective (sets the output noise).
GRAD_TOL = 1e-6

#: The share rule (:func:`box_share`): the predicted smallest eigenvalue of the information
#: must be at least this many times the noise's spectrum spread ``2 sigma sqrt(k)``.
SHARE_MARGIN = 2.5
#: The share rule's largest share (above it the rule keeps :data:`OBJPERT_SHARE`).
SHARE_CAP = 0.20
#: Weight of the predicted information (the logistic weight's bound ``s (1 - s) <= 1/4``).
SHARE_WEIGHT = 0.25


def column_moments(noisy, sigma: float, mid: float, half: float) -> tuple[float, float]:
    """``(E[x], E[x^2])`` of one column mapped by its box (``(x - mid) / half`` clipped to
    ``[-1, 1]``), read from its released log-histogram ``noisy`` (noise sd ``sigma`` per cell):
    the cells above :func:`~dpstats.mechanisms.gdp.detection_threshold` at their centres.
    Post-processing of released values; ``(0, 1/3)`` (uniform) when no cell clears it.

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 500.0
    >>> [round(v, 3) for v in column_moments(h, 1.0, 0.0, 2.0)]
    [0.0, 0.3]
    """
    c = np.asarray(noisy, dtype=np.float64)
    hit = np.flatnonzero(c > detection_threshold(sigma, c.size))
    if hit.size == 0:
        return 0.0, 1.0 / 3.0
    left, right = log_grid_edges(hit)
    u = np.clip((left / 2.0 + right / 2.0 - mid) / half, -1.0, 1.0)
    w = c[hit] / c[hit].sum()
    return float(w @ u), float(w @ u**2)


def predicted_information(half, mid, hist_rows, hist_sigma: float, n_hat: float,
                          k: int) -> float:
    """:func:`box_share`'s predicted smallest eigenvalue of the Fisher information on the unit
    rows, ``n_hat SHARE_WEIGHT lam_min(M) / k`` (``M``: the second moments of ``(1, x)``, the
    features independent, from :func:`column_moments`); post-processing of released values.

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 500.0
    >>> round(predicted_information([2.0], [0.0], [h], 1.0, 1000.0, 2), 2)
    37.44
    """
    mom = [column_moments(h, hist_sigma, m, s) for h, m, s in zip(hist_rows, mid, half,
                                                                   strict=True)]
    a = np.array([1.0] + [e for e, _ in mom])
    M = np.outer(a, a) + np.diag([0.0] + [max(q - e * e, 0.0) for e, q in mom])
    return float(n_hat) * SHARE_WEIGHT * float(np.linalg.eigvalsh(M)[0]) / k


def box_share(half, mid, hist_rows, hist_sigma: float, n_hat, k: int, eps: float,
              delta: float, *, margin: float = SHARE_MARGIN, cap: float = SHARE_CAP,
              base: float = OBJPERT_SHARE) -> float:
    """Share of the whole ``(eps, delta)`` for the Fisher information, from released values:
    the box (``half``, ``mid`` of the ``k - 1`` kept features), their released log-histograms
    (``hist_rows``, None for a column without one; noise sd ``hist_sigma``), the released
    count ``n_hat``, ``k`` (features plus intercept), ``eps`` and ``delta`` (public).

    Predicted smallest eigenvalue of the information on the unit rows (``u = (1, x) /
    sqrt(k)``, features independent): ``lam = n_hat SHARE_WEIGHT lam_min(M) / k``, ``M`` the
    second moments of ``(1, x)`` from :func:`column_moments`. The smallest share in
    ``[base, cap]`` whose curvature noise (sd ``sigma`` of
    :func:`~dpstats.mechanisms.curvature.release_curvature`, sensitivity 1/4) has
    ``lam >= margin 2 sigma sqrt(k)``; ``base`` when ``base`` already meets it, when ``cap``
    cannot, or when a column has no released histogram (public bounds) or ``n_hat`` is None.
    Derivation: benchmarks/glm_box_share.py (design note "NN").

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 5000.0
    >>> box_share([2.0] * 10, [0.0] * 10, [h] * 10, 60.0, 20_000.0, 11, 1.0, 1e-5) > 0.10
    True
    >>> box_share([2.0] * 10, [0.0] * 10, [None] * 10, 60.0, 20_000.0, 11, 1.0, 1e-5)
    0.1
    """
    if n_hat is None or not n_hat > 0 or any(h is None for h in hist_rows):
        return base
    lam = predicted_information(half, mid, hist_rows, hist_sigma, n_hat, k)

    def ok(share: float) -> bool:
        sig = analytic_gaussian_sigma(0.25, eps * share, delta * share)
        return lam >= margin * 2.0 * sig * math.sqrt(k)

    if ok(base) or not ok(cap):
        return base
    lo, hi = base, cap                                  # not ok(lo), ok(hi)
    for _ in range(30):
        mid_s = (lo + hi) / 2.0
        lo, hi = (lo, mid_s) if ok(mid_s) else (mid_s, hi)
    return float(hi)


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
           allow_none=True,
           doc="share of eps and delta for the Fisher information behind the standard "
               "errors (stage 'inference'; 0: none), e.g. 0.1"),
))


def _share_of(design, kept, icol, n_noisy, eps: float, delta: float) -> float:
    """:func:`box_share` on the released box and histograms of the kept features."""
    hist = getattr(design.bounds, "hist", None)
    feats = [j for j in kept if j != icol]
    rows = [None if hist is None or j not in hist.cols else hist.noisy[hist.cols[j]]
            for j in feats]
    if icol is None or not feats:
        return OBJPERT_SHARE
    return box_share(design.half[feats], design.mid[feats], rows,
                     0.0 if hist is None else hist.sigma, n_noisy, len(kept), eps, delta,
                     margin=SHARE_MARGIN, cap=SHARE_CAP)


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
    first = OBJPERT_SHARE if inf is None else inf       # the bounds' split: as at share 0.10
    X, y, icol = check_inputs(X, y, intercept_col, rng)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("objective perturbation needs a label coded 0/1; recode it first")
    plan = plan_bounds(X, bounds, intercept_col=icol, names=names, label=False,
                       known=known_x_bounds)
    design, eps_b, delta_b = budgeted_design(
        X, y, plan, method="hist", share=opt["bounds_share"], eps=eps_all * (1.0 - first),
        delta=delta_all * (1.0 - first), q=0.01, rng=rng, ledger=ledger, stage=stage,
        counts_of=engine and engine.counts_of)
    kept = [j for j in design.kept if design.half[j] > 2.0**-30 or j == icol]
    if inf is None:                                     # the share from released values
        inf = _share_of(design, kept, icol, n_noisy, eps_all, delta_all)
    eps, delta = eps_all * (1.0 - inf), delta_all * (1.0 - inf)
    eps_t, eps_c = ((eps * opt["threshold_share"], eps * COUNT_SHARE) if icol is not None
                    else (0.0, 0.0))
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
               "eps_threshold": eps_t, "eps_counts": eps_c, "inference_share": inf}
    return Estimate(params=beta, released=True, inference=inference, clip=design.clip,
                    dropped=design.dropped, details=details)
