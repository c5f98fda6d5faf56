"""Batched simulations of AdaSSP and Boosted AdaSSP from released values (post-processing).

Each function takes a plug-in Gram matrix ``G`` (PSD, mapped scale), plug-in coefficients
``beta`` and ``B`` residual variances, simulates the data-level statistic ``X'y`` (normal with
mean ``G beta`` and covariance ``sigma^2 G``: the sampling distribution of ``X'y`` given the
design under homoscedastic errors; or covariance ``S_b``, a plausible sandwich meat per draw,
under heteroscedastic errors: :mod:`~dpstats.estimators.inference.sandwich`), adds fresh
mechanism noise with the released noise scales, and re-runs the estimator's solve. Randomness
comes from :func:`dpstats.mechanisms.simulation.simulation_noise` at a ``seed`` the caller
derives from released values (:func:`~dpstats.mechanisms.simulation.released_seed`: different
fits, independent draws), never from the fit's generator.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.simulation import SIMULATION_SEED, simulation_noise

__all__ = ["plugin_gram", "symmetric_noise", "simulated_xty", "adassp_draws", "bas_draws",
           "ridge_draws"]


def plugin_gram(gram_noisy: np.ndarray, floor: float) -> np.ndarray:
    """The released noisy Gram matrix made positive definite (eigenvalues at least ``floor``).

    >>> plugin_gram(np.array([[1.0, 0.0], [0.0, -2.0]]), 0.5).tolist()
    [[1.0, 0.0], [0.0, 0.5]]
    """
    sym = (gram_noisy + gram_noisy.T) / 2.0
    w, V = np.linalg.eigh(sym)
    return (V * np.maximum(w, floor)) @ V.T


def symmetric_noise(tri: np.ndarray, p: int) -> np.ndarray:
    """``(B, p, p)`` symmetric matrices from ``(B, p(p+1)/2)`` upper-triangle draws."""
    iu = np.triu_indices(p)
    E = np.zeros((tri.shape[0], p, p))
    E[:, iu[0], iu[1]] = tri
    return E + np.triu(E, 1).transpose(0, 2, 1)


def simulated_xty(G: np.ndarray, beta: np.ndarray, sigma2: np.ndarray,
                  xi: np.ndarray) -> np.ndarray:
    """``(B, p)`` draws of ``X'y`` from standard normals ``xi``: ``N(G beta, sigma2_b G)``
    for ``(B,)`` residual variances ``sigma2`` (homoscedastic), or ``N(G beta, L_b L_b')``
    for ``(B, p, p)`` factors ``L_b`` of sandwich meats (heteroscedasticity-robust)."""
    if sigma2.ndim == 3:
        return G @ beta + np.einsum("bij,bj->bi", sigma2, xi)
    L = np.linalg.cholesky(G)
    return G @ beta + np.sqrt(np.maximum(sigma2, 0.0))[:, None] * (xi @ L.T)


def ridge_draws(lam_true: float, eta: np.ndarray, sigma_lam: float, sigma_gram: float, p: int,
                rho: float, shift: float) -> np.ndarray:
    """The adaptive ridge (:func:`dpstats.estimators.adassp.adaptive_ridge`) of each draw."""
    lam_tilde = np.maximum(lam_true + sigma_lam * eta - shift * sigma_lam, 0.0)
    return np.maximum(0.0, sigma_gram * math.sqrt(p * math.log(2.0 * p * p / rho)) - lam_tilde)


def adassp_draws(G: np.ndarray, beta: np.ndarray, sigma2: np.ndarray, *, sigma_gram: float,
                 sigma_lam: float, sigma_xy: float, rho: float, shift: float,
                 no_ridge: bool = False, seed: int = SIMULATION_SEED) -> np.ndarray:
    """``(B, p)`` AdaSSP estimates re-solved from simulated statistics plus fresh noise
    (``no_ridge``: the ridge-free solves of the same draws; ``seed``: of the draws).

    >>> G = np.diag([1000.0, 300.0])
    >>> th = adassp_draws(G, np.array([0.5, -0.2]), np.full(2000, 0.01), sigma_gram=1e-6,
    ...                   sigma_lam=1e-6, sigma_xy=1e-6, rho=0.05, shift=3.0)
    >>> np.round(th.mean(0), 2).tolist(), np.round(th.std(0) / np.sqrt(0.01 / np.diag(G)), 1)
    ([0.5, -0.2], array([1., 1.]))
    """
    p, B = G.shape[0], sigma2.shape[0]
    d = simulation_noise({"xi": (B, p), "tri": (B, p * (p + 1) // 2), "eta": (B,),
                          "e": (B, p)}, seed=seed)
    z = simulated_xty(G, beta, sigma2, d["xi"]) + sigma_xy * d["e"]
    ridge = ridge_draws(float(np.linalg.eigvalsh(G)[0]), d["eta"], sigma_lam, sigma_gram, p,
                        rho, shift)
    if no_ridge:
        ridge = np.zeros(B)
    A = G + sigma_gram * symmetric_noise(d["tri"], p) + ridge[:, None, None] * np.eye(p)
    return _solve(A, z)


def _solve(A: np.ndarray, z: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(A, z[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return (np.linalg.pinv(A, hermitian=True) @ z[..., None])[..., 0]


def bas_draws(G: np.ndarray, beta: np.ndarray, sigma2: np.ndarray, *, sigma_gram: float,
              sigma_lam: float, sigma_round: float, T: int, shrinkage: float, rho: float,
              shift: float, seed: int = SIMULATION_SEED) -> np.ndarray:
    """``(B, p)`` Boosted AdaSSP estimates from simulated statistics plus fresh noise
    (``seed``: of the draws).

    Each round's released gradient ``X'clip(y - X theta)`` is simulated as
    ``X'y - G theta`` plus round noise (residual clipping at 1 on the mapped scale is not
    simulated: it binds only for residuals beyond half the label's range).
    """
    p, B = G.shape[0], sigma2.shape[0]
    d = simulation_noise({"xi": (B, p), "tri": (B, p * (p + 1) // 2), "eta": (B,),
                          "rounds": (T, B, p)}, seed=seed)
    z = simulated_xty(G, beta, sigma2, d["xi"])
    ridge = ridge_draws(float(np.linalg.eigvalsh(G)[0]), d["eta"], sigma_lam, sigma_gram, p,
                        rho, shift)
    A = G + sigma_gram * symmetric_noise(d["tri"], p) + ridge[:, None, None] * np.eye(p)
    P = np.linalg.pinv(A, hermitian=True)
    theta = np.zeros((B, p))
    for t in range(T):
        g = z - theta @ G + sigma_round * d["rounds"][t]
        theta = theta + shrinkage * (P @ g[..., None])[..., 0]
    return theta
