"""Private Frank-Wolfe over an L1 ball (Talwar, Thakurta & Zhang 2015, as used in 001), with the
optional private screening rule of 001 (:mod:`dpstats.estimators.screening`).

Neighbours: add/remove one row. Steps of :func:`estimate`:

1. **Bounds.** Every column except the intercept and (squared loss) the label are mapped into
   ``[-1, 1]`` with :func:`dpstats.mechanisms.bounds.to_unit` (clipping), using public bounds or
   private ones (``bounds_share`` of ``eps`` and of ``delta``: one Gaussian release of log-scale
   histograms, :func:`dpstats.estimators.adassp.histogram_bounds`, as AdaSSP does; or
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
   the *winsorised* predictor ``np.clip(x, clip_lo, clip_hi) @ params`` (box in ``info``, as
   for AdaSSP); ``x @ params`` extrapolates linearly beyond it, which on heavy-tailed files
   (cpu_act, house_16H) turns test R^2 from about 0.1-0.2 into large negative values.

Ledger: the ``T`` vertex choices are charged as one composed line (``eps1, delta1``) and the
``l`` screening releases as another (``eps2, delta2``), both before the loop starts; the number
of single mechanism calls is checked against them at the end.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..mechanisms import analytic_gaussian_sigma, exponential, gaussian
from ..mechanisms.accountant import Ledger, advanced_composition
from ..mechanisms.bounds import private_bounds, to_unit
from ..mechanisms.plan import ReleasePlan
from ..validation import check_choice, check_delta, check_eps
from . import LABEL_BOUNDS_REASON, Estimate, label_bound_unusable, withheld
from .adassp import check_inputs, histogram_bounds, parse_for
from .screening import PrivateScreener, derivative_bound, screen_plan

__all__ = ["estimate", "frank_wolfe", "fw_iteration_eps", "score_sensitivity",
           "screen_iterations", "DEFAULT_RADIUS", "DEFAULT_T", "BOUNDS_SHARE", "SCREEN_SHARE",
           "BOUNDS_METHOD"]

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


def frank_wolfe(Xt, y, *, loss: str, radius: float, T: int, choose, screen_at=(),
                screener=None, protect=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Frank-Wolfe iterations on unit-scale data; ``choose(scores) -> index`` picks the vertex.

    ``Xt`` is the transposed design (d, n), ``scores`` are the ``<v, grad F>`` of
    :func:`dpstats._kernels.frank_wolfe.vertex_scores` (smaller is better), so a non-private
    ``choose`` is ``np.argmin``. After the step at each iteration in ``screen_at``,
    ``screener(u, g, r)`` returns the rule statistic and features with a negative value (except
    ``protect``) are set to 0. Returns ``(w, mask)`` with ``mask`` the features flagged at the
    last screening (None without screening). No privacy logic here: it lives in ``choose``
    and ``screener``.
    """
    from .._kernels.frank_wolfe import loss_gradient, vertex_scores
    d, n = Xt.shape
    w, u = np.zeros(d), np.zeros(n)
    at = frozenset(screen_at)
    g = r = mask = None
    for t in range(1, T + 1):
        if g is None:
            g, r = loss_gradient(Xt, u, y, loss)
        k = int(choose(vertex_scores(g, radius)))
        j, step = k % d, (radius if k < d else -radius)
        mu = 2.0 / (t + 1)
        w *= 1.0 - mu
        w[j] += mu * step
        u *= 1.0 - mu
        u += (mu * step) * Xt[j]
        g = None
        if t in at:
            g, r = loss_gradient(Xt, u, y, loss)
            mask = np.asarray(screener(u, g, r)) < 0
            if protect is not None:
                mask[protect] = False
            if mask.any():
                w[mask] = 0.0
                u = w @ Xt
                g = None
    return w, mask


def _check_share(value, name: str) -> float:
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and 0 < float(value) < 1):
        raise ValidationError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    return float(value)


