"""Full-batch differentially private gradient descent (DP-GD): the tuned-by-hand baseline.

This is the DP-SGD baseline of 002 (section 4.4) in its full-batch form, for squared loss
(linear regression) and logistic loss (binary GLM). It needs three hyperparameters, a learning
rate, a clipping norm and a number of epochs, and 002 shows its accuracy depends on them in a
data-set-specific way (their DPSGD was tuned non-privately over 2,184 settings, which is not a
private procedure). dpstats ships principled defaults (below) but **does not tune them**:
DP-GD is here to show why the plug-and-play methods (Tukey, Frank-Wolfe) matter.

Neighbours: add/remove one row throughout. The steps and what each one costs:

1. **Bounds** (only for columns whose bounds are not public). Every non-intercept column is
   mapped into ``[-1, 1]`` by :func:`dpstats.mechanisms.bounds.to_unit`. Public bounds ``(lo, hi)``
   are used as given. With ``bounds="auto"`` and ``bounds_method="hist"`` (default) the bounds come
   from one Gaussian release of log-scale histograms of every bounded column (and of y for the
   squared loss), as in Boosted AdaSSP
   (:func:`dpstats.estimators.adassp.histogram_bounds`; L2 sensitivity ``sqrt(#columns)``):
   it is one more part of the same Gaussian-DP plan as the gradient steps, with
   ``bounds_share`` (default 20%) of ``mu^2``. ``bounds_method="quantile"`` instead gives each
   column symmetric bounds ``[-B, B]``, ``B`` the private ``(1 - bounds_q)``-quantile of
   ``|x_j|`` (:func:`dpstats.mechanisms.bounds.private_quantile`, exponential mechanism, utility
   sensitivity ``max(q, 1-q)``), the releases sharing ``bounds_share`` of ``eps`` evenly, pure
   DP; at small ``eps`` per column those quantiles are mostly noise and can land anywhere on
   the grid (scales like ``2**49`` were seen), which is why it is not the default. Logistic
   labels are 0/1. A column whose bound is at most ``2**-30`` (its values are almost all 0) is
   dropped (coefficient 0): post-processing of released values.
2. **Row count**. The update averages the gradient sum over a *released* count ``n_hat``
   (:func:`dpstats.mechanisms.private_count`, sensitivity 1), passed in by the pipeline as
   ``n_noisy`` or else released here with :data:`COUNT_SHARE` (5%) of ``eps``. The true n is
   never used.
3. **Gradient descent**. Rows are scaled by ``1 / sqrt(p')`` (p' = columns kept, intercept
   included), so every row has L2 norm at most 1. Each of ``epochs`` steps computes every row's
   gradient, clips it to L2 norm ``clip`` and releases the sum plus ``N(0, sigma^2 I)``. The sum
   of clipped gradients has **L2 sensitivity ``clip``** (the one added or removed row's clipped
   gradient; the current iterate is a released value), so each step is ``mu_step``-GDP with
   ``mu_step = clip / sigma`` and the ``epochs`` adaptive steps together are
   ``mu = sqrt(epochs) mu_step``-GDP (Dong, Roth & Su 2022, Corollary 3.3). ``mu`` is the
   largest value with ``delta(mu) <= delta`` for the remaining eps, found by bisection
   (:class:`dpstats.mechanisms.gdp.GaussianGDP`, which also draws the noise and charges the
   whole run once, as ``"gaussian (GDP)"``, before the first release). The update is
   ``theta <- theta - lr * noisy_sum / n_hat``.

Coefficients are mapped back to the original scale (post-processing). They are exact for the
*winsorised* predictor ``clip(x, clip_lo, clip_hi) @ params``, so the released box is returned
in ``info`` (``clip_lo``/``clip_hi``; intercept and dropped columns unbounded) and the results'
``predict``/``score`` clip new inputs to it, as for AdaSSP and BAS. The whole estimator is
``(eps, delta)``-DP by basic composition of the three steps.

Defaults: ``clip = 1`` (logistic gradients of unit-norm rows have norm at most 1, so nothing
is clipped; for squared loss the gradient is the residual times the row), ``lr = 1 / L`` with
``L`` the public smoothness bound of the mean loss on unit-norm rows (``L = 1`` squared,
``1/4`` logistic, so ``lr`` = 1 and 4), and ``epochs = 200``. These are safe (GD with step
``1/L`` cannot diverge) but **not tuned**: ill-conditioned designs need more epochs, small
data sets fewer (the noise grows like ``sqrt(epochs)``), heavy-tailed labels a different
``clip``, and tuning them on the data is itself a privacy cost that dpstats does not pay.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..mechanisms import private_count
from ..mechanisms.accountant import Ledger
from ..mechanisms.bounds import Bounds, private_quantile, to_unit
from ..mechanisms.gdp import GaussianGDP
from ..validation import check_choice, check_delta, check_eps
from . import LABEL_BOUNDS_REASON, Estimate, label_bound_unusable, withheld
from .adassp import parse_for, resolve_bounds

__all__ = ["estimate", "check_options", "LOSSES", "DEFAULT_EPOCHS", "DEFAULT_CLIP",
           "BOUNDS_SHARE", "BOUNDS_Q", "COUNT_SHARE"]

LOSSES = ("squared", "logistic")
#: Default number of full passes (gradient releases).
DEFAULT_EPOCHS = 200
#: Default L2 clipping norm of a row's gradient (rows have L2 norm <= 1 after scaling).
DEFAULT_CLIP = 1.0
#: Share of the budget for private bounds when some are not public: of the Gaussian-DP budget
#: (mu^2) with ``bounds_method="hist"`` (default), of eps with ``"quantile"``.
BOUNDS_SHARE = 0.20
#: How ``"auto"`` bounds are released: "hist" (log-histograms inside the GDP plan, as Boosted
#: AdaSSP) or "quantile" (one exponential-mechanism quantile of |x_j| per column).
BOUNDS_METHOD = "hist"
#: Tail mass left above each private bound |x_j| <= B_j.
BOUNDS_Q = 0.02
#: Share of eps spent on a private row count when the pipeline did not pass one.
COUNT_SHARE = 0.05
#: Smoothness bound of the mean loss on rows of L2 norm <= 1; the default lr is its inverse.
_SMOOTHNESS = {"squared": 1.0, "logistic": 0.25}
#: Released bounds at most this mark a column that is (almost) always zero.
_DEGENERATE = 2.0**-30


def _positive(value, name: str, hint: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not (math.isfinite(float(value)) and float(value) > 0):
        raise ValidationError(f"{name} must be a finite number > 0 ({hint}); got {value!r}")
    return float(value)


def _share(value, name: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not 0.0 < float(value) < 1.0:
        raise ValidationError(f"{name} must be a number strictly between 0 and 1 ({what}); "
                              f"got {value!r}")
    return float(value)


def check_options(loss: str = "squared", lr: float | None = None, clip: float = DEFAULT_CLIP,
                  epochs: int = DEFAULT_EPOCHS, bounds_share: float = BOUNDS_SHARE,
                  bounds_q: float = BOUNDS_Q) -> tuple[str, float, float, int, float, float]:
    """Validate DP-GD options (touches no data, charges nothing); ``lr=None`` becomes 1/L.

    >>> check_options("logistic")
    ('logistic', 4.0, 1.0, 200, 0.2, 0.02)
    """
    check_choice(loss, LOSSES, "loss")
    lr = 1.0 / _SMOOTHNESS[loss] if lr is None else \
        _positive(lr, "lr", "the gradient step; default 1/L, i.e. 1 squared, 4 logistic")
    clip = _positive(clip, "clip", "L2 clipping norm of a row's gradient, e.g. 1.0")
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral) or int(epochs) < 1:
        raise ValidationError(f"epochs must be an integer >= 1 (number of noisy full-batch "
                              f"gradient steps, e.g. {DEFAULT_EPOCHS}); got {epochs!r}")
    share = _share(bounds_share, "bounds_share", "share of the budget for private bounds")
    q = _share(bounds_q, "bounds_q", "tail mass above each private bound, e.g. 0.02")
    return loss, lr, clip, int(epochs), share, q


def _column_maps(X, y, loss, cols, given, known, icpt, eps_b, q, rng, ledger, names, stage):
    """(mid, half) of the map into [-1, 1] for every column in ``cols`` and for y."""
    mid, half, todo = {}, {}, []
    for k, j in enumerate(cols):
        if j in known or given.x_lo is not None:
            lo, hi = known[j] if j in known else (given.x_lo[k], given.x_hi[k])
            mid[j], half[j] = ((lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0) if icpt
                               else (0.0, max(abs(lo), abs(hi))))
        else:
            todo.append(j)
    need_y = loss == "squared" and given.y_lo is None
    each = eps_b / (len(todo) + need_y) if (todo or need_y) else 0.0
    for j in todo:
        name = names[j] if names is not None else f"x[{j}]"
        mid[j] = 0.0
        half[j] = private_quantile(np.abs(X[:, j]), 1.0 - q, each, rng, ledger,
                                   stage=f"{stage}: bounds", what=f"bound B of |{name}|",
                                   rounding="up")
    y_mid, y_half = 0.0, 1.0
    if need_y:
        y_half = private_quantile(np.abs(y), 1.0 - q, each, rng, ledger,
                                  stage=f"{stage}: bounds", what="bound B of |y|", rounding="up")
    elif loss == "squared":
        lo, hi = given.y_lo, given.y_hi
        y_mid, y_half = (lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0) if icpt else \
            (0.0, max(abs(lo), abs(hi)))
    public = len(todo) < len(cols) or (loss == "squared" and not need_y)
    source = ("mixed" if public else "private") if (todo or need_y) else "public"
    return mid, half, y_mid, y_half, source


def _gradient_sum(U, y, theta, loss: str, clip: float) -> np.ndarray:
    """Sum over rows of the per-row gradients, each clipped to L2 norm ``clip``."""
    eta = U @ theta
    if loss == "logistic":
        r = 0.5 * (1.0 + np.tanh(0.5 * eta)) - y      # sigmoid without overflow
    else:
        r = eta - y
    norms = np.abs(r) * np.sqrt(np.einsum("ij,ij->i", U, U))
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return U.T @ (r * scale)


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, loss: str = "squared",
             lr: float | None = None, clip: float = DEFAULT_CLIP, epochs: int = DEFAULT_EPOCHS,
             bounds: object = "auto", intercept_col: int | None = None, names=None,
             stage: str = "regression", n_noisy: float | None = None,
             known_x_bounds: dict | None = None, bounds_share: float = BOUNDS_SHARE,
             bounds_method: str = BOUNDS_METHOD, bounds_q: float = BOUNDS_Q,
             **_: object) -> Estimate:
    """Private regression by full-batch DP gradient descent (module docstring for the proof).

    Parameters
    ----------
    X, y : arrays
        Design matrix (one row per person) and label (0/1 for ``loss="logistic"``).
    eps, delta : float
        Budget of this stage: private bounds and row count (pure DP, when needed) and the
        Gaussian gradient releases (all of delta).
    rng : numpy.random.Generator
    ledger : Ledger, optional
    loss : {"squared", "logistic"}
    lr : float or None
        Step size on the mean gradient; None is ``1/L`` (1 squared, 4 logistic).
    clip : float
        L2 clipping norm of each row's gradient: the L2 sensitivity of each released sum.
    epochs : int
        Number of noisy full-batch steps (default 200); the noise grows like ``sqrt(epochs)``.
    bounds : "auto", (lo, hi), {"x": ..., "y": ...} or Bounds
        Bounds of the non-intercept columns (and of y for squared loss), see
        :func:`dpstats.estimators.adassp.parse_for`; ``"auto"`` parts are estimated privately.
    intercept_col : int or None
        Index of the intercept column (kept at 1; absorbs the centring of the columns).
    names : sequence of str, optional
        Column names, for ``bounds={"x": {name: ...}}`` and the ledger.
    n_noisy : float, optional
        A row count already released by the pipeline; otherwise one is released here.
    known_x_bounds : dict {column index: (lo, hi)}, optional
        Public ranges known by construction (e.g. 0/1 indicator columns of a categorical);
        they override ``bounds`` for those columns and cost nothing.
    bounds_share, bounds_q : float
        Share of the budget for private bounds (default 0.2, used only when some are needed:
        of ``mu^2`` for ``"hist"``, of ``eps`` for ``"quantile"``) and the tail mass above each
        quantile bound (default 0.02).
    bounds_method : {"hist", "quantile"}
        How ``"auto"`` bounds are released (module docstring).

    Returns
    -------
    Estimate
        Always released (DP-GD has no test that can fail); ``info`` holds the public run
        parameters (sigma, mu, lr, clip, epochs, n_noisy, bounds source, dropped columns) and
        the released clipping box ``clip_lo``/``clip_hi``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> y = (rng.uniform(size=5000) < 1 / (1 + np.exp(-3 * X[:, 1]))).astype(float)
    >>> est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, loss="logistic", bounds=(-1, 1),
    ...                intercept_col=0, epochs=500)
    >>> bool(2.0 < est.params[1] < 4.0)
    True
    """
    loss, lr, clip, epochs, bounds_share, q = check_options(loss, lr, clip, epochs,
                                                            bounds_share, bounds_q)
    eps, delta = check_eps(eps), check_delta(delta)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, p = X.shape
    if y.shape != (n,) or not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValidationError("X (n, p) and y (n,) must be finite with one label per row")
    if loss == "logistic" and not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("loss='logistic' needs a label coded 0/1; recode it first")
    known = {int(j): (float(lo), float(hi)) for j, (lo, hi) in (known_x_bounds or {}).items()}
    cols = [j for j in range(p) if j != intercept_col]
    given = parse_for(bounds, X, intercept_col, names)
    icpt = intercept_col is not None
    need_b = (given.x_lo is None and any(j not in known for j in cols)) or \
        (loss == "squared" and given.y_lo is None)
    check_choice(bounds_method, ("hist", "quantile"), "bounds_method")
    hist = need_b and bounds_method == "hist"
    eps_b = eps * bounds_share if need_b and not hist else 0.0
    eps_n = eps * COUNT_SHARE if n_noisy is None else 0.0
    eps_gd = eps - eps_b - eps_n
    parts = {"gradient": (epochs, 1.0 - bounds_share if hist else 1.0)}
    if hist:
        parts = {"bounds": (1, bounds_share), **parts}
    plan = GaussianGDP(eps_gd, delta, parts, rng, ledger, stage=stage,
                       what=("DP-GD: " + ("log-histograms for bounds (L2 sensitivity "
                             "sqrt(#bounded columns)), " if hist else "")
                             + f"{epochs} releases of the {loss}-loss gradient sum, each "
                             f"row's gradient clipped to L2 norm {clip:.4g} (L2 sensitivity "
                             f"{clip:.4g})"))
    # 1. bounds (private only where not public); 2. row count
    if hist:
        if loss == "logistic":      # 0/1 labels need no bounds
            given = Bounds(given.x_lo, given.x_hi, 0.0, 1.0, source=given.source)
        given, hist_label = resolve_bounds(
            X, y, given, intercept_col=intercept_col, method="hist", eps=0.0, q=q, rng=rng,
            ledger=ledger, stage=stage,
            hist_release=lambda v, sens: (plan.release("bounds", v, sens),
                                          plan.sigma("bounds", sens)))
        if loss == "logistic":
            given = Bounds(given.x_lo, given.x_hi, None, None, source=given.source)
    mid, half, y_mid, y_half, source = _column_maps(X, y, loss, cols, given, known, icpt, eps_b,
                                                    q, rng, ledger, names, stage)
    if hist:
        for j in cols:             # nothing usable released (e.g. an all-zero column): drop
            if j not in known and half[j] >= 2.0 ** 63:
                half[j] = 0.0
        if loss == "logistic" and hist_label == "private x, public y":
            hist_label = "private"          # the 0/1 label was never a bound to estimate
        source = {"private": "private", "public": "public"}.get(hist_label, "mixed")
        if source == "private" and known:
            source = "mixed"                # indicator columns came with public bounds
    if n_noisy is None:
        n_noisy = private_count(n, eps_n, rng, ledger, stage=f"{stage}: n")
    n_hat = max(float(n_noisy), 1.0)
    # 3. rows into the unit ball
    keep = [j for j in cols if half[j] > _DEGENERATE] + ([intercept_col] if icpt else [])
    s = math.sqrt(len(keep))
    U = np.zeros((n, p))
    for j in keep:
        U[:, j] = 1.0 if j == intercept_col else to_unit(X[:, j], mid[j] - half[j],
                                                         mid[j] + half[j])
    U /= s
    yu = y if loss == "logistic" else to_unit(y, y_mid - y_half, y_mid + y_half)
    # 4. noisy gradient descent: `epochs` releases, mu-GDP in total (plan above)
    theta = np.zeros(p)
    for _step in range(epochs):
        noisy = plan.release("gradient", _gradient_sum(U, yu, theta, loss, clip), clip)
        theta -= lr * noisy / n_hat
    # 5. back to the original scale (post-processing)
    beta = np.zeros(p)
    for j in keep:
        if j != intercept_col:
            beta[j] = theta[j] / (s * half[j])
    if icpt:
        beta[intercept_col] = theta[intercept_col] / s - math.fsum(
            beta[j] * mid[j] for j in keep if j != intercept_col)
    if loss == "squared":
        beta *= y_half
        if icpt:
            beta[intercept_col] += y_mid
    clip_lo, clip_hi = np.full(p, -np.inf), np.full(p, np.inf)
    for j in keep:
        if j != intercept_col:
            clip_lo[j], clip_hi[j] = mid[j] - half[j], mid[j] + half[j]
    info = {"loss": loss, "lr": lr, "clip": clip, "epochs": epochs, "clip_lo": clip_lo,
            "clip_hi": clip_hi,
            "sigma": plan.sigma("gradient", clip), "mu": plan.mu_total, "n_noisy": n_hat,
            "bounds": source, "dropped": [j for j in cols if j not in keep],
            "eps_bounds": eps_b, "eps_n": eps_n, "eps_gd": eps_gd}
    if loss == "squared" and given.y_lo is None and label_bound_unusable(-y_half, y_half):
        return withheld(p, info, LABEL_BOUNDS_REASON)
    return Estimate(params=beta, released=True, ptr=None, info=info)
