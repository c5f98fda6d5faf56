"""Noise samplers used by :mod:`dpstats.mechanisms` (and nothing else).

Mechanisms call these functions; callers of mechanisms never see them, so a stronger sampler can
replace one here without touching any caller.

Additive noise is drawn on a grid. The value is rounded to a multiple of a power-of-two
granularity ``g`` and integer noise in units of ``g`` is added, drawn exactly
(:mod:`dpstats.mechanisms.discrete`), so the set of possible outputs is ``g * Z`` whatever the
input. This closes the gap-in-support attack on floating-point samplers (Mironov 2012), where
the low bits of ``value + float_noise`` tell which input produced it. The rounding is paid for
in the sensitivity:

* :func:`grid_laplace` (``g`` about ``2^-20`` of the scale): the L1 sensitivity in grid units is
  ``floor(sensitivity / g) + d`` for d coordinates, and discrete Laplace noise of scale
  ``units / eps`` (rounded up to a dyadic rational) gives exactly eps-DP.
* :func:`grid_gaussian` (``g`` about ``2^-41`` of sigma): see its docstring for the proof that the
  release is as private as the continuous Gaussian mechanism the caller's accounting assumed.

Gumbel and exponential noise (:func:`gumbel_noise`, :func:`standard_exponential`) stay in
floating point. They feed selection mechanisms (the exponential mechanism by Gumbel-max, the
Lipschitz top-k) whose output is an index or a set of indices, never the noisy float, and every
index has positive probability under every input, so there is no support to leak through low
bits. Float rounding only perturbs the selection probabilities, by relative amounts near
``2^-50`` (and the truncated tails of 53-bit uniforms, events of probability about ``2^-53``).
With :class:`~dpstats.mechanisms.rng.SecureGenerator` those draws use full-precision uniforms.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import discrete as _noise_discrete

__all__ = ["grid_laplace", "grid_gaussian", "gumbel_noise", "granularity_for",
           "gaussian_granularity"]

#: Grid granularity relative to the noise scale (2**-20 ~ 1e-6 of the scale).
_REL_GRANULARITY_BITS = 20


def granularity_for(scale: float) -> float:
    """Power-of-two grid step about 2**-20 times ``scale``."""
    return math.ldexp(1.0, math.floor(math.log2(scale)) - _REL_GRANULARITY_BITS)


#: Gaussian grid: sigma / g lies in [2^41, 2^42).
_GAUSS_GRID_BITS = 41


def gaussian_granularity(sigma: float) -> float:
    """Power-of-two grid step with ``sigma / g`` in ``[2^41, 2^42)``."""
    return math.ldexp(1.0, math.floor(math.log2(sigma)) - _GAUSS_GRID_BITS)


def _discrete_laplace(t, size, rng: np.random.Generator) -> np.ndarray:
    """Integers z with P(z) proportional to exp(-|z| / t'), drawn exactly, as float64.

    ``t`` (a float or a ``Fraction``) is rounded up to a dyadic rational ``t' >= t`` with
    ``t' / t - 1 < 2^-40``.
    """
    num, den = _noise_discrete.dyadic_at_least(Fraction(t))
    shape = () if size is None else (tuple(size) if np.iterable(size) else (int(size),))
    z = _noise_discrete.discrete_laplace(num, den, math.prod(shape), rng)
    return z.astype(np.float64).reshape(shape)


def grid_laplace(value, sensitivity: float, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Release ``value + Laplace(sensitivity / eps)`` on a power-of-two grid.

    Parameters
    ----------
    value : float or array
        True statistic(s).
    sensitivity : float
        L1 sensitivity of ``value`` (add/remove one row).
    eps : float
        Privacy parameter.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Noisy values, all multiples of the grid step.
    """
    value = np.asarray(value, dtype=np.float64)
    g = granularity_for(sensitivity / eps)
    # Rounding moves each coordinate by at most half a step, so neighbours' rounded values
    # differ by at most floor(sensitivity / g) + (number of coordinates) steps in L1.
    units = math.floor(sensitivity / g) + max(value.size, 1)
    z = _discrete_laplace(Fraction(units) / Fraction(eps), value.shape, rng)
    return g * (np.round(value / g) + z)


def grid_gaussian(value, l2_sensitivity: float, sigma: float,
                  rng: np.random.Generator) -> np.ndarray:
    """Release ``value`` plus Gaussian noise of standard deviation ``sigma``, on a grid.

    The output is ``g * (round(value / g) + Z)`` with ``g = gaussian_granularity(sigma)`` and
    ``Z`` a vector of independent discrete Gaussians ``N_Z(0, s2)``, drawn exactly, where
    ``s2 >= (sigma' / g)^2`` and ``sigma' = sigma * (1 + g sqrt(d) / l2_sensitivity)`` for a value
    with d coordinates. The inflation is below ``2^-41 sqrt(d) / mu`` (``mu = Delta / sigma``).

    Privacy. Let ``Delta = l2_sensitivity`` and ``c = round(value / g)``; the caller's accounting
    is for a Gaussian mechanism with ``Delta / sigma = mu``.

    1. Rounding moves each coordinate by at most 1/2, so for neighbours
       ``||c - c'||_2 <= Delta / g + sqrt(d)``.
    2. The *ideal* release ``round(c + N(0, s2 I))`` is post-processing of a Gaussian mechanism
       on ``c`` with sensitivity-to-noise ratio at most
       ``(Delta / g + sqrt(d)) g / sigma' = (Delta + g sqrt(d)) / (sigma (1 + g sqrt(d) / Delta))
       = mu``: it is ``mu``-GDP and satisfies the analytic (eps, delta) calibration, both of
       which depend only on that ratio.
    3. Our release differs from the ideal one only in the noise per coordinate: with ``phi``
       the N(0, s2) density, ``P(n) = phi(n) / sum_k phi(k)`` against
       ``Q(n) = int_{n-1/2}^{n+1/2} phi``. By Poisson summation
       ``sum_k phi(k) = 1 + 2 sum_j exp(-2 pi^2 s2 j^2)``, within ``exp(-10^25)`` of 1, and
       ``Q(n) / phi(n) = int_{-1/2}^{1/2} exp(-(2 n u + u^2) / (2 s2)) du`` lies in
       ``[exp(-1 / (8 s2)), exp(n^2 / (24 s2^2))]`` (``sinh(x)/x <= exp(x^2/6)``). For
       ``|n| <= 40 s`` the log ratio is below ``67 / s2 < 2e-23`` (``s >= 2^41``) and both tails
       beyond ``40 s`` have mass below ``exp(-790)``.

    So over a whole analysis releasing D coordinates, any event's probability under our sampler
    is within a factor ``exp(2e-23 D)`` of the ideal one, up to ``D exp(-790)``: what the ledger
    charges holds with eps larger by ``4e-23 D`` (under 1e-15 for D < 1e7 coordinates), far
    below anything it prints.

    Parameters
    ----------
    value : float or array
        True statistic(s).
    l2_sensitivity : float
        L2 sensitivity of ``value`` under the caller's neighbouring relation.
    sigma : float
        Standard deviation the caller's accounting assumed for ``l2_sensitivity``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Noisy values, all multiples of ``g`` (same shape as ``value``).

    Examples
    --------
    >>> out = grid_gaussian([0.0, 1.0], 1.0, 2.0, np.random.default_rng(0))
    >>> g = gaussian_granularity(2.0)
    >>> bool(np.all(out / g == np.round(out / g)))
    True
    """
    value = np.asarray(value, dtype=np.float64)
    sigma, delta_2 = float(sigma), float(l2_sensitivity)
    if not (math.isfinite(sigma) and sigma > 0 and math.isfinite(delta_2) and delta_2 > 0):
        raise ValueError(f"sigma and l2_sensitivity must be finite and > 0; got {sigma!r}, "
                         f"{l2_sensitivity!r}")
    g, d = gaussian_granularity(sigma), max(value.size, 1)
    s = sigma / g * (1.0 + g * math.sqrt(d) / delta_2)
    while s >= 2.0**43:                  # only when the inflation is large: coarser grid
        g *= 2.0
        s = sigma / g * (1.0 + g * math.sqrt(d) / delta_2)
    s2 = s * s * (1.0 + 2.0**-45)        # covers the float64 rounding of s
    z = _noise_discrete.discrete_gaussian(s2, value.size, rng).reshape(value.shape)
    return g * (np.round(value / g) + z)


def gumbel_noise(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """Standard Gumbel noise times ``scale`` (for Gumbel-max sampling)."""
    return rng.gumbel(0.0, scale, size=size)


def standard_exponential(size, rng: np.random.Generator) -> np.ndarray:
    """Standard exponential noise, Exp(1) (for the canonical Lipschitz mechanism)."""
    return rng.standard_exponential(size=size)


def box_muller_normal(size, rng: np.random.Generator) -> np.ndarray:
    """Standard normal draws by the Box-Muller transform of two uniforms, so that every
    generator dpstats uses (the OS-CSPRNG :class:`~dpstats.mechanisms.rng.SecureGenerator`
    included, which offers uniforms but no normals) gives exact N(0, 1) in distribution (for
    the continuous noise of objective perturbation).

    >>> box_muller_normal(3, np.random.default_rng(0)).shape
    (3,)
    """
    n = int(np.prod(size))
    u1 = 1.0 - rng.random(n)                 # (0, 1]: the logarithm is finite
    u2 = rng.random(n)
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)).reshape(size)


def uniform_subset(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``size``-subset of ``range(n)`` as an int64 array (order not uniform).

    Floyd's algorithm: O(size) time and memory whatever ``n``.
    """
    if not 0 <= size <= n:
        raise ValueError(f"cannot draw {size} distinct values from range({n})")
    chosen: set[int] = set()
    out = np.empty(size, dtype=np.int64)
    for i, j in enumerate(range(n - size, n)):
        t = int(rng.integers(0, j + 1))
        pick = j if t in chosen else t
        chosen.add(pick)
        out[i] = pick
    return out
