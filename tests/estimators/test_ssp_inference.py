"""Coverage of the AdaSSP and Boosted AdaSSP intervals (parametric bootstrap + private RSS).

Fast versions: small cells with public bounds (so the target is the model's coefficient: the
box holds the data), enough replications to see under-coverage, and a deliberately broken
variant (intervals without the privacy-noise term) that must under-cover in the same cell.
The full grid is ``benchmarks/interval_coverage.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.estimators import adassp, bas
from dpstats.estimators.inference import gate, simulate, ssp

BETA = np.array([1.0, 2.0])


@pytest.fixture(autouse=True)
def _bootstrap_only(monkeypatch):
    """These tests check the bootstrap itself (small cells, public bounds): the release gate
    and the inflation are tested in tests/results/test_inference_gate.py."""
    for kind in ("adassp", "bas"):
        monkeypatch.setitem(gate.THRESHOLDS, kind, 0.0)
        monkeypatch.setitem(gate.INFLATION, kind, 1.0)
        monkeypatch.setitem(gate.INFLATION_FLOOR, kind, 1.0)
BOUNDS = {"x": (-4.0, 4.0), "y": (-12.0, 12.0)}


def _coverage(module, reps: int, n: int, eps: float, **kw) -> np.ndarray:
    hits = []
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        X = np.c_[np.ones(n), rng.normal(size=n)]
        y = X @ BETA + rng.normal(size=n)
        est = module.estimate(X, y, eps=eps, delta=1e-5, rng=rng, intercept_col=0,
                              bounds=BOUNDS, **kw)
        se = np.sqrt(np.diag(est.inference.cov))
        hits.append(np.abs(est.params - BETA) <= 1.959964 * se)
    return np.mean(hits, axis=0)


def _without_privacy_noise(monkeypatch, fn_name: str):
    """Broken: the simulation re-solves without fresh privacy noise (sampling error only)."""
    real = getattr(simulate, fn_name)

    def broken(G, beta, sigma2, **noise):
        for k in ("sigma_gram", "sigma_lam", "sigma_xy", "sigma_round"):
            if k in noise:
                noise[k] = 1e-12
        return real(G, beta, sigma2, **noise)
    monkeypatch.setattr(ssp, fn_name, broken)


def test_adassp_intervals_cover_at_n_2000_eps_2():
    cov = _coverage(adassp, 200, 2000, 2.0)
    assert (cov >= 0.9).all(), cov


def test_adassp_intervals_without_privacy_noise_under_cover(monkeypatch):
    _without_privacy_noise(monkeypatch, "adassp_draws")
    cov = _coverage(adassp, 200, 2000, 2.0)
    assert (cov < 0.9).any(), cov


def test_bas_intervals_cover():
    cov = _coverage(bas, 150, 3000, 1.0)
    assert (cov >= 0.9).all(), cov


def test_bas_intervals_without_privacy_noise_under_cover(monkeypatch):
    _without_privacy_noise(monkeypatch, "bas_draws")
    cov = _coverage(bas, 150, 3000, 1.0)
    assert (cov < 0.9).any(), cov


def test_inference_share_zero_spends_nothing_and_gives_none():
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(500), rng.normal(size=500)]
    y = X @ BETA + rng.normal(size=500)
    est = adassp.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0,
                          bounds=BOUNDS, inference_share=0.0)
    assert est.inference is None and est.details["eps_inference"] == 0.0


def test_sampling_part_matches_ols_when_privacy_noise_is_negligible():
    """At eps = 1e6 the bootstrap's spread is the sampling spread: OLS standard errors."""
    rng = np.random.default_rng(3)
    n = 20000
    X = np.c_[np.ones(n), rng.normal(size=n)]
    y = X @ BETA + rng.normal(size=n)
    est = adassp.estimate(X, y, eps=1e6, delta=1e-5, rng=rng, intercept_col=0, bounds=BOUNDS)
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    ols_se = np.sqrt(np.diag(resid @ resid / (n - 2) * np.linalg.inv(X.T @ X)))
    np.testing.assert_allclose(np.sqrt(np.diag(est.inference.cov)), ols_se, rtol=0.12)
    assert est.inference.sigma == pytest.approx(1.0, rel=0.03)
