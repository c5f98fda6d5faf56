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
   (:func:`dpstats.estimators.bounded.histogram_bounds`; L2 sensitivity ``sqrt(#columns)``):
   it is one more part of the same Gaussian-DP plan as the gradient steps, with
   ``bounds_share`` (default 20%) of ``mu^2``. ``bounds_method="quantile"`` instead gives each
   column symmetric bounds ``[-B, B]``, ``B`` the private ``(1 - bounds_q)``-quantile of
   ``|x_j|`` (:func:`dpstats.mechanisms.bounds.private_quantile`, exponential mechanism, utility
   sensitivity ``max(q, 1-q)``), the releases sharing ``bounds_share`` of ``eps`` evenly, pure
   DP; at small ``eps`` per column those quantiles are mostly noise and can land anywhere on
   the grid (scales like ``2**49`` were seen), which is why it is not the default. Logistic
   labels are 0/1. A column whose bound is at most ``2**-30`` (its values are almost all 0) is
   dropped (coefficient 0): post-processing of released values. When the label's private
   bounds found nothing usable the fit is withheld, as for AdaSSP, BAS and Frank-Wolfe
   (:attr:`dpstats.estimators.bounded.BoundedDesign.unusable`).
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

4. **Inference** (option ``inference_share``, default 5% of the plan's ``mu^2``, 0 for none;
   not on dask, where the parts are still reserved so that releases match): the curvature of
   the loss at the released coefficients (logistic: Fisher information, L2 sensitivity 1/4;
   squared: Gram matrix, sensitivity 1) and, for squared loss, the residual sum of squares with
   residuals clipped to [-1, 1] (sensitivity 1), as parts of the same plan
   (:mod:`dpstats.mechanisms.curvature`); standard errors propagate the gradient noise through
   the linearised steps (:mod:`dpstats.estimators.inference.dpgd`).

Coefficients are mapped back to the original scale (post-processing). They are exact for the
*winsorised* predictor ``clip(x, clip_lo, clip_hi) @ params``, so the released box is returned
as ``Estimate.clip`` (intercept and dropped columns unbounded) and the results'
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

import numpy as np

from .._kernels.row_sums import FixedSum, row_sum_fixed
from ..errors import ValidationError
from ..mechanisms import private_count
from ..mechanisms.accountant import Ledger
from ..mechanisms.gdp import GaussianGDP
from ..validation import Option, OptionSpec, check_choice, check_delta, check_eps, validate_options
from .bounded import (
    BOUNDS_METHODS,
    BoundedDesign,
    abs_quantile_release,
    bounded_design,
    check_inputs,
    hist_release,
    plan_bounds,
)
from .inference.dpgd import WEIGHT as INFERENCE_WEIGHT
from .inference.dpgd import dpgd_inference, plan_parts
from .inference.glm import gated
from .outcome import Estimate, Withheld, withheld

__all__ = ["estimate", "LOSSES", "DEFAULT_EPOCHS", "DEFAULT_CLIP", "BOUNDS_SHARE", "BOUNDS_Q",
           "COUNT_SHARE", "OPTIONS", "COMMON"]

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


def _finish(values: dict, fixed) -> dict:
    """The loss (fixed by the caller) and the default step ``1/L`` it implies."""
    loss = check_choice(fixed.get("loss", "squared"), LOSSES, "loss")
    if values["lr"] is None:
        values["lr"] = 1.0 / _SMOOTHNESS[loss]
    return values


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "loss", "intercept_col", "names", "bounds",
                    "stage", "n_noisy", "known_x_bounds", "engine"})
