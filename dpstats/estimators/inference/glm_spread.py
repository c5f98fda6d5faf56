"""The bias plug-ins' spread over the plausible informations, calibrated one bootstrap level down.

Objective perturbation's error model (:mod:`.glm`) is a mixture over plausible informations
``C_k = C_rel - E_k`` of the ridge's bias plug-in ``b(C_k) = -r C_k^-1 theta`` (plus the
sampling and privacy noise). The plug-ins' spread over ``k`` says how well the bias is known.
To first order in the noise it equals the spread of ``b(C_rel)`` about ``b(C)``; but ``b`` is
convex in ``C`` and the released ``C_rel`` is more ill-conditioned than the true ``C`` (a noisy
symmetric matrix's smallest eigenvalue is biased low), so the spread read at ``C_rel`` is wider
than the one at ``C``, by more the noisier the information. Measured (the recorded fits of
``benchmarks/glm_coverage.py``, eps 0.5, n 20,000, p 5): the plug-ins' median interquartile
spread over ``k`` was 2-2.7 times the realised error of the bias estimate, and the centred
intervals covered up to 0.985 (z sd 0.79-0.89); design-notes.md, "the cut tail's fits centred;
the bias spread calibrated".

**Calibration** (the iterated bootstrap's idea): the plausible informations stand to ``C_rel``
as ``C_rel`` stands to ``C``. At :data:`CENTRES` of the ``C_k`` the spread of ``b(C_k - E)``
(:data:`DRAWS` fresh draws ``E`` of the same noise) is read again; per coefficient the ratio
``rho = IQR b(C_rel - E) / median_k IQR b(C_k - E)`` (the same draws ``E`` at every level:
their Monte Carlo error cancels) estimates what one level of noise adds, and the
plug-ins' deviations from their mean are scaled by ``rho`` (at most 1: never widened). Their mean
(the bootstrap's bias correction, :func:`.glm.debias`) is kept. Post-processing of released
values (the draws' seed is a function of them); nothing is released or charged.

>>> import numpy as np
>>> b = np.array([[0.0], [2.0]])
>>> scale_spread(b, np.array([0.5])).ravel().tolist()
[0.5, 1.5]
"""

from __future__ import annotations

import numpy as np

from ...mechanisms.simulation import simulation_noise
from .simulate import symmetric_noise

__all__ = ["CENTRES", "DRAWS", "spread_ratio", "scale_spread", "level_noise", "level_centres",
           "level_ratio"]

#: Plausible informations at which the second level is read (evenly spaced among the ``K``).
CENTRES = 25
#: Fresh noise draws per second-level centre.
DRAWS = 200
#: Positive-definite draws a centre needs for its spread to be read.
MIN_PD = 10


def _plugins(Cs: np.ndarray, ridge: float, theta: np.ndarray) -> np.ndarray:
    th = np.broadcast_to(theta, (len(Cs), theta.size))[..., None]
    return -ridge * np.linalg.solve(Cs, th)[..., 0]


def _iqr(b: np.ndarray) -> np.ndarray:
    q1, q3 = np.quantile(b, [0.25, 0.75], axis=0)
    return q3 - q1


def _spread(C: np.ndarray, E: np.ndarray, ridge: float, theta: np.ndarray):
    """IQR of the plug-ins at the positive-definite ``C - E`` (None: too few)."""
    Ck = C[None] - E
    ok = np.linalg.eigvalsh(Ck)[:, 0] > 0
    return _iqr(_plugins(Ck[ok], ridge, theta)) if ok.sum() >= MIN_PD else None


def spread_ratio(C_rel: np.ndarray, Cs: np.ndarray, ridge: float, theta: np.ndarray,
                 sigma: float, seed: int) -> np.ndarray:
    """Per coefficient, ``rho`` in (0, 1] (module docstring): the plug-ins' interquartile
    spread at the released information ``C_rel`` over its median at :data:`CENTRES` of the
    plausible ones ``Cs`` (``(K, p, p)``, noise sd ``sigma``), both read with the same
    :data:`DRAWS` noise draws (so that their Monte Carlo error cancels in the ratio). 1 where
    a level cannot be read (too few positive-definite draws).

    >>> import numpy as np
    >>> Cs = np.eye(2)[None].repeat(3, axis=0)
    >>> spread_ratio(Cs[0], Cs, 1.0, np.ones(2), 100.0, 0).tolist()    # unreadable: 1
    [1.0, 1.0]
    """
    theta = np.asarray(theta, dtype=np.float64)
    p = theta.size
    E = level_noise(sigma, p, seed)
    C0 = (np.asarray(C_rel, dtype=np.float64) + np.asarray(C_rel, dtype=np.float64).T) / 2.0
    return level_ratio(_spread(C0, E, ridge, theta),
                       [_spread(C, E, ridge, theta) for C in level_centres(Cs)], p)


def level_noise(sigma: float, p: int, seed: int) -> np.ndarray:
    """:data:`DRAWS` symmetric ``(p, p)`` noise draws at scale ``sigma`` (the released
    information's noise), seeded by ``seed`` (a function of released values)."""
    tri = simulation_noise({"tri": (DRAWS, p * (p + 1) // 2)}, seed=seed)["tri"]
    return float(sigma) * symmetric_noise(tri, p)


def level_centres(Cs: np.ndarray) -> list:
    """:data:`CENTRES` of the plausible informations ``Cs``, evenly spaced: the level below."""
    return [Cs[k] for k in np.linspace(0, len(Cs) - 1, min(CENTRES, len(Cs))).astype(int)]


def level_ratio(s1, spreads: list, p: int) -> np.ndarray:
    """The ratio, per coefficient, of the spread ``s1`` at the released information to the
    median of ``spreads`` one bootstrap level down (None entries: not positive definite,
    dropped), capped at 1; ones when ``s1`` or fewer than two of ``spreads`` exist."""
    spreads = [s for s in spreads if s is not None]
    if s1 is None or len(spreads) < 2:
        return np.ones(p)
    s2 = np.median(np.array(spreads), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(s2 > 0, s1 / s2, 1.0)
    return np.clip(np.nan_to_num(rho, nan=1.0), 0.0, 1.0)


def scale_spread(bias: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The bias draws ``(K, p)`` with their deviations from their mean scaled by ``rho``."""
    m = bias.mean(axis=0, keepdims=True)
    return m + np.asarray(rho)[None, :] * (bias - m)
