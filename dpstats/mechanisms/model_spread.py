"""Private spread of the Tukey mechanism's group models, and the simulated noise of its point.

The Tukey-depth mechanism (:mod:`dpstats.estimators.tukey.linear`) releases a point of high
approximate depth in a cloud of ``m`` group OLS models. Approximate depth is a per-coordinate
rank, so coordinate ``j`` of the released point is, to first order, the median of the models'
coordinate ``j`` plus the exponential mechanism's displacement inside the depth box. Both
scale with the models' spread near their centre: for a cloud whose coordinate ``j`` is
Gaussian-like with scale ``sigma_j``, ``Var(point_j) ~= f * sigma_j^2 / m`` with ``f`` the
Gaussian median's ``pi / 2`` plus the mechanism's share (:func:`tukey_noise_factor`).

:func:`window_counts` releases what ``sigma_j`` needs: for public windows ``w_j`` (functions of
released values) the number of models within ``w_j`` of the released point,
``N_j = #{g : |b_gj - theta_j| <= w_j}``, for every coordinate at once.

**Neighbours and sensitivity.** Add/remove one row. Rows fall into groups by independent,
data-independent labels and the number of models ``m`` is public, so one row changes exactly
one group's model (all of its coordinates) and nothing else; ``theta`` and ``w`` are released
or public values (adaptive composition). Each ``N_j`` then changes by at most 1 and the vector
``(N_1..N_p)`` by at most ``p`` in L1: the Laplace mechanism with L1 sensitivity ``p`` is
eps-DP.

:func:`tukey_noise_factor` reads no data: a fixed-seed simulation of spherical Gaussian clouds
through the real restricted exponential mechanism (a deterministic public function of ``m``,
``p`` and the mechanism's multiplier), like :func:`dpstats.estimators.tukey.choose_m.models_needed`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .accountant import Ledger
from .additive import laplace
from .simulation import SIMULATION_SEED
from .tukey_em import restricted_tukey_em

__all__ = ["window_counts", "count_sensitivity", "tukey_noise_factor", "GAUSSIAN_MEDIAN"]

#: ``m * Var(median)`` of m standard normal draws, for large m.
GAUSSIAN_MEDIAN = math.pi / 2.0
#: Largest cloud simulated by :func:`tukey_noise_factor` (larger ``m`` are scaled from it).
_SIM_MODELS = 2000


def count_sensitivity(p: int) -> float:
    """L1 sensitivity of the ``p`` window counts: one row changes one model, so each count
    moves by at most 1.

    >>> count_sensitivity(6)
    6.0
    """
    return float(p)


def window_counts(deviations: np.ndarray, windows: np.ndarray, eps: float,
                  rng: np.random.Generator, ledger: Ledger | None = None, *,
                  stage: str | None = None, what: str = "models within the windows") -> np.ndarray:
    """Noisy ``N_j = #{g : |deviations[g, j]| <= windows[j]}``, eps-DP (Laplace).

    Neighbours: add/remove one row, which changes one row of ``deviations`` (one group model
    minus the released point); ``windows`` must be public or released. L1 sensitivity
    :func:`count_sensitivity` (``p``).

    Parameters
    ----------
    deviations : (m, p) array
        Group models minus the released point, in the coordinates reported.
    windows : (p,) array
        Public half-widths (``inf`` counts every model).
    eps : float
        Budget of the release (all coordinates together).

    Examples
    --------
    >>> import numpy as np
    >>> d = np.random.default_rng(0).normal(size=(4000, 2))
    >>> n = window_counts(d, np.array([0.6745, 10.0]), 50.0, np.random.default_rng(1))
    >>> bool(abs(n[0] / 4000 - 0.5) < 0.03), bool(n[1] > 3950)
    (True, True)
    """
    D = np.abs(np.asarray(deviations, dtype=np.float64))
    w = np.asarray(windows, dtype=np.float64)
    counts = np.count_nonzero(D <= w[None, :], axis=0).astype(np.float64)
    return np.asarray(laplace(counts, count_sensitivity(D.shape[1]), eps, rng, ledger,
                              stage=stage, what=what + f" (counts of {D.shape[0]} models)"),
                      dtype=np.float64).reshape(-1)


@functools.lru_cache(maxsize=256)
def tukey_noise_factor(m: int, p: int, multiplier: float, monotone: bool = False, *,
                       _em=restricted_tukey_em) -> float:
    """``f`` with ``Var(point_j) ~= f sigma_j^2 / m`` for the Tukey point of ``m`` models drawn
    from a Gaussian with scales ``sigma`` (a public function of ``m``, ``p``, the
    mechanism's multiplier; no data read).

    ``f = pi/2`` (the median's sampling part) plus the restricted exponential mechanism's part,
    simulated: ``ceil(1500 / p)`` (40 to 200) spherical standard normal clouds of
    ``min(m, 2000)`` models (scaled as ``1/m`` beyond it: the box widths near the median are
    linear in the depth), sorted per coordinate,
    the depth-``t`` restricted mechanism of :mod:`dpstats.mechanisms.tukey_em` run at
    ``eps = 2 * multiplier`` (the swap accounting's non-monotone form; ``monotone=True``
    runs ``eps = multiplier``), and its mean squared distance from the clouds' coordinate
    medians. Draws from a fixed public seed. (``_em`` is the mechanism, bound when this
    module is imported: the privacy tests' stubs, which tape every release of a fit, must
    not replace this data-free simulation's calls.)

    >>> f = tukey_noise_factor(5555, 6, 0.315)
    >>> bool(1.6 < f < 2.2)
    True
    """
    from .._kernels.depth import max_depth
    m_sim = int(min(m, _SIM_MODELS))
    reps = int(min(max(math.ceil(1500 / p), 40), 200))
    rng = np.random.default_rng(SIMULATION_SEED)   # a planning simulation: no data, no release
    eps = multiplier if monotone else 2.0 * multiplier
    t = max_depth(m_sim) // 2
    sq = 0.0
    done = 0
    for _ in range(reps):
        B = rng.standard_normal((m_sim, p))
        point = _em(np.sort(B, axis=0), t, eps, rng, None, monotone=monotone)
        if point is None:
            continue
        sq += float(np.mean((point - np.median(B, axis=0)) ** 2))
        done += 1
    mech = sq / max(done, 1) * m_sim * (m_sim / m)
    return GAUSSIAN_MEDIAN + mech