#: DP-GD's options.
OPTIONS = OptionSpec((
    Option("lr", "real", None, range=(0.0, None), allow_none=True,
           doc="the gradient step; default 1/L, i.e. 1 squared, 4 logistic"),
    Option("clip", "real", DEFAULT_CLIP, range=(0.0, None),
           doc="L2 clipping norm of a row's gradient, e.g. 1.0"),
    Option("epochs", "int", DEFAULT_EPOCHS, range=(1, None),
           doc=f"number of noisy full-batch gradient steps, e.g. {DEFAULT_EPOCHS}"),
    Option("bounds_share", "real", BOUNDS_SHARE, range=(0.0, 1.0),
           doc="share of the budget for private bounds"),
    Option("bounds_method", "choice", BOUNDS_METHOD, choices=BOUNDS_METHODS,
           doc="how 'auto' bounds are released"),
    Option("bounds_q", "real", BOUNDS_Q, range=(0.0, 1.0),
           doc="tail mass above each private bound, e.g. 0.02"),
    Option("inference_share", "real", INFERENCE_WEIGHT, range=(0.0, 1.0),
           closed=(True, False),
           doc="share of the Gaussian budget (mu^2) for the curvature (and residual sum of "
               "squares) behind the standard errors (0: none), e.g. 0.05"),
), finish=_finish)


def _gdp_plan(eps_gd: float, delta: float, loss: str, opt: dict, hist: bool, rng, ledger,
              stage: str) -> GaussianGDP:
    """One Gaussian-DP plan for (the bounds histograms and) the ``epochs`` gradient sums."""
    share, epochs, clip = opt["bounds_share"], opt["epochs"], opt["clip"]
    inf = opt.get("inference_share", 0.0)     # reserved on dask too: the same releases
    parts = {"gradient": (epochs, (1.0 - share if hist else 1.0) * (1.0 - inf))}
    if hist:
        parts = {"bounds": (1, share * (1.0 - inf)), **parts}
    parts.update(plan_parts(loss, inf))
    return GaussianGDP(eps_gd, delta, parts, rng, ledger, stage=stage,
                       what=("DP-GD: " + ("log-histograms for bounds (L2 sensitivity "
                             "sqrt(#bounded columns)), " if hist else "")
                             + f"{epochs} releases of the {loss}-loss gradient sum, each "
                             f"row's gradient clipped to L2 norm {clip:.4g} (L2 sensitivity "
                             f"{clip:.4g})" + ("; inference: the curvature at the released "
                             "fit (L2 sensitivity 1/4 logistic, 1 squared) and, squared loss, "
                             "the residual sum of squares, residuals clipped to [-1, 1] (L2 "
                             "sensitivity 1)" if inf > 0 else "")))


def _gradient_sum(U, y, theta, loss: str, clip: float) -> np.ndarray:
    """Sum over rows of the per-row gradients, each clipped to L2 norm ``clip`` (the value of
    :func:`gradient_fixed`)."""
    return gradient_fixed(U, y, theta, loss, clip).value


def gradient_fixed(U, y, theta, loss: str, clip: float) -> FixedSum:
    """:func:`_gradient_sum` as an exact sum (:func:`dpstats._kernels.row_sums.row_sum_fixed`:
    each row's clipped gradient on a grid, added as integers; parts of the rows add up to the
    same bits)."""
    eta = U @ theta
    if loss == "logistic":
        r = 0.5 * (1.0 + np.tanh(0.5 * eta)) - y      # sigmoid without overflow
    else:
        r = eta - y
    norms = np.abs(r) * np.sqrt(np.einsum("ij,ij->i", U, U))
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return row_sum_fixed(U, clip, weights=r * scale)


