"""Heteroscedasticity-robust (sandwich, HC1) sampling error for AdaSSP and Boosted AdaSSP.

With ``cov_type="HC1"`` the parametric bootstrap of :mod:`~dpstats.estimators.inference.ssp`
draws ``X'y ~ N(G beta, S)`` with ``S`` a plausible **meat** ``sum_i x_i x_i' r_i^2`` (times
``n / (n - p)``: statsmodels' HC1) instead of ``N(G beta, sigma^2 G)``: the sampling part of
the interval no longer assumes constant error variance (White 1980).

**The release** (stage ``"inference"``, after the fit and after the residual sum of squares):
:func:`dpstats.mechanisms.meat.release_meat` on the rows the method solved on, with the
residuals of the released fit clipped to ``[-1, 1]`` (as for the RSS) and each row's term
``x x' r^2`` clipped to Frobenius norm ``bound`` (L2 sensitivity ``bound``, Gaussian,
add/remove one row). ``bound = BOUND_FACTOR * (tr G~ / n~) * (RSS~ / n~)``: a multiple of the
typical term, from released values only (the released Gram matrix, row count and RSS), floored
at ``BOUND_FLOOR`` of the largest possible term.

**Post-processing.** Clipping rows lowers the meat. Where the clipped rows are spread evenly
over the design (heavy-tailed errors independent of ``x``) the loss is the same in every
entry, so each draw's meat is rescaled by the ratio of the released RSS to the meat's
intercept entry (``x_0^2 sum q_i``; both count the same residuals, the RSS clipped only at 1),
kept in ``[1, MAX_RESCALE]``. The meat's Gaussian noise is propagated: every bootstrap draw
uses ``S_b = psd(S~ - sigma E_b)`` (a fresh symmetric noise of the release's scale; negative
eigenvalues set to 0). Its draws are seeded by :func:`meat_seed`, a function of the released
meat and fit (different fits, independent draws; a fixed seed reused the same ``E_b`` in every
fit).

Measured (benchmarks/interval_coverage.py, arms ``*:HC1``): see docs/design-notes.md.
"""

from __future__ import annotations

import numpy as np

from ...mechanisms.meat import meat_sigma, release_meat
from ...mechanisms.simulation import released_seed, simulation_noise
from .simulate import symmetric_noise

__all__ = ["COV_TYPES", "HC_SHARE", "BOUND_FACTOR", "release_sandwich", "meat_factors",
           "meat_seed", "MEAT_SALT", "COVERS_HC"]

#: Covariance types (statsmodels vocabulary): "nonrobust" (default) or "HC1" (sandwich).
COV_TYPES = ("nonrobust", "HC1")
#: Share of the fit's eps and of its delta spent on the meat release (cov_type="HC1").
HC_SHARE = 0.15
#: Each row's term is clipped at this multiple of the typical term ``(tr G/n)(RSS/n)``.
BOUND_FACTOR = 10.0
#: ... and never below this share of the largest possible term (``B_x^2``, residuals <= 1).
BOUND_FLOOR = 1e-4
#: Largest rescaling of the meat by the released RSS (see the module docstring).
MAX_RESCALE = 4.0
#: Salt of the meat draws' seed (:func:`meat_seed`; the other bootstrap salts are
#: :data:`~dpstats.estimators.inference.ssp.SEED_SALTS`).
MEAT_SALT = 1603
COVERS_HC = ("with heteroscedasticity-robust (HC1 sandwich) sampling error from a private "
             "meat matrix")


def _bound(gram: np.ndarray, n_hat: float, rss: float, row_bound2: float) -> float:
    """Clipping bound of a row's term, from released values (see module doc)."""
    n = max(float(n_hat), 1.0)
    typical = max(float(np.trace(gram)), 0.0) / n * max(float(rss), 0.0) / n
    return float(max(BOUND_FACTOR * typical, BOUND_FLOOR * row_bound2))


