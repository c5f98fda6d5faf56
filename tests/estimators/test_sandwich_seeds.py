"""The HC1 sandwich's meat draws are seeded from released values.

With ``cov_type="HC1"`` each bootstrap draw uses a plausible meat ``psd(S~ - sigma E_b)``.
The noise ``E_b`` was drawn at one fixed seed (11): the same 1,000 meats' noise in every fit,
so its Monte Carlo error never averaged out over fits. Now its seed is
:func:`~dpstats.estimators.inference.sandwich.meat_seed` of the released meat and fit.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from bas_capture import P, captured_inference

from dpstats.estimators.inference import gate, sandwich, ssp


@pytest.fixture(scope="module")
def captured():
    """The released inputs of one BAS ``cov_type="HC1"`` fit's inference (n = 20,000)."""
    kind, kw = captured_inference(23, hetero=True, cov_type="HC1")
    assert kw["meat"] is not None and gate.passes(kind, kw["n_hat"], 1.0, P)
    return kind, kw


def _meat_noise(kind, kw, monkeypatch, meat_shift=0.0, theta_shift=0.0):
    """The seed of the meat's noise draws in one inference, and its standard errors."""
    args = copy.deepcopy(kw)
    args["meat"]["meat"] = args["meat"]["meat"] + meat_shift
    args["theta"] = args["theta"] + theta_shift
    seeds = []
    real = sandwich.simulation_noise

    def spy(shapes, *a, **k):
        if "meat" in shapes:
            seeds.append(k["seed"])
        return real(shapes, *a, **k)
    monkeypatch.setattr(sandwich, "simulation_noise", spy)
    se = np.sqrt(np.diag(ssp.ssp_inference(kind, **args).cov))
    monkeypatch.setattr(sandwich, "simulation_noise", real)
    assert len(seeds) == 1
    return seeds[0], se


def test_same_released_inputs_same_meat_draws(captured, monkeypatch):
    kind, kw = captured
    s1, se1 = _meat_noise(kind, kw, monkeypatch)
    s2, se2 = _meat_noise(kind, kw, monkeypatch)
    assert s1 == s2
    np.testing.assert_array_equal(se1, se2)
    # a sum's last bits (a dask fit against the in-memory one) draw the same meats
    s3, _ = _meat_noise(kind, kw, monkeypatch, meat_shift=1e-13 * np.abs(kw["meat"]["meat"]))
    assert s3 == s1


def test_other_fits_other_meat_draws(captured, monkeypatch):
    """Another released meat, or the same meat with other released coefficients (another
    fit), draws other meat noise (the fixed seed 11 drew the same in every fit)."""
    kind, kw = captured
    s1, _ = _meat_noise(kind, kw, monkeypatch)
    s2, _ = _meat_noise(kind, kw, monkeypatch, meat_shift=1e-3 * np.abs(kw["meat"]["meat"]))
    s3, _ = _meat_noise(kind, kw, monkeypatch, theta_shift=1e-4)
    assert len({s1, s2, s3}) == 3


def test_meat_factors_draws_follow_the_seed():
    """The meats' noise is the seed's: two seeds, two sets of draws; one seed, one."""
    rel = {"meat": np.diag([4.0, 1.0]), "sigma": 0.1}
    rss = np.full(200, 1.0)                               # no RSS rescaling (scale 1)
    a = sandwich.meat_factors(rel, rss, 1.0, 0, 1.0, seed=sandwich.meat_seed(rel["meat"], 1.0))
    b = sandwich.meat_factors(rel, rss, 1.0, 0, 1.0, seed=sandwich.meat_seed(rel["meat"], 2.0))
    c = sandwich.meat_factors(rel, rss, 1.0, 0, 1.0, seed=sandwich.meat_seed(rel["meat"], 1.0))
    cov = [x @ x.transpose(0, 2, 1) for x in (a, b, c)]
    np.testing.assert_array_equal(cov[0], cov[2])
    assert np.abs(cov[0] - cov[1]).max() > 0.01
