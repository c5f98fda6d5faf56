"""Noise samplers used by :mod:`dpstats.mechanisms` (and nothing else).

Mechanisms call these functions; callers of mechanisms never see them, so a stronger sampler can
replace one here without touching any caller.

Laplace noise is drawn on a grid: the value is rounded to a multiple of a power-of-two
granularity ``g`` and integer (discrete Laplace) noise in units of ``g`` is added, so the set of
possible outputs is ``g * Z`` whatever the input. This closes the gap-in-support attack on
floating-point Laplace samplers (Mironov 2012). The rounding is paid for in the sensitivity:
in grid units it is ``floor(sensitivity / g) + d`` for a value with d coordinates.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["grid_laplace", "gaussian_noise", "gumbel_noise", "granularity_for"]

#: Grid granularity relative to the noise scale (2**-20 ~ 1e-6 of the scale).
_REL_GRANULARITY_BITS = 20


def granularity_for(scale: float) -> float:
    """Power-of-two grid step about 2**-20 times ``scale``."""
    return math.ldexp(1.0, math.floor(math.log2(scale)) - _REL_GRANULARITY_BITS)


def _discrete_laplace(t: float, size, rng: np.random.Generator) -> np.ndarray:
    """Integers z with P(z) proportional to exp(-|z| / t), as a difference of geometrics."""
    p = -math.expm1(-1.0 / t)
    return (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(np.float64)


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
    z = _discrete_laplace(units / eps, value.shape, rng)
    return g * (np.round(value / g) + z)


def gaussian_noise(sigma: float, size, rng: np.random.Generator) -> np.ndarray:
    """Centred Gaussian noise with standard deviation ``sigma``."""
    return rng.normal(0.0, sigma, size=size)


def gumbel_noise(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """Standard Gumbel noise times ``scale`` (for Gumbel-max sampling)."""
    return rng.gumbel(0.0, scale, size=size)


def standard_exponential(size, rng: np.random.Generator) -> np.ndarray:
    """Standard exponential noise, Exp(1) (for the canonical Lipschitz mechanism)."""
    return rng.standard_exponential(size=size)


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
