"""The weighted design moments (:mod:`dpstats.mechanisms.weighted_moments`): exact sums, the
stated sensitivity (reached by a worst-case row, never exceeded) and the ledger charge."""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.mechanisms import weighted_moments as wm
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.design_moments import MOMENT_BOUND
from dpstats.mechanisms.weighted_moments import weighted_moments, weighted_sensitivity


def _exact(X, w, bound=MOMENT_BOUND):
    U = np.clip(X, -bound, bound)
    w = np.clip(w, 0.0, 0.25)
    iu = np.triu_indices(X.shape[1])
    return np.r_[w.sum(), (w[:, None] * U).sum(0), ((U * w[:, None]).T @ U)[iu]]


def test_sensitivity_formula_and_worst_row():
    assert weighted_sensitivity(3, 2.0) == (1 + 3 * 2 + 6 * 4) / 4
    X = np.random.default_rng(0).normal(size=(50, 3))
    w = np.full(50, 0.2)
    worst = np.r_[X[:1] * 0 + MOMENT_BOUND]          # the corner, weight 1/4
    change = np.abs(_exact(np.vstack([X, worst]), np.r_[w, 0.25]) - _exact(X, w)).sum()
    assert np.isclose(change, weighted_sensitivity(3))
    huge = np.abs(_exact(np.vstack([X, 50 * worst]), np.r_[w, 7.0]) - _exact(X, w)).sum()
    assert huge <= weighted_sensitivity(3) + 1e-9     # rows and weights are clipped


def test_large_eps_gives_exact_sums_and_charges_the_ledger():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    w = rng.uniform(0, 0.3, size=200)
    ledger = Ledger()
    S0, S1, S2 = weighted_moments(X, w, np.zeros(2), np.ones(2), 1e9, rng, ledger,
                                  stage="inference")
    exact = _exact(X, w)
    assert np.allclose(np.r_[S0, S1, S2[np.triu_indices(2)]], exact, atol=1e-5)
    assert np.allclose(S2, S2.T)
    (charge,) = ledger.charges
    assert charge.eps == 1e9 and charge.stage == "inference"
    assert f"L1 sensitivity {weighted_sensitivity(2):.4g}" in charge.detail


def _noise_scale_ok(rng) -> bool:
    """Mean absolute noise of every released entry within 10% of the stated scale
    ``weighted_sensitivity / eps`` (Laplace: E|noise| = scale), over 3,000 releases."""
    X = np.array([[0.5, -1.0], [2.0, 0.1]])
    w = np.array([0.2, 0.1])
    exact = _exact(X, w)
    iu = np.triu_indices(2)
    out = np.array([np.r_[r[0], r[1], r[2][iu]] for r in
                    (wm.weighted_moments(X, w, np.zeros(2), np.ones(2), 2.0, rng)
                     for _ in range(3000))])
    scale = weighted_sensitivity(2) / 2.0
    return bool(np.all(np.abs(np.abs(out - exact).mean(axis=0) / scale - 1.0) < 0.1))


@pytest.mark.parametrize("variant", ["real", "noise scale halved"])
def test_noise_scale_is_the_stated_one(variant, monkeypatch):
    """The real mechanism's noise has the stated scale; a variant that halves it is caught."""
    if variant != "real":
        real = wm.weighted_sensitivity
        monkeypatch.setattr(wm, "weighted_sensitivity",
                            lambda k, bound=MOMENT_BOUND: real(k, bound) / 2.0)
    ok = _noise_scale_ok(np.random.default_rng(5))
    assert ok == (variant == "real")