def check_options(loss: str = "squared", radius: float | None = None, T: int | None = None,
                  screen=None, screen_share: float = SCREEN_SHARE,
                  bounds_share: float = BOUNDS_SHARE, bounds_mode: str = "auto",
                  bounds_method: str = BOUNDS_METHOD, q: float = 0.01,
                  delta: float | None = None):
    """Validate the Frank-Wolfe options (touches no data, charges nothing).

    Returns ``(radius, T, screening iterations, screen_share, bounds_share)`` with the
    defaults filled in.

    >>> check_options(T=100, screen=50)[1:3]
    (100, (50, 100))
    """
    check_choice(loss, ("squared", "logistic"), "loss")
    radius = DEFAULT_RADIUS[loss] if radius is None else radius
    if not (isinstance(radius, numbers.Real) and not isinstance(radius, bool)
            and math.isfinite(radius) and radius > 0):
        raise ValidationError(f"radius must be a finite number > 0 (the L1 radius on the "
                              f"[-1, 1] scale, e.g. 1); got {radius!r}")
    T = DEFAULT_T if T is None else T
    if not (isinstance(T, numbers.Integral) and not isinstance(T, bool) and T >= 1):
        raise ValidationError(f"T must be an integer >= 1 (Frank-Wolfe iterations); got {T!r}")
    at = screen_iterations(screen, int(T))
    if at and delta == 0:
        raise ValidationError("screening uses the Gaussian mechanism and needs delta > 0; "
                              "give delta (e.g. 1e-6) or screen=None")
    screen_share = _check_share(screen_share, "screen_share")
    bounds_share = _check_share(bounds_share, "bounds_share")
    check_choice(bounds_mode, ("auto", "column", "global"), "bounds_mode")
    check_choice(bounds_method, ("hist", "quantile"), "bounds_method")
    if not (isinstance(q, numbers.Real) and not isinstance(q, bool) and 0 < q < 0.5):
        raise ValidationError(f"q must be a number strictly between 0 and 0.5; got {q!r}")
    return float(radius), int(T), at, screen_share, bounds_share


def _source_label(has_x: bool, need_x: bool, has_y: bool, need_y: bool) -> str:
    parts = ([("x", need_x)] if has_x else []) + ([("y", need_y)] if has_y else [])
    if all(priv for _, priv in parts):
        return "private"
    if not any(priv for _, priv in parts):
        return "public"
    return ", ".join(f"{'private' if priv else 'public'} {what}" for what, priv in parts)


