"""Private Frank-Wolfe over an L1 ball (Talwar, Thakurta & Zhang 2015, as used in 001), with the
optional private screening rule of 001 (:mod:`dpstats.estimators.screening`).

Neighbours: add/remove one row. Steps of :func:`estimate`:

1. **Bounds.** Every column except the intercept and (squared loss) the label are mapped into
   ``[-1, 1]`` with :func:`dpstats.mechanisms.bounds.to_unit` (clipping), using public bounds or
   private ones (``bounds_share`` of ``eps`` and of ``delta``: one Gaussian release of log-scale
   histograms, :func:`dpstats.estimators.bounded.histogram_bounds`, as AdaSSP does; or
   ``bounds_method="quantile"``, :func:`dpstats.mechanisms.bounds.private_bounds`). The intercept
   column stays 1. Without an intercept the bounds are made symmetric (``[-B, B]``) so that
   the map is linear and needs no intercept. Logistic labels ``{0, 1}`` become ``t = 2 y - 1``.
2. **Frank-Wolfe** on the sum loss ``F(w) = sum_r l(x_r . w, y_r)`` over ``||w||_1 <= lam``
   (``lam = radius``), ``w_0 = 0``, step ``2 / (t + 1)`` at iteration ``t = 1..T`` (the first step
   jumps to the first chosen vertex). Each iteration picks a vertex ``+-lam e_j`` minimising
   ``<v, grad F(w)>`` with the **exponential mechanism** (:func:`dpstats.mechanisms.exponential`,
   Gumbel-max on the scores ``-<v, grad F>``, not monotone, so noise scale
   ``2 Delta / eps_iter``).

   *Sensitivity.* One row changes ``grad F`` by ``l'(u_r, y_r) x_r``; ``|x_rj| <= 1`` and
   ``|u_r| <= ||x_r||_inf ||w||_1 <= lam`` (every iterate is a convex combination of vertices),
   so each score ``+-lam (grad F)_j`` moves by at most ``Delta = lam * M`` with
   ``M = sup |l'|`` (:func:`~dpstats.estimators.screening.derivative_bound`): squared loss
   ``(u - y)^2 / 2`` with ``|y| <= 1`` gives ``M = lam + 1``, so ``Delta = lam (lam + 1)`` (not
   ``lam``: the squared loss is *not* 1-Lipschitz here); logistic loss gives
   ``M = sigmoid(lam) < 1``, ``Delta = lam sigmoid(lam)``. Sum form: no row count is needed.

   *Composition.* ``T`` adaptive ``eps_iter``-DP choices cost ``(eps1, delta1)`` by advanced
   composition (:func:`fw_iteration_eps`; basic composition when it is better or
   ``delta1 = 0``).
3. **Screening** (``screen=``): after the FW step at the screening iterations, features whose
   noisy rule statistic is negative are set to 0 (001 Algorithm 1; they may be chosen again
   later; the intercept is never screened). Budget ``(eps2, delta2)``, see
   :func:`~dpstats.estimators.screening.screen_plan`. With screening on,
   ``eps1 = eps2 = (1 - bounds share) eps / 2`` (``screen_share``) and
   ``delta1 = delta2 = delta / 2``: total ``(eps1 + eps2, delta1 + delta2)``.
4. Coefficients are mapped back to the original scale (post-processing). The fit is exact for
   the *winsorised* predictor ``np.clip(x, clip_lo, clip_hi) @ params`` (``Estimate.clip``,
   as for AdaSSP); ``x @ params`` extrapolates linearly beyond it, which on heavy-tailed files
   (cpu_act, house_16H) turns test R^2 from about 0.1-0.2 into large negative values.

Ledger: the ``T`` vertex choices are charged as one composed line (``eps1, delta1``) and the
``l`` screening releases as another (``eps2, delta2``), both before the loop starts (budget,
:func:`_charge`; loop, :func:`_run`; result, :func:`_result`); the number of single mechanism
calls is checked against them at the end. On a dask frame (``engine=``, :mod:`dpstats.dask.fw`)
the loop and releases are these; each gradient (and screening's components) is summed over the
partitions at the released iterate: one pass per iteration.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from ..mechanisms import exponential
from ..mechanisms.accountant import Ledger, advanced_composition
from ..mechanisms.plan import ReleasePlan
from ..validation import Option, OptionSpec, check_choice, check_delta, check_eps, validate_options
from .bounded import BOUNDS_METHODS, BoundedDesign, budgeted_design, check_inputs, plan_bounds
from .fw_loop import frank_wolfe
from .inference.constrained import fw_inference
from .outcome import Estimate, Withheld, withheld
from .screening import PrivateScreener, ScreenPlan, derivative_bound, screen_plan

__all__ = ["estimate", "frank_wolfe", "fw_iteration_eps", "score_sensitivity",
           "screen_iterations", "DEFAULT_RADIUS", "DEFAULT_T", "BOUNDS_SHARE", "SCREEN_SHARE",
           "BOUNDS_METHOD", "OPTIONS", "COMMON"]

#: Default L1 radius on the unit scale, per loss (measured at eps = ln 3 on the regression and
#: classification files of the shared data: squared 2 beat 0.5 and 1 and tied 3; logistic 10
#: beat 1, 2, 5 and 20).
DEFAULT_RADIUS = {"squared": 2.0, "logistic": 10.0}
#: Default number of Frank-Wolfe iterations: 50-100 beat 300 and 1000 (001's T) on the same
#: files, because the per-iteration eps shrinks like 1 / sqrt(T).
DEFAULT_T = 100
#: Default share of eps (and of delta, "hist") for private bounds when any bound is "auto"
#: (0.1 and 0.2 tied; 0.2 is AdaSSP's default).
BOUNDS_SHARE = 0.2
#: Default private-bounds method: "hist" (Gaussian log-histograms) or "quantile".
BOUNDS_METHOD = "hist"
#: Default share of the rest of eps (and of delta) for screening, when screening is on.
SCREEN_SHARE = 0.5
_LN2 = math.log(2.0)


def score_sensitivity(loss: str, radius: float) -> float:
    """Sensitivity of every vertex score ``+-radius (grad F)_j`` (module docstring, step 2).

    >>> score_sensitivity("squared", 5.0)
    30.0
    """
    return radius * derivative_bound(loss, radius)


def fw_iteration_eps(eps1: float, delta1: float, T: int) -> tuple[float, float]:
    """``(eps_iter, delta_used)``: the largest per-iteration eps whose ``T``-fold advanced
    composition (slack ``delta1``) is at most ``eps1``; basic composition
    (``eps1 / T``, delta 0) when that is not smaller or ``delta1 = 0``.

    >>> e, d = fw_iteration_eps(1.0, 1e-5, 1000)
    >>> round(e, 6), d
    (0.006326, 1e-05)
    """
    basic = eps1 / T
    # advanced composition only beats basic when e^eps - 1 < 1, i.e. eps_iter < ln 2
    if delta1 <= 0 or T == 1 or basic >= _LN2:
        return basic, 0.0
    lo, hi = basic, min(eps1, _LN2)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if advanced_composition(mid, 0.0, T, delta1)[0] <= eps1 else (lo, mid)
    return (lo, delta1) if lo > basic * (1 + 1e-12) else (basic, 0.0)


def screen_iterations(screen, T: int) -> tuple[int, ...]:
    """Iterations (1-based) after which the rule runs: ``None`` none, ``"every"`` all,
    ``"last"`` only ``T``, an integer ``j`` every j-th (``j, 2j, ...``)."""
    if screen is None:
        return ()
    if isinstance(screen, str) and screen in ("every", "last"):
        return tuple(range(1, T + 1)) if screen == "every" else (T,)
    if isinstance(screen, numbers.Integral) and not isinstance(screen, bool) \
            and 1 <= int(screen) <= T:
        return tuple(range(int(screen), T + 1, int(screen)))
    raise ValidationError(f"screen must be None, 'every', 'last' or an integer j in 1..T={T} "
                          f"(screen every j-th iteration); got {screen!r}")


def _finish(values: dict, fixed) -> dict:
    """Defaults from the ``loss`` the caller fixes; screening needs T and ``delta > 0``."""
    loss = check_choice(fixed.get("loss", "squared"), ("squared", "logistic"), "loss")
    if values["radius"] is None:
        values["radius"] = DEFAULT_RADIUS[loss]
    if values["T"] is None:
        values["T"] = DEFAULT_T
    if screen_iterations(values["screen"], values["T"]) and fixed.get("delta") == 0:
        raise ValidationError("screening uses the Gaussian mechanism and needs delta > 0; "
                              "give delta (e.g. 1e-6) or screen=None")
    return values


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "loss", "intercept_col", "names", "bounds",
                    "stage", "engine"})
#: Frank-Wolfe's options.
OPTIONS = OptionSpec((
    Option("radius", "real", None, range=(0.0, None), allow_none=True,
           doc="the L1 radius on the [-1, 1] scale, e.g. 1"),
    Option("T", "int", None, range=(1, None), allow_none=True, doc="Frank-Wolfe iterations"),
    Option("screen", "any", None, doc="None, 'every', 'last' or j: screen every j-th iteration"),
    Option("screen_share", "real", SCREEN_SHARE, range=(0.0, 1.0),
           doc="share of the non-bounds eps and delta for screening"),
    Option("bounds_share", "real", BOUNDS_SHARE, range=(0.0, 1.0),
           doc="share of eps (and of delta for 'hist') for private bounds"),
    Option("bounds_mode", "choice", "auto", choices=("auto", "column", "global"),
           doc="mode of bounds_method='quantile'"),
    Option("bounds_method", "choice", BOUNDS_METHOD, choices=BOUNDS_METHODS,
           doc="how 'auto' bounds are released"),
    Option("q", "real", 0.01, range=(0.0, 0.5),
           doc="tail mass outside each bound of bounds_method='quantile'"),
), finish=_finish)


@dataclass(frozen=True)
class _Budget:
    """The Frank-Wolfe and screening budget, charged up front as two composed lines."""

    eps_fw: float
    delta_fw: float
    eps_iter: float
    sensitivity: float
    eps_screen: float
    delta_screen: float
    iterations: tuple[int, ...]
    choices: ReleasePlan
    screening: ScreenPlan | None
    screens: ReleasePlan | None


def _design(X, y, plan, opt: dict, eps: float, delta: float, rng, ledger,
            stage: str, counts_of=None) -> tuple[BoundedDesign, float, float]:
    """Release the private bounds ``plan`` needs; ``(design, eps_bounds, delta_bounds)``."""
    if plan.private and opt["bounds_method"] == "hist" and delta == 0:
        raise ValidationError("bounds_method='hist' (private bounds by a Gaussian release) "
                              "needs delta > 0; give delta, public bounds, or "
                              "bounds_method='quantile'")
    return budgeted_design(X, y, plan, method=opt["bounds_method"], share=opt["bounds_share"],
                           eps=eps, delta=delta, q=opt["q"], rng=rng, ledger=ledger,
                           stage=stage, mode=opt["bounds_mode"], box="bounds",
                           counts_of=counts_of)


def _charge(eps_rest: float, delta_rest: float, opt: dict, loss: str, p: int, ledger,
            stage: str) -> _Budget:
    """Split the rest of the budget between the vertex choices and screening; charge both."""
    T, radius = opt["T"], opt["radius"]
    iterations = screen_iterations(opt["screen"], T)
    eps2 = opt["screen_share"] * eps_rest if iterations else 0.0
    delta2 = opt["screen_share"] * delta_rest if iterations else 0.0
    eps1, delta1 = eps_rest - eps2, delta_rest - delta2
    eps_iter, delta_fw = fw_iteration_eps(eps1, delta1, T)
    sens = score_sensitivity(loss, radius)
    comp = "advanced composition" if delta_fw > 0 else "basic composition"
    choices = ReleasePlan(
        f"exponential x {T} (composed)", T, eps1, delta_fw, ledger, stage=stage,
        detail=f"Frank-Wolfe vertex choices, {loss} loss, L1 radius {radius:g}; "
               f"score sensitivity {sens:.4g}; eps {eps_iter:.4g} each, {comp}")
    plan = screen_plan(eps2, delta2, len(iterations), loss, radius, p) if iterations else None
    screens = None
    if plan is not None:
        screens = ReleasePlan(
            f"gaussian x {plan.releases} (composed)", len(iterations), eps2, delta2, ledger,
            stage=f"{stage}: screening",
            detail=f"screening components; L2 sensitivity {plan.sensitivity:.4g} "
                   f"(first {plan.sensitivity_first:.4g}); (eps, delta) = "
                   f"({plan.eps_iter:.4g}, {plan.delta_iter:.3g}) each, "
                   f"{plan.composition} composition")
    return _Budget(eps1, delta_fw, eps_iter, sens, eps2, delta2, iterations, choices, plan,
                   screens)


def _run(design: BoundedDesign, y, loss: str, opt: dict, budget: _Budget, rng,
         stage: str, engine=None) -> tuple[np.ndarray, np.ndarray | None]:
    """The Frank-Wolfe loop on the mapped data. Single releases are covered by the plans
    charged in :func:`_charge`, so the mechanisms get no ledger here; the number of releases
    is checked against the plans at the end. ``engine``: dask, one pass per gradient."""
    def choose(scores):
        budget.choices.take()
        return exponential(-scores, budget.sensitivity, budget.eps_iter, rng, None,
                           what="Frank-Wolfe vertex")

    if engine is not None:                # dask (dpstats.dask.fw): the same loop and releases
        w, mask, calls = engine.frank_wolfe(design, loss, opt["radius"], opt["T"], choose,
                                            budget.iterations, budget.screening, rng, stage)
    else:
        from .fw_sums import GridMatrix
        Xt = np.ascontiguousarray(design.X.T)
        grid = GridMatrix(Xt.T, 1.0)      # quantised once: every gradient and the norms
        yu = design.y if loss == "squared" else 2.0 * y - 1.0
        screener = None if budget.screening is None else PrivateScreener(
            Xt, loss, opt["radius"], budget.screening, rng, None, stage, grid=grid)
        w, mask = frank_wolfe(Xt, yu, loss=loss, radius=opt["radius"], T=opt["T"],
                              choose=choose, screen_at=budget.iterations, screener=screener,
                              protect=design.intercept_col, grid=grid)
        calls = 0 if screener is None else screener.calls
    budget.choices.finish()               # the composed charges cover exactly these releases
    if budget.screens is not None:
        budget.screens.used = calls
        budget.screens.finish()
    return w, mask


def _result(design: BoundedDesign, w, mask, loss: str, opt: dict, budget: _Budget,
            eps_b: float, delta_b: float) -> Estimate:
    """Coefficients on the original scale (post-processing) and the public facts."""
    feat = [j for j in range(design.mid.size) if j != design.intercept_col]
    details = {"loss": loss, "radius": opt["radius"], "T": opt["T"],
               "score_sensitivity": budget.sensitivity, "eps_iter": budget.eps_iter,
               "eps_fw": budget.eps_fw, "delta_fw": budget.delta_fw, "bounds": design.source,
               "eps_bounds": eps_b, "delta_bounds": delta_b, "screen": opt["screen"],
               "x_bounds": np.column_stack([design.clip_lo[feat], design.clip_hi[feat]])
               if feat else None, "y_bounds": design.y_box}
    plan = budget.screening
    if plan is not None:
        flagged = np.flatnonzero(mask) if mask is not None else np.zeros(0, dtype=int)
        details.update(screen_iterations=plan.releases, eps_screen=budget.eps_screen,
                       delta_screen=budget.delta_screen, screen_sigma=plan.sigma,
                       screen_composition=plan.composition,
                       screened=tuple(int(j) for j in flagged), n_screened=int(flagged.size))
    facts = {"clip": design.clip, "details": details}
    if design.unusable:
        return withheld(design.mid.size, Withheld.LABEL_BOUNDS, **facts)
    return Estimate(params=design.to_original(w), released=True,
                    inference=fw_inference(design.mid.size), **facts)


def estimate(X, y, *, eps: float, delta: float, rng: np.random.Generator,
             ledger: Ledger | None = None, loss: str = "squared", radius: float | None = None,
             T: int | None = None, screen=None, screen_share: float = SCREEN_SHARE,
             bounds="auto", bounds_share: float = BOUNDS_SHARE,
             bounds_method: str = BOUNDS_METHOD, bounds_mode: str = "auto", q: float = 0.01,
             intercept_col: int | None = None, names=None,
             stage: str = "regression", engine=None) -> Estimate:
    """Private L1-constrained linear or logistic regression by Frank-Wolfe (module docstring).

    Parameters
    ----------
    X, y : arrays
        Design (rows are the privacy units; the intercept column, if any, is all ones) and
        label (``{0, 1}`` for ``loss="logistic"``).
    eps, delta : float
        Total budget: private bounds (if any) + Frank-Wolfe (+ screening). ``delta = 0`` is
        allowed without screening (basic composition over the T iterations).
    loss : {"squared", "logistic"}
    radius, T : optional
        L1 radius on the ``[-1, 1]`` scale (default :data:`DEFAULT_RADIUS`: 2 squared, 10
        logistic; score sensitivity ``radius (radius + 1)`` / ``radius sigmoid(radius)``) and
        iterations (default :data:`DEFAULT_T`).
    screen, screen_share
        Private screening (001): None, "every", "last" or every j-th iteration; its share of
        the non-bounds eps (and of delta) when it is on.
    bounds, bounds_share, bounds_method, bounds_mode, q
        Public bounds (:func:`~dpstats.mechanisms.bounds.parse_bounds`, for the non-intercept
        columns and, squared loss, y) or ``"auto"`` parts estimated privately with
        ``bounds_share`` of ``eps`` (and of ``delta`` for ``"hist"``, the default, which needs
        ``delta > 0``); ``"quantile"`` is :func:`~dpstats.mechanisms.bounds.private_bounds`
        with ``mode=bounds_mode`` and tail mass ``q``.
    intercept_col, names, stage
        Index of the intercept column (never rescaled, never screened), column names (for
        ``bounds={"x": {name: (lo, hi)}}``) and the ledger stage.
    engine : object, optional
        Dask statistics (:mod:`dpstats.dask.fw`: one pass per gradient; X, y have no rows).

    Returns
    -------
    Estimate
        ``params`` on the original scale; ``clip`` the box the model was fitted in (predict
        with ``np.clip(X, *clip) @ params``); ``details`` holds public facts only: ``loss``,
        ``radius``, ``T``, ``score_sensitivity``, ``eps_iter``, ``eps_fw``, ``delta_fw``,
        ``bounds`` (source), ``eps_bounds``, ``delta_bounds``, ``x_bounds``/``y_bounds``,
        ``screen``, and with screening ``screen_iterations``, ``eps_screen``,
        ``delta_screen``, ``screen_sigma``, ``screen_composition``, ``screened`` (indices
        flagged at the last screening, from noisy statistics) and ``n_screened``.

    Raises
    ------
    ValidationError
        For any bad argument or data shape, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(2000), rng.uniform(-1, 1, (2000, 2))])
    >>> y = 0.5 * X[:, 1] + rng.uniform(-0.1, 0.1, size=2000)
    >>> est = estimate(X, y, eps=1e4, delta=1e-5, rng=rng, intercept_col=0,
    ...                bounds=(-1.0, 1.0), T=200)
    >>> (np.round(est.params, 1) + 0.0).tolist()
    [0.0, 0.5, 0.0]
    """
    eps, delta = check_eps(eps), check_delta(delta, allow_zero=True)
    X, y, intercept_col = check_inputs(X, y, intercept_col, rng)
    opt = validate_options(OPTIONS, {
        "radius": radius, "T": T, "screen": screen, "screen_share": screen_share,
        "bounds_share": bounds_share, "bounds_mode": bounds_mode, "bounds_method": bounds_method,
        "q": q}, fixed={"loss": loss, "delta": delta})
    if loss == "logistic" and not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("loss='logistic' needs y coded 0/1 (e.g. y = (label == 'yes')); "
                              "y has other values")
    plan = plan_bounds(X, bounds, intercept_col=intercept_col, names=names,
                       label=loss == "squared")
    design, eps_b, delta_b = _design(X, y, plan, opt, eps, delta, rng, ledger, stage,
                                     engine and engine.counts_of)
    budget = _charge(eps - eps_b, delta - delta_b, opt, loss, X.shape[1], ledger, stage)
    w, mask = _run(design, y, loss, opt, budget, rng, stage, engine)
    return _result(design, w, mask, loss, opt, budget, eps_b, delta_b)
