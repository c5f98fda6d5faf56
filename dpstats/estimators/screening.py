"""The screening rule of 001 (Raj et al. 2016) for L1-constrained regression, and a sound private
version of it.

Problem: ``min f(X w)`` over the L1 ball ``C = {||w||_1 <= lam}``, rows ``|x_rj| <= 1`` (after
:func:`dpstats.mechanisms.bounds.to_unit`), ``f`` in **sum form**
(:mod:`dpstats._kernels.frank_wolfe`),
``L``-smooth and ``mu``-strongly convex in ``u = X w`` on ``{|u_r| <= lam}``:
squared loss ``L = mu = 1``; logistic loss ``L = 1/4``, ``mu = s (1 - s)`` with
``s = sigmoid(lam)``. Write ``g = grad f(u)``, ``a = X^T g``, ``B = u^T g`` and the Wolfe gap
``G(w) = max_{z in C} (u - X z)^T g = B + lam ||a||_inf``.

**Rule** (:func:`rule_statistic`). Feature ``i`` is zero in every optimum if

    R_i = lam |a_i| + B + L sqrt(2 G / mu) (lam ||x_(i)||_2 + ||u||_2) < 0.

Derivation: at an optimum ``w*``, ``u*^T g* = -lam ||a*||_inf`` (optimality over ``C`` and
Hoelder), so ``|a*_i| < ||a*||_inf`` forces ``w*_i = 0``. Strong convexity and the gap give
``||u - u*||_2 <= rho = sqrt(2 G / mu)``; smoothness gives ``||g - g*||_2 <= L rho``. Hence
``|a*_i| <= |a_i| + L rho ||x_(i)||`` and ``u*^T g* <= u^T g* <= B + L rho ||u||``, so
``lam |a*_i| + u*^T g* <= R_i``. With ``lam = 1`` this is 001's Eq. (1); 001 prints it without
the two factors ``lam`` (not safe for ``lam != 1``) and with ``sqrt(G / mu)`` (the factor 2
belongs to the usual definition of strong convexity). Scaling ``f`` by ``1/n`` (001's mean form)
does not change the sign of ``R_i``.

**Privacy** (neighbours: add/remove one row ``(x, y)``). ``R_i`` itself has no
data-independent sensitivity: its last term is a product of quantities that grow like
``sqrt(n)`` (near an optimum ``G ~ 0`` and one row can raise ``sqrt(G)`` by ``O(1)`` while
``||u||`` is ``O(sqrt(n))``). 001's Eqs. (2)-(3) (:func:`paper_sensitivity`) bound a product by
the product of the factors' sensitivities, which is not a bound (see the tests for a
counterexample). dpstats therefore releases the *components* with the Gaussian mechanism and
computes ``R_i`` from them (post-processing): ``v = (a, B, ||u||^2)`` at every screening
iteration, plus the column norms ``c_i = ||x_(i)||^2`` at the first one. One row changes ``v``
by ``(l' x, u l', u^2)`` with ``|u| <= lam`` (``w`` stays in ``C``) and
``|l'| <= M`` (``M = lam + 1`` squared loss with ``|y| <= 1``; ``M = sigmoid(lam)`` logistic),
so (:func:`component_sensitivity`)

    ||Delta v||_2^2 <= M^2 (d + lam^2) + lam^4        (+ d for the column norms),

with ``d`` the number of columns including the intercept (``||x||_2^2 <= d``, ``|x_j^2| <= 1``).
The ``l`` screening releases compose as in 001 (:func:`screen_plan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..mechanisms import analytic_gaussian_sigma, gaussian
from ..mechanisms.accountant import Ledger, advanced_composition
from .fw_sums import norm_sums, screen_sums

__all__ = ["derivative_bound", "curvature", "rule_statistic", "exact_components", "exact_rule",
           "component_sensitivity", "paper_sensitivity", "paper_iteration_budget", "ScreenPlan",
           "screen_plan", "PrivateScreener", "ExactScreener"]


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def derivative_bound(loss: str, radius: float) -> float:
    """``M = sup |l'(u, y)|`` over ``|u| <= radius`` and admissible labels.

    Squared loss ``(u - y)^2 / 2`` with ``|y| <= 1``: ``|u - y| <= radius + 1``. Logistic loss
    with ``t = +-1``: ``|l'| = 1 / (1 + exp(t u)) <= sigmoid(radius)``.

    >>> derivative_bound("squared", 5.0), round(derivative_bound("logistic", 5.0), 4)
    (6.0, 0.9933)
    """
    return radius + 1.0 if loss == "squared" else _sigmoid(radius)


def curvature(loss: str, radius: float) -> tuple[float, float]:
    """``(L, mu)``: smoothness and strong convexity of the sum-form loss in ``u`` on
    ``{|u_r| <= radius}`` (squared ``(1, 1)``; logistic ``(1/4, s (1 - s))``, ``s =
    sigmoid(radius)``)."""
    if loss == "squared":
        return 1.0, 1.0
    s = _sigmoid(radius)
    return 0.25, s * (1.0 - s)


def rule_statistic(a, B: float, uu: float, c, radius: float, L: float, mu: float) -> np.ndarray:
    """``R_i`` of the module docstring from the components ``a = X^T g``, ``B = u^T g``,
    ``uu = ||u||^2`` and ``c = (||x_(i)||^2)_i`` (exact or noisy; negative noisy squared norms
    and gaps are clamped at 0). Feature ``i`` is screened when ``R_i < 0``."""
    a = np.asarray(a, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    gap = max(B + radius * float(np.max(np.abs(a))), 0.0)
    rho = math.sqrt(2.0 * gap / mu)
    return radius * np.abs(a) + B + L * rho * (radius * np.sqrt(np.maximum(c, 0.0))
                                               + math.sqrt(max(uu, 0.0)))


def exact_components(Xt, u, r, g=None) -> tuple[np.ndarray, float, float, np.ndarray]:
    """Non-private ``(a, B, ||u||^2, column squared norms)`` from ``Xt`` (d, n), ``u`` and the
    per-row derivatives ``r`` (``g = Xt @ r`` when not given)."""
    a = Xt @ r if g is None else g
    return a, float(u @ r), float(u @ u), np.einsum("ij,ij->i", Xt, Xt)


def exact_rule(Xt, u, y, loss: str, radius: float) -> np.ndarray:
    """Non-private ``R`` at the point with linear predictor ``u`` (for tests and benchmarks)."""
    from .._kernels.frank_wolfe import loss_gradient
    g, r = loss_gradient(Xt, u, y, loss)
    L, mu = curvature(loss, radius)
    return rule_statistic(*exact_components(Xt, u, r, g), radius, L, mu)


def component_sensitivity(loss: str, radius: float, d: int, *, with_norms: bool) -> float:
    """L2 sensitivity of the released components (module docstring), add/remove one row.

    >>> round(component_sensitivity("squared", 1.0, 3, with_norms=False), 4)
    4.1231
    """
    M = derivative_bound(loss, radius)
    return math.sqrt(M * M * (d + radius ** 2) + radius ** 4 + (d if with_norms else 0.0))


def paper_sensitivity(loss: str, radius: float, d: int) -> float:
    """001's Eq. (2) (squared) / Eq. (3) (logistic) times ``n`` (sum form), for comparison only.

    **Not a valid sensitivity** of ``R`` (module docstring): it bounds the change of a product
    by the product of changes. Used by the benchmark to reproduce 001 and by the tests.

    >>> round(paper_sensitivity("squared", 5.0, 1), 1)
    120.0
    """
    lam, rd = radius, math.sqrt(d)
    if loss == "squared":
        return 2 * lam * rd + 2 * lam ** 2 * rd + (rd + lam * rd) * math.sqrt(4 * lam ** 2)
    s = _sigmoid(lam)
    return (2 * s * rd + 2 * lam * s * rd
            + 0.25 * (rd + lam * rd) * math.sqrt(4 * lam * s / (s * (1 - s))))


def paper_iteration_budget(eps2: float, delta2: float, k: int) -> tuple[float, float]:
    """001 Algorithm 1, lines 2-3, for ``k`` (001: ``l``) screening releases:
    ``delta_iter = delta2 / (k + 1)`` and ``eps_iter = eps2 / (2 sqrt(2 k log(1 / delta_iter)))``.

    >>> e, d = paper_iteration_budget(2.5, 1 / 6000, 1000)
    >>> round(e, 5), round(d * 6000 * 1001, 6)
    (0.00707, 1.0)
    """
    delta_iter = delta2 / (k + 1)
    return eps2 / (2.0 * math.sqrt(2.0 * k * math.log(1.0 / delta_iter))), delta_iter


@dataclass(frozen=True)
class ScreenPlan:
    """Per-release budget and noise of ``releases`` screening releases costing
    ``(eps2, delta2)``.

    ``composition`` is ``"advanced (001)"`` or ``"basic"``; ``sigma_first`` is the noise of
    the first release (which also carries the column norms); ``sigma_classic`` is 001's
    ``sqrt(2 s^2 log(1.25 / delta_iter)) / eps_iter`` for the same ``s``, shown for comparison
    (valid only for ``eps_iter <= 1``; dpstats uses the analytic calibration, never larger).
    """

    releases: int
    eps_iter: float
    delta_iter: float
    composition: str
    sensitivity: float
    sensitivity_first: float
    sigma: float
    sigma_first: float
    sigma_classic: float


def screen_plan(eps2: float, delta2: float, k: int, loss: str, radius: float,
                d: int) -> ScreenPlan:
    """Budget per screening release (data-independent) for ``k`` releases.

    Two ways to pay for ``k`` Gaussian releases with ``(eps2, delta2)``: 001's advanced
    composition (:func:`paper_iteration_budget`; if its second-order term pushes the total above
    ``eps2``, ``eps_iter`` is lowered by bisection until
    :func:`~dpstats.mechanisms.accountant.advanced_composition` gives at most ``eps2``), or basic
    composition ``(eps2 / k, delta2 / k)``. The one with the smaller noise is used (basic wins
    for small ``l``, e.g. screening only at the last iteration). Noise: analytic Gaussian
    calibration (:func:`~dpstats.mechanisms.analytic_gaussian_sigma`).
    """
    s = component_sensitivity(loss, radius, d, with_norms=False)
    s1 = component_sensitivity(loss, radius, d, with_norms=True)
    e_adv, d_adv = paper_iteration_budget(eps2, delta2, k)
    e_adv = min(e_adv, math.log(2.0))   # above ln 2 advanced never beats basic (no overflow)
    if advanced_composition(e_adv, d_adv, k, d_adv)[0] > eps2:
        lo, hi = 0.0, e_adv
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if advanced_composition(mid, d_adv, k, d_adv)[0] <= eps2 \
                else (lo, mid)
        e_adv = lo
    unit_adv = analytic_gaussian_sigma(1.0, e_adv, d_adv)
    unit_basic = analytic_gaussian_sigma(1.0, eps2 / k, delta2 / k)
    if unit_basic < unit_adv:
        e, dl, comp = eps2 / k, delta2 / k, "basic"
    else:
        e, dl, comp = e_adv, d_adv, "advanced (001)"
    classic = s * math.sqrt(2.0 * math.log(1.25 / dl)) / e
    return ScreenPlan(releases=k, eps_iter=e, delta_iter=dl, composition=comp, sensitivity=s,
                      sensitivity_first=s1, sigma=analytic_gaussian_sigma(s, e, dl),
                      sigma_first=analytic_gaussian_sigma(s1, e, dl), sigma_classic=classic)


class PrivateScreener:
    """Private screening statistic: Gaussian release of the components, then ``R``.

    Call with ``(u, g, r)`` (linear predictor, gradient ``X^T r``, per-row derivatives) at a
    point ``w`` in the ball; returns the noisy ``R`` (length d). Every call is one
    :func:`~dpstats.mechanisms.gaussian` release at ``(plan.eps_iter, plan.delta_iter)``,
    charged to ``ledger`` (the caller accounts for the composition of the ``l`` releases).
    The first call also releases the column norms.
    """

    def __init__(self, Xt, loss: str, radius: float, plan: ScreenPlan,
                 rng: np.random.Generator, ledger: Ledger | None, stage: str | None = None,
                 grid=None):
        self._Xt, self._radius, self._plan, self._loss = Xt, float(radius), plan, loss
        self._grid = grid            # Xt's rows quantised (fw_sums.GridMatrix), or None
        self._L, self._mu = curvature(loss, radius)
        self._rng, self._ledger, self._stage = rng, ledger, stage
        self._c: np.ndarray | None = None
        self.calls = 0

    @property
    def first(self) -> bool:
        """Whether the next release also carries the column norms."""
        return self._c is None

    def __call__(self, u, g, r) -> np.ndarray:
        """The release at ``u`` (``g``: the gradient, itself an exact sum): ``B`` and
        ``||u||^2`` (and the column norms) summed exactly on grids of their public bounds
        (:mod:`dpstats.estimators.fw_sums`)."""
        s = screen_sums(u, r, self._radius, derivative_bound(self._loss, self._radius))
        c = norm_sums(self._Xt.T if self._grid is None else self._grid).value \
            if self.first else None
        return self.release(g, float(s["B"].value[0]), float(s["uu"].value[0]), c)

    def release(self, g, B: float, uu: float, c=None) -> np.ndarray:
        """The Gaussian release of ``(X^T g, u^T g, ||u||^2)`` (and the column norms ``c`` at
        the first call) and the rule statistic of the noisy components."""
        d, p = len(g), self._plan
        first = self._c is None
        parts = [g, [B, uu]] + ([c] if first else [])
        noisy = gaussian(np.concatenate(parts), p.sensitivity_first if first else p.sensitivity,
                         p.eps_iter, p.delta_iter, self._rng, self._ledger, stage=self._stage,
                         what="screening components (X^T g, u^T g, ||u||^2"
                              + (", column norms)" if first else ")"))
        if first:
            self._c = noisy[d + 2:]
        self.calls += 1
        return rule_statistic(noisy[:d], noisy[d], noisy[d + 1], self._c, self._radius,
                              self._L, self._mu)


class ExactScreener:
    """Non-private screening statistic (tests, benchmarks): same call as
    :class:`PrivateScreener`, no noise. Never use its output in a release."""

    def __init__(self, Xt, loss: str, radius: float):
        self._Xt, self._radius = Xt, float(radius)
        self._L, self._mu = curvature(loss, radius)
        self._c = np.einsum("ij,ij->i", Xt, Xt)

    def __call__(self, u, g, r) -> np.ndarray:
        return rule_statistic(g, float(u @ r), float(u @ u), self._c, self._radius,
                              self._L, self._mu)
