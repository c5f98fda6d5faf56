"""Gaussian differential privacy (GDP) for pre-planned, possibly adaptive Gaussian releases.

A Gaussian release ``value + N(0, sigma^2)`` of a statistic with L2 sensitivity ``s`` under
add/remove one row is ``mu``-GDP with ``mu = s / sigma`` (Dong, Roth & Su 2022). Adaptive
composition of ``mu_1 .. mu_k``-GDP releases is ``sqrt(sum mu_i^2)``-GDP, and ``mu``-GDP implies
``(eps, delta(mu))``-DP for every ``eps > 0`` with

    delta(mu) = Phi(-eps/mu + mu/2) - exp(eps) * Phi(-eps/mu - mu/2).

:func:`gdp_mu` returns the **largest** ``mu`` with ``delta(mu) <= delta`` by bisection
(``delta(mu)`` increases with ``mu``). The authors' reference code for Boosted AdaSSP returns
the first value of a grid that *violates* ``delta`` instead.

:class:`GaussianGDP` is the mechanism: it charges the ledger once, up front, for the whole
(eps, delta) of a plan of releases, and then adds to each release Gaussian noise of
``sigma = sensitivity / mu_i`` for the ``mu_i`` the plan gives that release. It refuses releases
beyond the plan, so what it charged is always an upper bound on what it released.

Private bounds from histograms: :func:`log_histograms` counts every column over a fixed,
data-independent log-scale grid (L2 sensitivity ``sqrt(k)`` for k columns under add/remove one
row); after one Gaussian release of the stacked counts, :func:`spans_from_histograms` and
:func:`detection_threshold` turn the noisy counts into bounds (post-processing).

Examples
--------
>>> round(gdp_mu(1.0, 1e-5), 4)
0.2681
>>> gdp_delta(gdp_mu(1.0, 1e-5), 1.0) <= 1e-5
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..errors import BudgetExceededError, ValidationError
from ..validation import check_delta, check_eps
from . import noise as _noise
from .accountant import Ledger

__all__ = ["gdp_delta", "gdp_mu", "GaussianGDP", "log_histograms", "octave_sums", "log_grid_index",
           "log_grid_edges", "detection_threshold", "spans_from_histograms", "CELLS_PER_OCTAVE",
           "grid_cells"]


def gdp_delta(mu: float, eps: float) -> float:
    """``delta`` for which ``mu``-GDP implies ``(eps, delta)``-DP (Dong, Roth & Su, Cor. 2.13).

    Computed as ``Phi(a) * (1 - exp(eps + log Phi(b) - log Phi(a)))`` in log space, so it stays
    accurate when both terms are far below machine epsilon.

    >>> round(gdp_delta(1.0, 1.0), 6)
    0.126937
    """
    mu, eps = float(mu), float(eps)
    if not (mu > 0 and math.isfinite(mu)):
        raise ValidationError(f"mu must be a finite number > 0; got {mu!r}")
    la = float(log_ndtr(-eps / mu + mu / 2.0))
    lb = float(log_ndtr(-eps / mu - mu / 2.0))
    x = eps + lb - la
    return 0.0 if x >= 0 else math.exp(la) * -math.expm1(x)


def gdp_mu(eps: float, delta: float, *, rtol: float = 1e-12) -> float:
    """Largest ``mu`` such that ``mu``-GDP implies ``(eps, delta)``-DP.

    Bisection in log space on the monotone map ``mu -> delta(mu)`` until the bracket is within
    relative width ``rtol``; the lower end (which satisfies ``delta(mu) <= delta``) is returned.

    >>> mu = gdp_mu(10.0, 1e-5)
    >>> gdp_delta(mu, 10.0) <= 1e-5 < gdp_delta(mu * (1 + 1e-9), 10.0)
    True
    """
    eps, delta = check_eps(eps), check_delta(delta)
    lo, hi = 1e-3, 1.0
    while gdp_delta(lo, eps) > delta:
        lo /= 2.0
    while gdp_delta(hi, eps) <= delta:
        lo, hi = hi, hi * 2.0
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        if gdp_delta(mid, eps) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


class GaussianGDP:
    """A pre-paid plan of Gaussian releases, composed under Gaussian DP.

    Neighbours: add/remove one row. ``plan`` maps a part name to ``(count, weight)``: the part
    makes ``count`` releases and receives the share ``weight / sum(weights)`` of ``mu^2``, split
    evenly over its releases, so each release of part ``k`` is ``mu_k``-GDP with
    ``mu_k = mu * sqrt(w_k / (W * count_k))`` and the whole plan is ``mu``-GDP (adaptive
    composition), ``mu = gdp_mu(eps, delta)``, hence ``(eps, delta)``-DP. Each release adds
    noise of standard deviation ``sensitivity / mu_k``, where ``sensitivity`` is the L2
    sensitivity the caller states for that release: discrete Gaussian noise on a power-of-two
    grid, with the rounding paid for by a slightly larger sigma, which is ``mu_k``-GDP like the
    continuous release (:func:`dpstats.mechanisms.noise.grid_gaussian`).

    The ledger is charged ``(eps, delta)`` once, when the plan is made, before any noise is
    drawn; the detail lists ``mu`` and every part's ``mu_k``.

    Examples
    --------
    >>> plan = GaussianGDP(1.0, 1e-5, {"a": (1, 1.0), "b": (4, 3.0)}, np.random.default_rng(0))
    >>> round(plan.sigma("b", 1.0) / plan.sigma("a", 1.0), 6)
    1.154701
    """

    def __init__(self, eps: float, delta: float, plan: dict, rng: np.random.Generator,
                 ledger: Ledger | None = None, *, stage: str | None = None,
                 what: str = "Gaussian releases") -> None:
        eps, delta = check_eps(eps), check_delta(delta)
        if not plan:
            raise ValidationError("plan must name at least one part, e.g. {'xty': (1, 1.0)}")
        for name, (count, weight) in plan.items():
            if int(count) < 1 or not (float(weight) > 0 and math.isfinite(float(weight))):
                raise ValidationError(f"plan[{name!r}] must be (count >= 1, finite weight > 0); "
                                      f"got {(count, weight)!r}")
        self.eps, self.delta = eps, delta
        self.mu_total = gdp_mu(eps, delta)
        total_w = math.fsum(float(w) for _, w in plan.values())
        self._mu = {k: self.mu_total * math.sqrt(float(w) / (total_w * int(c)))
                    for k, (c, w) in plan.items()}
        self._left = {k: int(c) for k, (c, _) in plan.items()}
        self._rng = rng
        if ledger is not None:
            parts = "; ".join(f"{k}: {int(c)} x mu {self._mu[k]:.4g}"
                              for k, (c, _) in plan.items())
            ledger.charge("gaussian (GDP)", eps, delta, stage=stage,
                          detail=f"{what}; composed under Gaussian DP, mu {self.mu_total:.6g} "
                                 f"= sqrt(sum mu_i^2); {parts}; sigma = L2 sensitivity / mu_i")

    def mu(self, part: str) -> float:
        """GDP parameter of one release of ``part``."""
        return self._mu[part]

    def sigma(self, part: str, sensitivity: float) -> float:
        """Noise standard deviation of one release of ``part`` with the given sensitivity."""
        s = float(sensitivity)
        if not (s > 0 and math.isfinite(s)):
            raise ValidationError(f"sensitivity must be a finite number > 0; got "
                                  f"{sensitivity!r}")
        return s / self._mu[part]

    def remaining(self, part: str) -> int:
        """Releases of ``part`` still allowed by the plan."""
        return self._left[part]

    def release(self, part: str, value, sensitivity: float, *, symmetric: bool = False):
        """Release ``value`` plus Gaussian noise of ``sigma(part, sensitivity)``.

        ``symmetric=True`` (square matrices) releases the upper triangle, diagonal included,
        and mirrors it (the result is exactly symmetric); ``sensitivity`` is then the L2
        sensitivity of that upper triangle. Raises
        :class:`~dpstats.errors.BudgetExceededError` when the plan has no release of ``part``
        left (it was not paid for).
        """
        if self._left.get(part, 0) < 1:
            raise BudgetExceededError(f"the GDP plan has no release of {part!r} left (not paid "
                                      "for); plan one more release of it")
        sigma = self.sigma(part, sensitivity)
        self._left[part] -= 1
        v = np.asarray(value, dtype=np.float64)
        if symmetric:
            if v.ndim != 2 or v.shape[0] != v.shape[1]:
                raise ValidationError("symmetric=True needs a square matrix; got shape "
                                      f"{v.shape}")
            iu = np.triu_indices(v.shape[0])
            out = np.zeros(v.shape)
            out[iu] = _noise.grid_gaussian(v[iu], sensitivity, sigma, self._rng)
            return out + np.triu(out, 1).T
        out = _noise.grid_gaussian(v, sensitivity, sigma, self._rng)
        return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------- private bounds from histograms
#: Cells per octave of the public log-scale grid used by :func:`log_histograms`.
CELLS_PER_OCTAVE = 4
_OCT = 64          # octaves on each side of 1: |v| in [2^-64, 2^64)


def grid_cells(per_octave: int = CELLS_PER_OCTAVE) -> int:
    """Number of cells of the fixed log-scale grid of :func:`log_grid_index` (public).

    >>> grid_cells(1)
    257
    """
    return 2 * (2 * _OCT * per_octave) + 1


def log_grid_index(values, per_octave: int = CELLS_PER_OCTAVE) -> np.ndarray:
    """Index of each value's cell in a fixed, data-independent grid, monotone in the value.

    Cells: ``{0}``; ``[2^(i/c), 2^((i+1)/c))`` for ``i`` in ``[-64c, 64c)`` and their mirror
    images (``c`` = ``per_octave``). Values beyond ``2^+-64`` fall into the outermost cells.
    Each value lies in exactly one cell (floating-point rounding at an edge only moves it to a
    neighbouring cell, still exactly one), which is all the histogram's sensitivity needs.

    >>> log_grid_index(np.array([-3.0, 0.0, 1.0, 1.5]), 1).tolist()
    [62, 128, 193, 193]
    """
    v = np.asarray(values, dtype=np.float64)
    zero = 2 * _OCT * per_octave
    with np.errstate(divide="ignore"):
        i = np.floor(per_octave * np.log2(np.abs(v)))
    i = np.clip(np.nan_to_num(i, neginf=-_OCT * per_octave), -_OCT * per_octave,
                _OCT * per_octave - 1).astype(np.int64) + _OCT * per_octave
    return np.where(v > 0, zero + 1 + i, np.where(v < 0, zero - 1 - i, zero))


def log_grid_edges(index, per_octave: int = CELLS_PER_OCTAVE) -> tuple[np.ndarray, np.ndarray]:
    """Left and right edges of the cells with the given indices (see :func:`log_grid_index`).

    >>> [e.tolist() for e in log_grid_edges(np.array([62, 128, 193]), 1)]
    [[-4.0, 0.0, 1.0], [-2.0, 0.0, 2.0]]
    """
    idx = np.asarray(index, dtype=np.int64)
    zero = 2 * _OCT * per_octave
    k = np.abs(idx - zero) - 1 - _OCT * per_octave          # cell [2^(k/c), 2^((k+1)/c))
    inner, outer = np.exp2(k / per_octave), np.exp2((k + 1) / per_octave)
    left = np.where(idx > zero, inner, np.where(idx < zero, -outer, 0.0))
    right = np.where(idx > zero, outer, np.where(idx < zero, -inner, 0.0))
    return left, right


def log_histograms(columns: np.ndarray, per_octave: int = CELLS_PER_OCTAVE) -> np.ndarray:
    """Counts of every column of ``columns`` (n, k) over the log grid: shape (k, cells).

    Adding or removing one row changes exactly one count of each of the k histograms by 1, so
    the stacked counts have L2 sensitivity ``sqrt(k)`` (add/remove one row).
    """
    cols = np.asarray(columns, dtype=np.float64)
    m = grid_cells(per_octave)
    return np.stack([np.bincount(log_grid_index(cols[:, j], per_octave), minlength=m)
                     for j in range(cols.shape[1])]).astype(np.float64)


def detection_threshold(sigma: float, n_cells: int, alpha: float = 0.01) -> float:
    """Count above which a noisy cell is taken to hold data: ``z sigma`` with ``z`` chosen so
    that all ``n_cells`` empty cells together exceed it with probability about ``alpha``."""
    from scipy.special import ndtri
    return float(ndtri(1.0 - alpha / n_cells)) * sigma


def spans_from_histograms(noisy: np.ndarray, threshold: float,
                          per_octave: int = CELLS_PER_OCTAVE) -> tuple[np.ndarray, np.ndarray]:
    """Post-processing of released noisy histograms: for each row of ``noisy``, the left edge of
    the lowest and the right edge of the highest cell above ``threshold``.

    A histogram with no such cell, or only the cell {0}, gets ``(-2^64, 2^64)``: nothing usable
    was released, and such wide bounds make the column (nearly) constant after mapping.
    """
    k, m = noisy.shape
    lo, hi = np.full(k, -2.0 ** _OCT), np.full(k, 2.0 ** _OCT)
    for j in range(k):
        hit = np.flatnonzero(noisy[j] > threshold)
        if hit.size:
            left, _ = log_grid_edges(hit[:1], per_octave)
            _, right = log_grid_edges(hit[-1:], per_octave)
            if left[0] < right[0]:
                lo[j], hi[j] = left[0], right[0]
    return lo, hi


def octave_sums(noisy: np.ndarray, per_octave: int = CELLS_PER_OCTAVE) -> np.ndarray:
    """Histograms over the log grid with ``per_octave`` cells per octave, summed into the grid
    with one cell per octave (same layout as ``log_grid_index(v, 1)``).

    >>> v = np.array([[-3.0], [0.0], [1.0], [1.5], [2.5]])
    >>> bool((octave_sums(log_histograms(v, 4)) == log_histograms(v, 1)).all())
    True
    """
    noisy = np.atleast_2d(np.asarray(noisy, dtype=np.float64))
    zero = (noisy.shape[1] - 1) // 2
    pos = noisy[:, zero + 1:].reshape(noisy.shape[0], -1, per_octave).sum(axis=2)
    neg = noisy[:, :zero][:, ::-1].reshape(noisy.shape[0], -1, per_octave).sum(axis=2)
    return np.hstack([neg[:, ::-1], noisy[:, zero:zero + 1], pos])