def _plan_and_bounds(X, y, plan, loss: str, opt: dict, eps: float, eps_n: float, delta: float,
                     rng, ledger, names, stage: str,
                     counts_of=None) -> tuple[GaussianGDP, BoundedDesign, float]:
    """The Gaussian-DP plan (made first: it is charged before any release; ``eps_n`` is kept
    for the row count) and the bounded design, whose private bounds are one more part of that
    plan ("hist") or pure-eps quantiles taking ``bounds_share`` of ``eps`` ("quantile"):
    ``(plan, design, eps_bounds)``."""
    hist = plan.private and opt["bounds_method"] == "hist"
    opt["inference_on"] = opt["inference_share"] if counts_of is None else 0.0  # not on dask
    opt["exempt"] = tuple(plan.known)       # public ranges known by construction: no tail gate
    eps_b = eps * opt["bounds_share"] if plan.private and not hist else 0.0
    gdp = _gdp_plan(eps - eps_b - eps_n, delta, loss, opt, hist, rng, ledger, stage)
    extra = () if counts_of is None else (counts_of,)      # dask: the histograms given
    release = hist_release(lambda v, s: (gdp.release("bounds", v, s), gdp.sigma("bounds", s)),
                           *extra) if hist else \
        abs_quantile_release(eps_b, opt["bounds_q"], rng, ledger, stage=stage, names=names)
    design = bounded_design(X, y, plan, release, drop_below=_DEGENERATE, drop_failed=hist)
    return gdp, design, eps_b


def _descend(U, yu, plan: GaussianGDP, loss: str, opt: dict, n_hat: float,
             gradient=None) -> np.ndarray:
    """Noisy gradient descent: ``epochs`` releases, mu-GDP in total (``plan``).
    ``gradient(theta)``: the clipped gradient sum computed elsewhere (dask: one pass)."""
    theta = np.zeros(U.shape[1])
    for _step in range(opt["epochs"]):
        total = _gradient_sum(U, yu, theta, loss, opt["clip"]) if gradient is None \
            else gradient(theta)
        noisy = plan.release("gradient", total, opt["clip"])
        theta -= opt["lr"] * noisy / n_hat
    return theta


def _to_original(design: BoundedDesign, theta, s: float, loss: str) -> np.ndarray:
    """Coefficients on the original scale from a fit on rows divided by ``s`` (DP-GD's own
    order of operations; dropped columns get 0)."""
    icol, mid, half = design.intercept_col, design.mid, design.half
    feats = [j for j in design.kept if j != icol]
    beta = np.zeros(mid.size)
    for j in feats:
        beta[j] = theta[j] / (s * half[j])
    if icol is not None:
        beta[icol] = theta[icol] / s - math.fsum(beta[j] * mid[j] for j in feats)
    if loss == "squared":
        beta *= design.y_half
        if icol is not None:
            beta[icol] += design.y_mid
    return beta


def _facts(design, gdp, opt, loss, n_hat, plan, eps, eps_b, eps_n) -> dict:
    """The public facts of a fit (``clip``, ``dropped``, ``details``)."""
    return {"clip": design.clip, "dropped": design.dropped, "details": {
        "loss": loss, "lr": opt["lr"], "clip": opt["clip"], "epochs": opt["epochs"],
        "sigma": gdp.sigma("gradient", opt["clip"]), "mu": gdp.mu_total, "n_noisy": n_hat,
        "bounds": plan.source(coarse=True), "eps_bounds": eps_b, "eps_n": eps_n,
        "eps_gd": eps - eps_b - eps_n}}


