"""Logistic DP-GD's bias plug-ins' spread over the plausible curvatures, calibrated one
bootstrap level down (issue 16; design-notes.md, "Logistic DP-GD's plug-in spread"; measured,
not adopted: :data:`.dpgd.SPREAD_CALIBRATED` is off).

DP-GD's error model (:mod:`.dpgd`) is a mixture over plausible curvatures ``C_k = C_rel - E_k``
of the unfinished descent's bias plug-in ``b(C_k) = -A_k^T (I - A_k^T)^-1 theta`` (``A_k = I -
(lr / n_hat) C_k``) plus the sampling and privacy noise. The plug-ins' spread over ``k`` says
how well the bias is known; ``b`` is convex in the curvature's small eigenvalues, and the
released ``C_rel`` is more ill-conditioned than the true ``C`` (a noisy symmetric matrix's
smallest eigenvalue is biased low), so the spread read at ``C_rel`` exceeds the realised error
of the bias estimate, by more the noisier the curvature (small ``n_hat * eps``). This is
:mod:`.glm_spread`'s calibration (objective perturbation's ridge plug-in) for the descent's
plug-in: at :data:`~.glm_spread.CENTRES` of the ``C_k`` the spread of ``b(C_k - E)``
(:data:`~.glm_spread.DRAWS` fresh draws ``E`` of the same noise) is read again; per
coefficient ``rho = IQR b(C_rel - E) / median_k IQR b(C_k - E)`` (the same draws at every
level, so their Monte Carlo error cancels) estimates what one level of noise adds, and the
plug-ins' deviations from their mean are scaled by ``rho`` (at most 1: never widened; the mean,
the bootstrap's bias correction, is kept). The draws' seed is a function of released values
(:func:`~dpstats.mechanisms.simulation.released_seed`). Post-processing of released values:
nothing is released or charged.

>>> import numpy as np
>>> C = np.diag([2000.0, 1000.0])
>>> Cs = C[None] + np.zeros((5, 2, 2))
>>> descent_spread_ratio(C, Cs, np.ones(2), 0.0, 0, lr=1.0, T=20, n_hat=10_000).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from ...mechanisms.simulation import released_seed, simulation_noise
from .glm_spread import DRAWS, MIN_PD, level_centres, level_noise, level_ratio
from .simulate import symmetric_noise

__all__ = ["descent_plugins", "descent_spread_ratio", "debiased_spread_ratio", "INNER",
           "spread_scale"]

#: Inner draws per outer draw of :func:`debiased_spread_ratio` (the bootstrap's mean plug-in).
INNER = 100


def descent_plugins(Cs: np.ndarray, theta: np.ndarray, *, lr: float, T: int,
                    n_hat: float) -> np.ndarray:
    """``(K, p)``: the linearised unfinished descent's bias ``-A^T (I - A^T)^-1 theta`` at each
    curvature of ``Cs`` ``(K, p, p)`` (``A = I - (lr / n_hat) C``).

    >>> import numpy as np
    >>> descent_plugins(np.eye(1)[None] * 5000.0, np.ones(1), lr=1.0, T=1, n_hat=10_000)
    array([[-1.]])
    """
    lam, Q = np.linalg.eigh(Cs)
    aT = (1.0 - lr * lam / n_hat) ** T
    proj = np.einsum("kji,j->ki", Q, np.asarray(theta, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.einsum("kij,kj->ki", Q, aT / (1.0 - aT) * proj)


def _iqr_at(C: np.ndarray, E: np.ndarray, theta, kw, gate: float = np.inf
            ) -> np.ndarray | None:
    """IQR of the plug-ins at the positive-definite ``C - E`` whose largest ``a^T`` is at most
    ``gate`` (None: too few)."""
    Ck = C[None] - E
    lam = np.linalg.eigvalsh(Ck)
    ok = lam[:, 0] > 0
    if np.isfinite(gate):
        ok &= np.max(np.abs(1.0 - kw["lr"] * lam / kw["n_hat"]) ** kw["T"], axis=1) <= gate
    if ok.sum() < MIN_PD:
        return None
    q1, q3 = np.quantile(descent_plugins(Ck[ok], theta, **kw), [0.25, 0.75], axis=0)
    return q3 - q1


def descent_spread_ratio(C_rel: np.ndarray, Cs: np.ndarray, theta: np.ndarray, sigma: float,
                         seed: int, *, lr: float, T: int, n_hat: float,
                         gate: float = np.inf) -> np.ndarray:
    """Per coefficient, ``rho`` in [0, 1] (module docstring): the descent plug-ins'
    interquartile spread at the released curvature ``C_rel`` over its median at
    :data:`~.glm_spread.CENTRES` of the plausible ones ``Cs`` (``(K, p, p)``, noise sd
    ``sigma``), both read with the same :data:`~.glm_spread.DRAWS` draws. 1 where a level cannot
    be read (too few positive-definite draws) or the noise is 0.
    """
    theta = np.asarray(theta, dtype=np.float64)
    p = theta.size
    if not sigma > 0:
        return np.ones(p)
    kw = dict(lr=lr, T=T, n_hat=n_hat)
    E = level_noise(sigma, p, seed)
    C0 = np.asarray(C_rel, dtype=np.float64)
    return level_ratio(_iqr_at((C0 + C0.T) / 2.0, E, theta, kw, gate),
                       [_iqr_at(C, E, theta, kw) for C in level_centres(Cs)], p)


def debiased_spread_ratio(C_rel: np.ndarray, theta: np.ndarray, sigma: float, seed: int, *,
                          lr: float, T: int, n_hat: float) -> np.ndarray:
    """Per coefficient, the interquartile spread of the bias-corrected plug-in
    ``2 b(C) - mean_j b(C - E_j)`` over that of the plug-in ``b(C)`` itself, both over
    :data:`~.glm_spread.DRAWS` curvatures ``C = C_rel - E`` (:data:`INNER` inner draws
    ``E_j``, the same for every ``C``), clipped to [0, 1]: the mixture's spread is that of the
    plug-in, but the interval holds the bias-corrected one (:func:`.glm.debias`), whose
    correction moves with the plug-in's convexity and takes part of its spread out. 1 where
    too few draws are positive definite or the noise is 0.
    """
    theta = np.asarray(theta, dtype=np.float64)
    p = theta.size
    if not sigma > 0:
        return np.ones(p)
    kw = dict(lr=lr, T=T, n_hat=n_hat)
    tri = simulation_noise({"tri": (DRAWS + INNER, p * (p + 1) // 2)}, seed=seed)["tri"]
    E = float(sigma) * symmetric_noise(tri, p)
    C0 = np.asarray(C_rel, dtype=np.float64)
    Ci = (C0 + C0.T)[None] / 2.0 - E[:DRAWS]
    Ci = Ci[np.linalg.eigvalsh(Ci)[:, 0] > 0]
    if len(Ci) < MIN_PD:
        return np.ones(p)
    Cij = (Ci[:, None] - E[None, DRAWS:]).reshape(-1, p, p)
    pd = (np.linalg.eigvalsh(Cij)[:, 0] > 0).reshape(len(Ci), INNER)
    bij = descent_plugins(Cij, theta, **kw).reshape(len(Ci), INNER, p)
    keep = pd.sum(axis=1) >= MIN_PD
    if keep.sum() < MIN_PD:
        return np.ones(p)
    inner = np.where(pd[..., None], bij, 0.0).sum(axis=1) / np.maximum(pd.sum(axis=1), 1)[:, None]
    b1 = descent_plugins(Ci, theta, **kw)
    d = 2.0 * b1[keep] - inner[keep]
    q1, q3 = np.quantile(d, [0.25, 0.75], axis=0)
    r1, r3 = np.quantile(b1[keep], [0.25, 0.75], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(r3 - r1 > 0, (q3 - q1) / (r3 - r1), 1.0)
    return np.clip(np.nan_to_num(rho, nan=1.0), 0.0, 1.0)


def spread_scale(C_rel: np.ndarray, Cs: np.ndarray, theta: np.ndarray, sigma: float, *,
                 lr: float, T: int, n_hat: float, gate: float) -> np.ndarray:
    """Per coefficient, the factor on the descent plug-ins' deviations from their mean: the
    convexity and convergence-gate ratio (:func:`descent_spread_ratio`, the level below read
    only where its ``a^T`` passes ``gate``, as the released fit did) times the bias-corrected
    plug-in's spread ratio (:func:`debiased_spread_ratio`); both seeded from released values.
    """
    kw = dict(lr=lr, T=T, n_hat=n_hat)
    return (descent_spread_ratio(C_rel, Cs, theta, sigma, released_seed(C_rel, sigma, theta,
                                                                        salt=31), **kw,
                                 gate=gate)
            * debiased_spread_ratio(C_rel, theta, sigma, released_seed(C_rel, sigma, theta,
                                                                      salt=32), **kw))