def estimate(X, y, *, eps: float, delta: float, rng: np.random.Generator,
             ledger: Ledger | None = None, loss: str = "squared", radius: float | None = None,
             T: int | None = None, screen=None, screen_share: float = SCREEN_SHARE,
             bounds="auto", bounds_share: float = BOUNDS_SHARE,
             bounds_method: str = BOUNDS_METHOD, bounds_mode: str = "auto", q: float = 0.01,
             intercept_col: int | None = None, names=None, stage: str = "regression",
             **_: object) -> Estimate:
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
    radius : float, optional
        L1 radius on the ``[-1, 1]`` scale; default :data:`DEFAULT_RADIUS` (2 squared, 10
        logistic). Score sensitivity ``radius (radius + 1)`` / ``radius sigmoid(radius)``.
    T : int, optional
        Iterations, default :data:`DEFAULT_T`.
    screen : None, "every", "last" or int
        Private screening (001): none, after every iteration, after the last, every j-th.
    screen_share : float
        Share of the non-bounds eps (and of delta) for screening when it is on.
    bounds, bounds_share, bounds_method, bounds_mode, q
        Public bounds (:func:`~dpstats.mechanisms.bounds.parse_bounds`, for the non-intercept
        columns and,
        squared loss, y) or ``"auto"`` parts estimated privately with ``bounds_share`` of
        ``eps`` (and of ``delta`` for ``"hist"``): ``bounds_method="hist"`` (default; needs
        ``delta > 0``) is :func:`~dpstats.estimators.adassp.histogram_bounds`, ``"quantile"``
        is :func:`~dpstats.mechanisms.bounds.private_bounds` with ``mode=bounds_mode`` and tail mass
        ``q``.
    intercept_col : int, optional
        Index of the intercept column (never rescaled, never screened).
    names : sequence of str, optional
        Column names (for ``bounds={"x": {name: (lo, hi)}}``).
    stage : str
        Ledger stage.

    Returns
    -------
    Estimate
        ``params`` on the original scale; ``info`` holds public facts only: ``loss``,
        ``radius``, ``T``, ``score_sensitivity``, ``eps_iter``, ``eps_fw``, ``delta_fw``,
        ``bounds`` (source), ``eps_bounds``, ``delta_bounds``, ``x_bounds``/``y_bounds``
        (released or public), ``clip_lo``/``clip_hi`` (per column, intercept +-inf: the box
        the model was fitted in; predict with ``np.clip(X, clip_lo, clip_hi) @ params``),
        ``screen``, and with screening ``screen_iterations``, ``eps_screen``, ``delta_screen``,
        ``screen_sigma``, ``screen_composition``, ``screened`` (indices flagged at the last
        screening, from noisy statistics) and ``n_screened``.

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
    # 1. validation: nothing is charged before all of it has passed
    eps = check_eps(eps)
    delta = check_delta(delta, allow_zero=True)
    X, y, icol = check_inputs(X, y, intercept_col, rng)
    radius, T, at, screen_share, bounds_share = check_options(
        loss, radius, T, screen, screen_share, bounds_share, bounds_mode, bounds_method, q, delta)
    if loss == "logistic" and not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("loss='logistic' needs y coded 0/1 (e.g. y = (label == 'yes')); "
                              "y has other values")
    n, p = X.shape
    cand = [j for j in range(p) if j != icol]
    given = parse_for(bounds, X, icol, names)
    need_x = bool(cand) and given.x_lo is None
    need_y = loss == "squared" and given.y_lo is None
    # 2. private bounds
    if (need_x or need_y) and bounds_method == "hist" and delta == 0:
        raise ValidationError("bounds_method='hist' (private bounds by a Gaussian release) "
                              "needs delta > 0; give delta, public bounds, or "
                              "bounds_method='quantile'")
    eps_b, delta_b, source = 0.0, 0.0, "public"
    x_lo, x_hi, y_lo, y_hi = given.x_lo, given.x_hi, given.y_lo, given.y_hi
    if need_x or need_y:
        Xb, yb = (X[:, cand] if need_x else None), (y if need_y else None)
        if bounds_method == "hist":
            eps_b, delta_b = bounds_share * eps, bounds_share * delta
            est_b = histogram_bounds(Xb, yb, lambda v, s: (
                gaussian(v, s, eps_b, delta_b, rng, ledger, stage=f"{stage}: bounds",
                         what="log-scale histograms of the bounded columns"),
                analytic_gaussian_sigma(s, eps_b, delta_b)))
        else:
            est_b = private_bounds(Xb, yb, bounds_share * eps, rng, ledger, mode=bounds_mode,
                                   q=q, stage=f"{stage}: bounds")
            eps_b = est_b.eps
        x_lo, x_hi = (est_b.x_lo, est_b.x_hi) if need_x else (x_lo, x_hi)
        y_lo, y_hi = (est_b.y_lo, est_b.y_hi) if need_y else (y_lo, y_hi)
        source = _source_label(bool(cand), need_x, loss == "squared", need_y)
    if icol is None and cand:                      # symmetric: a linear map, no offset
        x_hi = np.maximum(np.abs(x_lo), np.abs(x_hi))
        x_lo = -x_hi
    if icol is None and loss == "squared":
        y_hi = max(abs(y_lo), abs(y_hi))
        y_lo = -y_hi
    # 3. unit scale
    Xu = np.empty((p, n))
    if cand:
        Xu[cand] = to_unit(X[:, cand], x_lo, x_hi).T
    if icol is not None:
        Xu[icol] = np.clip(X[:, icol], -1.0, 1.0)
    Xt = np.ascontiguousarray(Xu)
    yu = to_unit(y, y_lo, y_hi) if loss == "squared" else 2.0 * y - 1.0
    # 4. budget, charged before the loop
    eps_rest, delta_rest = eps - eps_b, delta - delta_b
    eps2 = screen_share * eps_rest if at else 0.0
    delta2 = screen_share * delta_rest if at else 0.0
    eps1, delta1 = eps_rest - eps2, delta_rest - delta2
    eps_iter, delta_fw = fw_iteration_eps(eps1, delta1, T)
    sens = score_sensitivity(loss, radius)
    comp = "advanced composition" if delta_fw > 0 else "basic composition"
    choices = ReleasePlan(
        f"exponential x {T} (composed)", T, eps1, delta_fw, ledger, stage=stage,
        detail=f"Frank-Wolfe vertex choices, {loss} loss, L1 radius {radius:g}; "
               f"score sensitivity {sens:.4g}; eps {eps_iter:.4g} each, {comp}")
    plan = screen_plan(eps2, delta2, len(at), loss, radius, p) if at else None
    screens = None
    if plan is not None:
        screens = ReleasePlan(
            f"gaussian x {plan.releases} (composed)", len(at), eps2, delta2, ledger,
            stage=f"{stage}: screening",
            detail=f"screening components; L2 sensitivity {plan.sensitivity:.4g} "
                   f"(first {plan.sensitivity_first:.4g}); (eps, delta) = "
                   f"({plan.eps_iter:.4g}, {plan.delta_iter:.3g}) each, "
                   f"{plan.composition} composition")
    # 5. the loop: single releases are covered by the plans above (charged up front), so the
    #    mechanisms get no ledger here; the number of releases is checked against the plans
    def choose(scores):
        choices.take()
        return exponential(-scores, sens, eps_iter, rng, None, what="Frank-Wolfe vertex")

    screener = PrivateScreener(Xt, loss, radius, plan, rng, None, stage) if plan else None
    w, mask = frank_wolfe(Xt, yu, loss=loss, radius=radius, T=T, choose=choose, screen_at=at,
                          screener=screener, protect=icol)
    choices.finish()                      # the composed charges cover exactly these releases
    if screens is not None:
        screens.used = screener.calls
        screens.finish()
    # 6. back to the original scale (post-processing of released choices)
    params = np.zeros(p)
    hy, my = ((y_hi - y_lo) / 2, (y_lo + y_hi) / 2) if loss == "squared" else (1.0, 0.0)
    if cand:
        params[cand] = hy * w[cand] / (x_hi / 2 - x_lo / 2)
    if icol is not None:
        mx = x_lo / 2 + x_hi / 2 if cand else np.zeros(0)
        params[icol] = hy * w[icol] + my - float(params[cand] @ mx)
    clip_lo, clip_hi = np.full(p, -np.inf), np.full(p, np.inf)
    if cand:
        clip_lo[cand], clip_hi[cand] = x_lo, x_hi
    info = {"loss": loss, "radius": radius, "T": T, "score_sensitivity": sens,
            "eps_iter": eps_iter, "eps_fw": eps1, "delta_fw": delta_fw, "bounds": source,
            "eps_bounds": eps_b, "delta_bounds": delta_b, "screen": screen,
            "x_bounds": None if not cand else np.column_stack([x_lo, x_hi]),
            "clip_lo": clip_lo, "clip_hi": clip_hi,
            "y_bounds": (y_lo, y_hi) if loss == "squared" else None}
    if plan is not None:
        flagged = np.flatnonzero(mask) if mask is not None else np.zeros(0, dtype=int)
        info.update(screen_iterations=plan.releases, eps_screen=eps2, delta_screen=delta2,
                    screen_sigma=plan.sigma, screen_composition=plan.composition,
                    screened=tuple(int(j) for j in flagged), n_screened=int(flagged.size))
    if loss == "squared" and need_y and label_bound_unusable(y_lo, y_hi):
        return withheld(p, info, LABEL_BOUNDS_REASON)
    return Estimate(params=params, released=True, ptr=None, info=info)