def _inference(loss, gdp, U, y, theta, design, s, opt, n_hat, eps):
    """Standard errors (:mod:`dpstats.estimators.inference.dpgd`; their parts of the plan);
    None when ``inference_share`` is 0 or on dask (``inference_on`` 0)."""
    if not opt["inference_on"] > 0:
        return None if not opt["inference_share"] > 0 else gated(
            design.mid.size, opt["inference_share"], "DP-GD computes no standard errors on a "
            "dask frame yet (its inference parts are reserved, so releases equal an in-memory "
            "fit's); fit in memory for intervals", "mu^2")
    return dpgd_inference(
        loss, gdp, U, y if loss == "logistic" else design.y, theta, design, s, lr=opt["lr"],
        T=opt["epochs"], sigma_g=gdp.sigma("gradient", opt["clip"]), n_hat=n_hat, eps=eps,
        share=opt["inference_on"], to_original=lambda t: _to_original(design, t, s, loss),
        exempt=opt.get("exempt", ()))


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, loss: str = "squared",
             lr: float | None = None, clip: float = DEFAULT_CLIP, epochs: int = DEFAULT_EPOCHS,
             bounds: object = "auto", intercept_col: int | None = None, names=None,
             stage: str = "regression", n_noisy: float | None = None, engine=None,
             known_x_bounds: dict | None = None, bounds_share: float = BOUNDS_SHARE,
             bounds_method: str = BOUNDS_METHOD, bounds_q: float = BOUNDS_Q,
             inference_share: float = INFERENCE_WEIGHT) -> Estimate:
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
    lr, clip, epochs
        Step size on the mean gradient (None: ``1/L``, 1 squared, 4 logistic); L2 clipping
        norm of each row's gradient (the L2 sensitivity of each released sum); number of
        noisy full-batch steps (default 200; the noise grows like ``sqrt(epochs)``).
    bounds, intercept_col, names, stage
        As in :func:`dpstats.estimators.adassp.estimate` (y only for squared loss); the
        intercept column is kept at 1 and absorbs the centring of the columns.
    n_noisy : float, optional
        A row count already released by the pipeline; otherwise one is released here.
    known_x_bounds : dict {column index: (lo, hi)}, optional
        Public ranges known by construction (e.g. 0/1 indicator columns of a categorical);
        they override ``bounds`` for those columns and cost nothing.
    bounds_share, bounds_method, bounds_q
        Share of the budget for private bounds (default 0.2, used only when some are needed:
        of ``mu^2`` for ``"hist"``, of ``eps`` for ``"quantile"``), how they are released
        (module docstring) and the tail mass above each quantile bound (default 0.02).
    inference_share : float (share of mu^2 for standard errors: :mod:`.inference.dpgd`)
    engine : object, optional (dask statistics, :mod:`dpstats.dask`: X and y have no rows)

    Returns
    -------
    Estimate
        ``clip`` is the released box, ``dropped`` the columns left out; ``details`` holds the
        public run parameters (sigma, mu, lr, clip, epochs, n_noisy, bounds source). Withheld
        only when the label's private bounds are unusable.

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
    opt = validate_options(OPTIONS, {"lr": lr, "clip": clip, "epochs": epochs, "bounds_share":
                                     bounds_share, "bounds_method": bounds_method, "bounds_q":
                                     bounds_q, "inference_share": inference_share},
                           fixed={"loss": loss})
    eps, delta = check_eps(eps), check_delta(delta)
    X, y, intercept_col = check_inputs(X, y, intercept_col, rng)
    if loss == "logistic" and not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("loss='logistic' needs a label coded 0/1; recode it first")
    plan = plan_bounds(X, bounds, intercept_col=intercept_col, names=names,
                       label=loss == "squared", known=known_x_bounds)
    eps_n = eps * COUNT_SHARE if n_noisy is None else 0.0
    gdp, design, eps_b = _plan_and_bounds(X, y, plan, loss, opt, eps, eps_n, delta, rng,
                                          ledger, names, stage, engine and engine.counts_of)
    if n_noisy is None:
        n_noisy = private_count(X.shape[0], eps_n, rng, ledger, stage=f"{stage}: n")
    n_hat, s = max(float(n_noisy), 1.0), math.sqrt(len(design.kept))
    U = np.ascontiguousarray(design.X) / s                 # rows of L2 norm <= 1, C order
    grad = None if engine is None else engine.gradient(design, s, loss, opt["clip"])
    theta = _descend(U, y if loss == "logistic" else design.y, gdp, loss, opt, n_hat, grad)
    facts = _facts(design, gdp, opt, loss, n_hat, plan, eps, eps_b, eps_n)
    if design.unusable:
        return withheld(X.shape[1], Withheld.LABEL_BOUNDS, **facts)
    return Estimate(params=_to_original(design, theta, s, loss), released=True, **facts,
                    inference=_inference(loss, gdp, U, y, theta, design, s, opt, n_hat, eps))
