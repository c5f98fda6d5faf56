"""Additive-noise mechanisms: Laplace, Gaussian (analytic calibration) and a private row count."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..validation import check_delta, check_eps
from . import noise as _noise
from .accountant import Ledger

__all__ = ["laplace", "gaussian", "analytic_gaussian_sigma", "private_count"]


def _check_sensitivity(sensitivity: float) -> float:
    s = float(sensitivity)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}")
    return s


def laplace(value, sensitivity: float, eps: float, rng: np.random.Generator,
            ledger: Ledger | None = None, *, stage: str | None = None, what: str = "value"):
    """Laplace mechanism: ``value + Laplace(sensitivity / eps)``, eps-DP.

    Neighbours: add/remove one row. ``sensitivity`` is the L1 sensitivity of ``value`` under that
    relation (the caller states it; for a vector it is the L1 norm bound of the change). Noise is
    drawn on a power-of-two grid (see :mod:`dpstats.mechanisms.noise`), so outputs under
    neighbouring inputs share the same support.

    Returns a float for scalar input and an array otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> abs(laplace(10.0, 1.0, 1e6, rng) - 10.0) < 1e-3
    True
    """
    eps = check_eps(eps)
    sensitivity = _check_sensitivity(sensitivity)
    if ledger is not None:
        ledger.charge("laplace", eps, 0.0, stage=stage,
                      detail=f"{what}; L1 sensitivity {sensitivity:.4g}, "
                             f"scale {sensitivity / eps:.4g}")
    out = _noise.grid_laplace(value, sensitivity, eps, rng)
    return float(out) if out.ndim == 0 else out


def analytic_gaussian_sigma(sensitivity: float, eps: float, delta: float) -> float:
    """Smallest sigma for which the Gaussian mechanism is (eps, delta)-DP (Balle & Wang 2018).

    Solves ``Phi(D/(2s) - e s/D) - exp(e) Phi(-D/(2s) - e s/D) <= delta`` by bisection in
    log-space; valid for every eps > 0 (the classic ``sqrt(2 ln(1.25/delta))`` rule is only valid
    for eps <= 1).

    >>> round(analytic_gaussian_sigma(1.0, 1.0, 1e-5), 2)
    3.73
    """
    sensitivity = _check_sensitivity(sensitivity)
    eps, delta = check_eps(eps), check_delta(delta)

    def delta_of(sig: float) -> float:
        a = sensitivity / (2 * sig) - eps * sig / sensitivity
        b = -sensitivity / (2 * sig) - eps * sig / sensitivity
        return math.exp(log_ndtr(a)) - math.exp(eps + log_ndtr(b))

    lo, hi = 1e-12 * sensitivity, sensitivity
    while delta_of(hi) > delta:
        hi *= 2.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return hi


def gaussian(value, sensitivity: float, eps: float, delta: float, rng: np.random.Generator,
             ledger: Ledger | None = None, *, stage: str | None = None, what: str = "value"):
    """Gaussian mechanism with analytic calibration, (eps, delta)-DP.

    Neighbours: add/remove one row; ``sensitivity`` is the L2 sensitivity of ``value``. Noise is
    discrete Gaussian on a power-of-two grid with the rounding paid for
    (:func:`dpstats.mechanisms.noise.grid_gaussian`), so outputs under neighbouring inputs share the
    same support and the analytic calibration still holds.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> abs(gaussian(1.0, 1.0, 1e4, 1e-5, rng) - 1.0) < 0.01
    True
    """
    sigma = analytic_gaussian_sigma(sensitivity, eps, delta)
    if ledger is not None:
        ledger.charge("gaussian", eps, delta, stage=stage,
                      detail=f"{what}; L2 sensitivity {sensitivity:.4g}, sigma {sigma:.4g}")
    out = _noise.grid_gaussian(value, sensitivity, sigma, rng)
    return float(out) if out.ndim == 0 else out


def private_count(n: int, eps: float, rng: np.random.Generator, ledger: Ledger | None = None,
                  *, eta: float = 1e-4, stage: str | None = "private n") -> float:
    """Private lower bound on a row count (003 section 4).

    Releases ``n + Laplace(1/eps) - ln(1/(2 eta)) / eps``, which is below the true ``n`` with
    probability ``1 - eta``. Sensitivity 1 under add/remove one row; eps-DP.

    >>> import numpy as np
    >>> private_count(1000, 1e6, np.random.default_rng(0)) < 1000
    True
    """
    if not (0 < eta < 0.5):
        raise ValueError(f"eta must be in (0, 0.5); got {eta!r}")
    eps = check_eps(eps)
    noisy = laplace(float(n), 1.0, eps, rng, ledger, stage=stage, what="row count")
    return noisy - math.log(1.0 / (2.0 * eta)) / eps