def release_sandwich(X: np.ndarray, y: np.ndarray, theta: np.ndarray, *, gram: np.ndarray,
                     n_hat: float, rss: float, row_bound2: float, eps: float, delta: float,
                     rng, ledger, stage: str, resid=None, rows=None) -> dict:
    """Release the clipped meat of the fit ``theta`` on the rows ``X`` it solved on.

    Neighbours: add/remove one row; ``theta``, ``gram``, ``n_hat``, ``rss`` are released and
    ``row_bound2`` (the largest ``||x||^2``) public, so the bound is fixed across neighbours
    (L2 sensitivity ``bound``, :func:`dpstats.mechanisms.meat.release_meat`). ``resid``:
    ``(X_r, y_r)`` the residuals are computed on (default ``X``, ``y``; BAS: the rows mapped
    without clipping to the box; the residual is clipped to [-1, 1] either way, and the
    meat's rows are ``X``). ``rows``: on a dask frame, the engine's residual statistics
    (``rows.meat(theta, bound)``: the same clipped sum over the partitions; ``X``, ``y`` have
    no rows). Returns ``{"meat", "sigma", "bound"}`` (the released matrix and its public noise
    scale).
    """
    bound = _bound(gram, n_hat, rss, row_bound2)
    Xr, yr = (X, y) if resid is None else resid
    r = np.clip(yr - Xr @ theta, -1.0, 1.0)
    meat = release_meat(X, r, bound, eps, delta, rng, ledger, stage=stage,
                        what="sandwich meat of the released fit (mapped data, residuals "
                             "clipped to [-1, 1])",
                        total=None if rows is None else rows.meat(theta, bound))
    return {"meat": meat, "sigma": meat_sigma(bound, eps, delta), "bound": bound}


def meat_seed(meat: np.ndarray, *released) -> int:
    """Seed of the meat's noise draws: :func:`~dpstats.mechanisms.simulation.released_seed`
    of the released meat and the fit's other released values ``released`` (its Gram matrix,
    coefficients, RSS), salted by :data:`MEAT_SALT`, rounded to 6 significant digits (a dask
    fit's releases equal the in-memory fit's to ~1e-12). Released values only:
    post-processing.

    >>> S = np.diag([2.0, 1.0])
    >>> meat_seed(S, 3.0) == meat_seed(S * (1 + 1e-13), 3.0), meat_seed(S, 3.0) == meat_seed(S, 3.1)
    (True, False)
    """
    return released_seed(meat, *released, salt=MEAT_SALT)


def meat_factors(released: dict, rss_draws: np.ndarray, x0sq: float, icol: int,
                 hc1: float, *, seed: int) -> np.ndarray:
    """``(B, p, p)`` factors ``L_b`` with ``L_b L_b' = S_b``: plausible meats given the
    released one (noise propagated, PSD, rescaled by the RSS draws ``rss_draws``, times the
    HC1 factor ``hc1``); ``seed`` of the meat's noise draws (:func:`meat_seed`).

    >>> rel = {"meat": np.diag([2.0, 1.0]), "sigma": 1e-9}
    >>> L = meat_factors(rel, np.full(3, 2.0), 1.0, 0, 1.0, seed=meat_seed(rel["meat"]))
    >>> (np.round(L[0] @ L[0].T, 6) + 0.0).tolist()
    [[2.0, 0.0], [0.0, 1.0]]
    """
    S, sigma = released["meat"], float(released["sigma"])
    p, B = S.shape[0], rss_draws.shape[0]
    tri = simulation_noise({"meat": (B, p * (p + 1) // 2)}, seed=seed)["meat"]
    Sb = S[None] - sigma * symmetric_noise(tri, p)
    w, V = np.linalg.eigh(Sb)
    w = np.maximum(w, 0.0)
    Sb = (V * w[:, None, :]) @ V.transpose(0, 2, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.clip(np.maximum(rss_draws, 0.0) * x0sq / Sb[:, icol, icol], 1.0, MAX_RESCALE)
    scale = np.where(np.isfinite(scale), scale, MAX_RESCALE) * hc1
    return V * np.sqrt(w * scale[:, None])[:, None, :]
