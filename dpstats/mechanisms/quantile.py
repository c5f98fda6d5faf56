"""Private quantiles by the exponential mechanism over a fixed, data-independent grid.

Candidates are the points of a public signed logarithmic grid (:func:`signed_log_grid`):
``0`` and ``+-2^(j * step)`` for ``|j * step| <= emax``. The utility of a candidate ``b`` for
the ``q``-quantile is the n-free

    u(b) = -| (1 - q) * #{v <= b}  -  q * #{v > b} |,

which is 0 where a fraction ``q`` of the values lies at or below ``b``. Adding or removing one
row changes one of the two counts by 1, so ``u`` has sensitivity ``max(q, 1 - q)``; it is not
monotone, so the standard exponential mechanism (factor 2) applies and the release is eps-DP
under add/remove one row. The row count itself is never used or released.
"""

from __future__ import annotations

import functools

import numpy as np

from ..accountant import Ledger
from ..errors import ValidationError
from ..validation import check_eps
from .choice import exponential

__all__ = ["private_quantile", "signed_log_grid"]


@functools.lru_cache(maxsize=8)
def _grid(step: float, emax: float) -> np.ndarray:
    j = np.arange(-int(emax / step), int(emax / step) + 1)
    pos = np.exp2(j * step)
    g = np.concatenate((-pos[::-1], [0.0], pos))
    g.setflags(write=False)
    return g


def signed_log_grid(step: float = 0.125, emax: float = 64.0) -> np.ndarray:
    """The public candidate grid: 0 and ``+-2^(j * step)``, sorted ascending (read-only).

    >>> signed_log_grid(1.0, 1.0).tolist()
    [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]
    """
    if not (step > 0 and emax > 0 and emax / step <= 1e5):
        raise ValidationError(f"grid step and emax must be > 0 with emax/step <= 1e5; got "
                              f"step={step!r}, emax={emax!r}")
    return _grid(float(step), float(emax))


def private_quantile(values, q: float, eps: float, rng: np.random.Generator,
                     ledger: Ledger | None = None, *, grid: np.ndarray | None = None,
                     stage: str | None = None, what: str = "quantile") -> float:
    """eps-DP estimate of the ``q``-quantile of ``values``, chosen from a public grid.

    Neighbours: add/remove one value (one row). Utility sensitivity ``max(q, 1 - q)``.
    O(n log n + G log n) for G grid points.

    Parameters
    ----------
    values : array_like, shape (n,)
        One finite value per row.
    q : float
        Quantile level in (0, 1).
    eps : float
        Budget, charged once through :func:`~dpstats.mechanisms.exponential`.
    rng : numpy.random.Generator
    ledger : Ledger, optional
    grid : array, optional
        Sorted public candidates (default :func:`signed_log_grid` with 1/8-octave steps).
    stage, what : str
        Ledger stage and description.

    Returns
    -------
    float
        A grid point.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.random.default_rng(0).normal(100.0, 1.0, 5000)
    >>> abs(private_quantile(v, 0.5, 50.0, np.random.default_rng(1)) - 100.0) < 10
    True
    """
    eps = check_eps(eps)
    if not (isinstance(q, float | int) and 0.0 < float(q) < 1.0):
        raise ValidationError(f"q must be a quantile level strictly between 0 and 1; got {q!r}")
    q = float(q)
    v = np.asarray(values, dtype=np.float64).ravel()
    if not np.isfinite(v).all():
        raise ValidationError("values must be finite; drop rows with missing values first")
    g = signed_log_grid() if grid is None else np.asarray(grid, dtype=np.float64)
    v = np.sort(v)
    le = np.searchsorted(v, g, side="right").astype(np.float64)
    utility = -np.abs((1.0 - q) * le - q * (v.size - le))
    i = exponential(utility, max(q, 1.0 - q), eps, rng, ledger, stage=stage,
                    what=f"{what} (q={q:g}) on a public grid of {g.size} points")
    return float(g[i])
