"""Objective perturbation for convex generalised linear models (Chaudhuri, Monteleoni & Sarwate
2011; Gaussian form after Kifer, Smith & Thakurta 2012), with the output noise that covers an
approximate minimiser (Iyengar et al. 2019, "approximate minima perturbation").

The mechanism draws a random linear term ``b`` for the objective; the caller minimises

    J(t) = sum_i l(u_i . t, y_i) + (ridge / 2) ||t||^2 + b . t

to gradient norm at most ``tol`` and releases the minimiser through :meth:`release`, which adds
a little Gaussian noise. Requirements on the caller (stated, not checked): every row has
``||u_i||_2 <= 1``; each loss term is convex and twice differentiable in ``t`` with gradient
``c u_i``, ``|c| <= gradient_bound``, and Hessian ``h u_i u_i'``, ``0 <= h <= hessian_bound``
(logistic loss: 1 and 1/4).

**Privacy (add/remove one row, rows of norm <= 1).** Let ``D' = D + {z}``. For the exact
minimiser ``t``, ``b_D(t) = -grad L_D(t) - ridge t`` is a bijection; the density of ``t`` is
``phi(b_D(t)) det(H_D(t) + ridge I)``. With ``v = grad l_z(t) = c u_z`` and ``b ~ N(0, s^2 I)``:

    log p_D'(t) / p_D(t) = (2 b.v - |v|^2) / (2 s^2) + log det(I + (H_D + ridge)^-1 h u u'),

the last term in ``[0, log(1 + hessian_bound / ridge)] = [0, eps_j]`` (a rank-one update).
``b . u_z ~ N(0, s^2 |u_z|^2)`` is one-dimensional whatever ``t``, and ``|b . u_z| <= s q``
(``q = Phi^-1(1 - delta_o / 2)``) except with probability ``delta_o``, so both privacy losses
(with ``t`` drawn under ``D`` or under ``D'``) are at most
``eps_j + g q / s + g^2 / (2 s^2)`` (``g = gradient_bound``) except with probability
``delta_o``: the exact minimiser is ``(eps_o, delta_o)``-DP with ``ridge = hessian_bound /
(exp(eps_j) - 1)`` and ``s`` solving ``g q / s + g^2 / (2 s^2) = eps_o - eps_j``.

**Approximate minimiser.** ``J`` is ``ridge``-strongly convex, so a point with gradient norm
``<= tol`` is within ``r = tol / ridge`` of the exact minimiser. :meth:`release` adds Gaussian
noise calibrated to L2 sensitivity ``r`` at ``(eps_a, delta_a)`` (grid noise,
:func:`dpstats.mechanisms.noise.grid_gaussian`); comparing with the exact minimiser plus the
same noise on both sides gives ``(eps_o + 2 eps_a, e^eps_a delta_o + (1 + e^(eps_o + eps_a))
delta_a)``-DP, which is what is charged: ``eps_a = AMP_SHARE eps``, ``delta_a`` is
``AMP_SHARE delta / (1 + e^eps)`` and the rest is the objective's.

The ledger is charged ``(eps, delta)`` once, when the mechanism is made, before ``b`` is drawn.
One release per mechanism.

Examples
--------
>>> op = ObjectivePerturbation(3, 1.0, 1e-5, np.random.default_rng(0))
>>> op.b.shape, round(op.ridge, 4), round(op.sigma, 3)
((3,), 2.3821, 5.029)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from ..errors import BudgetExceededError, ValidationError
from ..validation import check_delta, check_eps
from . import noise as _noise
from .accountant import Ledger
from .additive import analytic_gaussian_sigma

__all__ = ["ObjectivePerturbation", "JACOBIAN_SHARE", "AMP_SHARE", "objective_sigma"]

#: Share of the mechanism's eps paid by the Jacobian term (sets the ridge).
JACOBIAN_SHARE = 0.1
#: Share of eps (and of delta, see the module docstring) for the output noise of an
#: approximate minimiser.
AMP_SHARE = 1e-3


def objective_sigma(eps_g: float, delta: float, gradient_bound: float = 1.0) -> float:
    """Noise standard deviation ``s`` of ``b`` with ``g q / s + g^2 / (2 s^2) = eps_g``,
    ``q = Phi^-1(1 - delta / 2)``.

    >>> s = objective_sigma(0.9, 1e-5)
    >>> round(float(ndtri(1 - 0.5e-5)) / s + 1 / (2 * s * s), 6)
    0.9
    """
    q = float(ndtri(1.0 - delta / 2.0))
    a = -q + math.sqrt(q * q + 2.0 * eps_g)          # a = g / s
    return gradient_bound / a


class ObjectivePerturbation:
    """A charged draw of the linear term ``b`` and the ridge of a perturbed objective, and the
    release of its (approximate) minimiser (module docstring for the conditions and proof).

    Parameters
    ----------
    dim : int
        Number of coefficients.
    eps, delta : float
        What the whole mechanism costs (charged once, up front).
    rng : numpy.random.Generator
    ledger : Ledger, optional
    gradient_bound, hessian_bound : float
        Bounds on a loss term's gradient factor and Hessian factor on unit-norm rows
        (logistic: 1 and 1/4).
    tol : float
        The gradient norm the caller's minimiser reaches (sets the output noise).
    stage, what : str
        For the ledger.
    """

    def __init__(self, dim: int, eps: float, delta: float, rng: np.random.Generator,
                 ledger: Ledger | None = None, *, gradient_bound: float = 1.0,
                 hessian_bound: float = 0.25, tol: float = 1e-6, stage: str | None = None,
                 what: str = "objective perturbation") -> None:
        eps, delta = check_eps(eps), check_delta(delta)
        if int(dim) < 1 or not (tol > 0 and gradient_bound > 0 and hessian_bound > 0):
            raise ValidationError("ObjectivePerturbation needs dim >= 1 and positive tol and "
                                  "bounds")
        eps_a = AMP_SHARE * eps
        delta_a = AMP_SHARE * delta / (1.0 + math.exp(eps))
        eps_o = eps - 2.0 * eps_a
        delta_o = (delta - (1.0 + math.exp(eps_o + eps_a)) * delta_a) * math.exp(-eps_a)
        eps_j = JACOBIAN_SHARE * eps_o
        self.ridge = hessian_bound / math.expm1(eps_j)
        self.sigma = objective_sigma(eps_o - eps_j, delta_o, gradient_bound)
        self.tol = float(tol)
        self.radius = self.tol / self.ridge
        self.sigma_out = analytic_gaussian_sigma(self.radius, eps_a, delta_a)
        self._rng, self._left = rng, 1
        if ledger is not None:
            ledger.charge("objective perturbation", eps, delta, stage=stage,
                          detail=f"{what}; gradient factor <= {gradient_bound:.4g}, Hessian "
                                 f"factor <= {hessian_bound:.4g} on rows of L2 norm <= 1; "
                                 f"ridge {self.ridge:.4g}, b ~ N(0, {self.sigma:.4g}^2 I); "
                                 f"output noise sd {self.sigma_out:.3g} (minimiser to "
                                 f"gradient norm {self.tol:.3g})")
        self.b = self.sigma * _noise.box_muller_normal(int(dim), rng)  # continuous (density proof)

    def release(self, value) -> np.ndarray:
        """Release the caller's minimiser ``value`` (gradient norm of ``J`` at most ``tol``)
        with the output noise; at most once."""
        if self._left < 1:
            raise BudgetExceededError("this objective perturbation was already released")
        self._left -= 1
        v = np.asarray(value, dtype=np.float64)
        return _noise.grid_gaussian(v, self.radius, self.sigma_out, self._rng)
