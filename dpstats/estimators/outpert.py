"""Private logistic regression by output perturbation of a ridge fit, with a private threshold.

Chaudhuri, Monteleoni & Sarwate (2011), section 3 (output perturbation), in the Gaussian form
of Kifer, Smith & Thakurta (2012), followed by a private choice of the decision threshold that
always includes the two intercept-only models ("predict 0" and "predict 1"), so the released
classifier is never much worse than the majority class.

Neighbours: add/remove one row. The steps of :func:`estimate` and what each one costs (the
stage's ``(eps, delta)`` is split by basic composition; the shares are public defaults):

1. **Bounds** (only for columns whose bounds are not public). As in
   :mod:`dpstats.estimators.dpgd`: one Gaussian release of log-scale histograms of the bounded
   columns (:func:`dpstats.estimators.bounded.histogram_bounds`, L2 sensitivity
   ``sqrt(#columns)``) as a part (``BOUNDS_WEIGHT`` of ``mu^2``) of the Gaussian-DP plan of
   step 2. Public ranges of indicator columns are used as given and cost nothing. Every
   non-intercept column is mapped into ``[-1, 1]`` (clipping) and every row is divided by
   ``sqrt(p')`` (``p'`` columns kept, intercept included): ``||u_i||_2 <= 1``.
2. **Ridge fit, released with Gaussian noise.** ``theta`` minimises the *sum* objective
   ``F(t) = sum_i l(u_i . t, y_i) + (Lam / 2) ||t||^2`` with the logistic loss ``l``, which is
   1-Lipschitz in ``t`` on unit-norm rows. ``F`` is ``Lam``-strongly convex, so adding one row
   (a term whose gradient has norm at most 1) moves the minimiser by at most ``1 / Lam``
   (compare the first-order conditions; removing is the same pair read backwards). The solver
   stops only when ``||grad F|| <= GRAD_TOL``, which puts it within ``GRAD_TOL / Lam`` of the
   exact minimiser, so the **L2 sensitivity is ``(1 + 2 GRAD_TOL) / Lam``**. The release is
   one Gaussian part of the plan (:class:`dpstats.mechanisms.gdp.GaussianGDP`, charged once for
   both parts, ``mu``-GDP hence ``(eps_gdp, delta)``-DP). ``Lam = KAPPA sqrt(p') / mu_theta`` is
   a function of public quantities only: the noise then has standard deviation
   ``1 / (KAPPA sqrt(p'))`` per coordinate, L2 norm about ``1 / KAPPA`` whatever ``n``, while
   the ridge ``Lam / n`` relative to the mean loss vanishes as ``n`` grows. No row count is used.
3. **Threshold.** With the released ``theta``, each row's score ``s_i = u_i . theta`` is a
   function of the row and released values. The candidates are ``-inf`` (predict 1
   everywhere), ``+inf`` (predict 0 everywhere) and ``N_THRESHOLDS`` points ``R g_k`` on
   ``[-R, R]``, ``R = ||theta||_2`` (released; ``|s_i| <= R``), denser near 0 (``g`` cubic in a
   uniform grid). Utility of a candidate: the number of rows it classifies correctly. Adding a
   row raises each utility by 0 or 1, so the utilities have sensitivity 1 and are monotone:
   the **exponential mechanism** in its monotone form (:func:`dpstats.mechanisms.exponential`,
   ``exp(eps_t u)``) is ``eps_t``-DP. The released intercept is shifted by the chosen threshold
   (a row is predicted 1 when ``s_i >= t``, the rule of ``predict``/``score`` after the shift).
4. **Prevalence** (only when an intercept-only candidate wins). The counts of 0s and 1s (one
   row changes one count by 1: L1 sensitivity 1) are released by the Laplace mechanism
   (:func:`dpstats.mechanisms.laplace`, ``eps_c``-DP); the released model is then the
   intercept ``logit(p_hat)`` with every slope 0 (``p_hat`` clamped to the side the mechanism
   chose). The budget is charged whether or not it is used, so that what is charged does not
   depend on the data.

The whole estimator is ``(eps, delta)``-DP. It releases no standard errors
(:data:`dpstats.estimators.inference.glm.OUTPERT_REASON` says why). Coefficients are mapped
back to the original scale (post-processing); the fit is exact for the winsorised predictor,
so the released box is ``Estimate.clip`` as for DP-GD. Defaults (``KAPPA``, the shares, the
grid) come from the data-independent simulation of ``benchmarks/glm_auto_rule.py`` (design note
28). On a dask frame (``engine=``, :mod:`dpstats.dask.glm`) the same solver and releases read
sums over the partitions: one pass per point the solver evaluates, one for the threshold.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from ..mechanisms import exponential, laplace
from ..mechanisms.accountant import Ledger
from ..mechanisms.gdp import GaussianGDP
from ..validation import Option, OptionSpec, check_delta, check_eps, validate_options
from .bounded import bounded_design, check_inputs, hist_release, plan_bounds
from .dpgd import _to_original as dpgd_to_original
from .inference.glm import outpert_inference
from .outcome import Estimate

__all__ = ["estimate", "ridge_fit", "threshold_grid", "choose_threshold", "intercept_only",
           "threshold_and_map",
           "to_original", "Rows", "unit_rows", "KAPPA", "THRESHOLD_SHARE", "COUNT_SHARE",
           "BOUNDS_WEIGHT", "N_THRESHOLDS", "GRAD_TOL", "OPTIONS", "COMMON"]

#: Target L2 norm of the noise on the unit-ball scale is ``1 / KAPPA``.
KAPPA = 2.0
#: Share of the stage's eps for the private threshold (exponential mechanism).
THRESHOLD_SHARE = 0.10
#: Share of the stage's eps for the class counts of an intercept-only release.
COUNT_SHARE = 0.05
#: Share of ``mu^2`` of the Gaussian-DP plan for the private bounds (when any are needed).
BOUNDS_WEIGHT = 0.2
#: Number of finite threshold candidates (two intercept-only candidates are added).
N_THRESHOLDS = 31
#: The solver stops when the gradient of the sum objective has at most this L2 norm.
GRAD_TOL = 1e-8
#: Released bounds at most this mark a column that is (almost) always zero.
_DEGENERATE = 2.0**-30

#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "intercept_col", "names", "bounds", "stage",
                    "known_x_bounds", "engine"})
#: Output perturbation's options.
OPTIONS = OptionSpec((
    Option("kappa", "real", KAPPA, range=(0.0, None),
           doc=f"inverse target norm of the noise on the unit scale, e.g. {KAPPA}"),
    Option("threshold_share", "real", THRESHOLD_SHARE, range=(0.0, 1.0),
           doc="share of eps for the private threshold, e.g. 0.1"),
    Option("bounds_weight", "real", BOUNDS_WEIGHT, range=(0.0, 1.0),
           doc="share of the Gaussian budget (mu^2) for private bounds, e.g. 0.2"),
))


def ridge_fit(U: np.ndarray, y: np.ndarray, lam: float, *, tol: float = GRAD_TOL,
              max_iter: int = 500, linear: np.ndarray | None = None) -> np.ndarray:
    """Minimiser of ``sum_i log(1 + exp(u_i t)) - y_i u_i t + lam/2 ||t||^2 (+ linear . t)`` by
    damped Newton, run until the gradient norm is at most ``tol`` (the objective is
    ``lam``-strongly convex and smooth, so Newton with backtracking converges from 0).

    >>> U = np.array([[0.5, 0.5], [0.5, -0.5], [0.5, 0.1]])
    >>> t = ridge_fit(U, np.array([1.0, 0.0, 1.0]), 1.0)
    >>> bool(t[1] > 0)
    True
    """
    p = U.shape[1]
    t = np.zeros(p)
    b = np.zeros(p) if linear is None else np.asarray(linear, dtype=np.float64)

    def objective(v):
        e = U @ v
        return float(np.sum(np.logaddexp(0.0, e) - y * e) + 0.5 * lam * (v @ v) + b @ v)

    f = objective(t)
    for _ in range(max_iter):
        e = U @ t
        mu = 0.5 * (1.0 + np.tanh(0.5 * e))
        g = U.T @ (mu - y) + lam * t + b
        if math.sqrt(float(g @ g)) <= tol:
            break
        H = (U.T * (mu * (1.0 - mu))) @ U + lam * np.eye(p)
        step = np.linalg.solve(H, g)
        dec = float(g @ step)
        if dec < 1e-8:          # near the minimum: pure Newton (the objective's rounding
            t = t - step        # error would stall a line search), quadratic convergence
            f = objective(t)
            continue
        s = 1.0
        while True:
            cand = t - s * step
            fc = objective(cand)
            if fc <= f - 0.25 * s * dec or s < 1e-14:
                break
            s *= 0.5
        t, f = cand, fc
    return t


def threshold_grid(radius: float, k: int = N_THRESHOLDS) -> np.ndarray:
    """The finite threshold candidates: ``radius * g**3`` for ``g`` uniform on ``[-1, 1]``
    (``k`` points, 0 included for odd ``k``); a function of the released ``radius`` only.

    >>> threshold_grid(8.0, 5).tolist()
    [-8.0, -1.0, 0.0, 1.0, 8.0]
    """
    g = np.linspace(-1.0, 1.0, k)
    return float(radius) * g**3


def _plan(eps_gdp: float, delta: float, private_bounds: bool, weight: float, rng, ledger,
          stage: str) -> GaussianGDP:
    parts = {"theta": (1, 1.0 - weight if private_bounds else 1.0)}
    if private_bounds:
        parts = {"bounds": (1, weight), **parts}
    return GaussianGDP(eps_gdp, delta, parts, rng, ledger, stage=stage,
                       what=("output perturbation: " + ("log-histograms for bounds (L2 "
                             "sensitivity sqrt(#bounded columns)), " if private_bounds else "")
                             + "the ridge-logistic minimiser (L2 sensitivity (1 + 2 tol) / Lam)"))


class Rows:
    """The statistics of the unit-norm rows ``U`` and 0/1 labels ``y`` that output and
    objective perturbation read: the ridge fit, the threshold utilities and the class counts.
    A dask engine supplies an object with the same methods (:class:`dpstats.dask.glm.DaskRows`)."""

    def __init__(self, U: np.ndarray, y: np.ndarray):
        self.U, self.y = U, y

    def ridge_fit(self, lam: float, tol: float = GRAD_TOL, linear=None) -> np.ndarray:
        """:func:`ridge_fit` on the rows."""
        return ridge_fit(self.U, self.y, lam, tol=tol, linear=linear)

    def correct(self, theta, cands) -> np.ndarray:
        """Rows classified correctly by each candidate threshold (predict 1 iff the score
        ``u . theta >= t``, as predict/score: probability >= 0.5 after the shift)."""
        scores, pos = self.U @ theta, self.y == 1.0
        s1, s0 = np.sort(scores[pos]), np.sort(scores[~pos])
        return (s1.size - np.searchsorted(s1, cands, side="left")) \
            + np.searchsorted(s0, cands, side="left")

    def class_counts(self) -> np.ndarray:
        """``[#y = 0, #y = 1]``."""
        return np.array([np.sum(self.y == 0.0), np.sum(self.y == 1.0)], dtype=np.float64)


def choose_threshold(rows, theta, eps_t: float, rng, ledger, stage: str) -> float:
    """Exponential mechanism (monotone, sensitivity 1) over the thresholds of the released
    ``theta`` on ``rows`` (:class:`Rows`); returns the chosen threshold (``-inf``: predict 1
    everywhere, ``+inf``: predict 0 everywhere)."""
    theta_norm = float(np.linalg.norm(theta))
    grid = threshold_grid(theta_norm) if theta_norm > 0 else np.zeros(0)
    cands = np.concatenate([[-np.inf, np.inf], grid])
    # correct = #(y=1 with s >= t) + #(y=0 with s < t)
    correct = rows.correct(theta, cands)
    idx = exponential(correct.astype(np.float64), 1.0, eps_t, rng, ledger, monotone=True,
                      stage=f"{stage}: threshold",
                      what=f"decision threshold among {cands.size} candidates (utility: rows "
                           "classified correctly)")
    return float(cands[idx])


def intercept_only(rows, side: float, eps_c: float, rng, ledger, stage: str) -> float:
    """The released intercept of the intercept-only model on ``side`` (+1 predicts 1)."""
    noisy = laplace(rows.class_counts(), 1.0, eps_c, rng, ledger, stage=f"{stage}: class counts",
                    what="counts of the two classes (one row is in one class)")
    n0, n1 = max(float(noisy[0]), 1.0), max(float(noisy[1]), 1.0)
    p_hat = min(max(n1 / (n0 + n1), 0.01), 0.99)
    logit = math.log(p_hat / (1.0 - p_hat))
    return max(logit, 0.01) if side > 0 else min(logit, -0.01)


def unit_rows(design, kept, s: float, y, engine=None):
    """The kept columns of the mapped design divided by ``s`` (rows of L2 norm <= 1) as a
    :class:`Rows`, or on dask the engine's equivalent."""
    if engine is not None:
        return engine.logistic_rows(design, kept, s)
    return Rows(np.ascontiguousarray(design.X[:, kept]) / s, y)


def to_original(design, theta, s: float) -> np.ndarray:
    """Coefficients on the original scale from a fit on rows divided by ``s`` (DP-GD's map for
    a logistic loss: the label is not rescaled)."""
    return dpgd_to_original(design, theta, s, "logistic")


def threshold_and_map(rows, theta_k, design, kept, s: float, icol, p: int, eps_t: float,
                      eps_c: float, rng, ledger, stage: str):
    """After the released ``theta_k``: the private threshold (``eps_t``; with an intercept
    only), the intercept-only fallback's count (``eps_c``) and the map to original-scale
    coefficients. Returns ``(threshold, intercept_only, beta)``; shared by output and
    objective perturbation."""
    t = choose_threshold(rows, theta_k, eps_t, rng, ledger, stage) if icol is not None else 0.0
    only = not math.isfinite(t)
    b0 = (intercept_only(rows, -1.0 if t > 0 else 1.0, eps_c, rng, ledger, stage)
          if icol is not None else None)
    beta = np.zeros(p)
    if only:
        beta[icol] = b0
        return t, only, beta
    theta = np.zeros(p)
    theta[kept] = theta_k
    if icol is not None:
        theta[icol] -= t * s          # u_0 = 1 / s: predict 1 iff u . theta >= t
    return t, only, to_original(design, theta, s)


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, bounds: object = "auto",
             intercept_col: int | None = None, names=None, stage: str = "regression",
             known_x_bounds: dict | None = None, kappa: float = KAPPA,
             threshold_share: float = THRESHOLD_SHARE,
             bounds_weight: float = BOUNDS_WEIGHT, engine=None) -> Estimate:
    """Private logistic regression by output perturbation and a private threshold.

    Parameters
    ----------
    X, y : arrays
        Design matrix (rows are the privacy units) and 0/1 label.
    eps, delta : float
        Budget of this stage (module docstring for its split).
    rng : numpy.random.Generator
    ledger : Ledger, optional
    bounds, intercept_col, names, stage, known_x_bounds
        As in :func:`dpstats.estimators.dpgd.estimate`.
    kappa, threshold_share, bounds_weight, engine
        Options (:data:`OPTIONS`); dask statistics (:mod:`dpstats.dask.glm`; X, y no rows).

    Returns
    -------
    Estimate
        ``details``: public facts (``lam``, ``sigma``, ``mu``, ``threshold``, ...).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> y = (rng.uniform(size=5000) < 1 / (1 + np.exp(-3 * X[:, 1]))).astype(float)
    >>> est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, bounds=(-1, 1), intercept_col=0)
    >>> bool(est.params[1] > 1.0)
    True
    """
    opt = validate_options(OPTIONS, {"kappa": kappa, "threshold_share": threshold_share,
                                     "bounds_weight": bounds_weight})
    eps, delta = check_eps(eps), check_delta(delta)
    X, y, intercept_col = check_inputs(X, y, intercept_col, rng)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValidationError("output perturbation needs a label coded 0/1; recode it first")
    plan = plan_bounds(X, bounds, intercept_col=intercept_col, names=names, label=False,
                       known=known_x_bounds)
    icol = intercept_col          # without an intercept there is no threshold to shift
    eps_t, eps_c = ((eps * opt["threshold_share"], eps * COUNT_SHARE) if icol is not None
                    else (0.0, 0.0))
    gdp = _plan(eps - eps_t - eps_c, delta, plan.private, opt["bounds_weight"], rng, ledger,
                stage)
    release = hist_release(lambda v, s: (gdp.release("bounds", v, s), gdp.sigma("bounds", s)),
                           engine and engine.counts_of)
    design = bounded_design(X, y, plan, release if plan.private else None,
                            drop_below=_DEGENERATE, drop_failed=plan.private)
    kept = list(design.kept)
    s = math.sqrt(len(kept))
    rows = unit_rows(design, kept, s, y, engine)               # rows of L2 norm <= 1
    mu_theta = gdp.mu("theta")
    lam = opt["kappa"] * s / mu_theta
    sens = (1.0 + 2.0 * GRAD_TOL) / lam
    theta_k = gdp.release("theta", rows.ridge_fit(lam), sens)
    t, only, beta = threshold_and_map(rows, theta_k, design, kept, s, icol, X.shape[1],
                                      eps_t, eps_c, rng, ledger, stage)
    details = {"lam": lam, "sigma": gdp.sigma("theta", sens), "mu": gdp.mu_total,
               "threshold": t, "intercept_only": only, "kappa": opt["kappa"],
               "bounds": plan.source(coarse=True), "eps_threshold": eps_t, "eps_counts": eps_c}
    return Estimate(params=beta, released=True, inference=outpert_inference(X.shape[1]),
                    clip=design.clip, dropped=design.dropped, details=details)
