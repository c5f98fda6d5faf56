"""The private sandwich (``cov_type="HC1"``) of AdaSSP and Boosted AdaSSP, and the fit
statistics (residual standard error, R^2) derived from released values.

The coverage of the sandwich over the grid is measured by benchmarks/interval_coverage.py
(arms ``method:HC1``); here: at negligible privacy noise the HC1 standard errors are
statsmodels' HC1 (and the nonrobust ones are not, under heteroscedastic errors: the test can
fail), the budget is charged as stated, the options are checked before anything is charged.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from dpstats.errors import ValidationError
from dpstats.estimators import adassp, bas
from dpstats.estimators.inference import gate, sandwich, ssp
from dpstats.mechanisms.accountant import Ledger

BOUNDS = {"x": (-4.0, 4.0), "y": (-25.0, 25.0)}


def _hetero(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(size=n), -4, 4)
    X = np.c_[np.ones(n), x]
    y = 1.0 + 2.0 * x + rng.normal(size=n) * (0.2 + 1.5 * np.abs(x))
    return X, np.clip(y, -25, 25), rng


@pytest.mark.parametrize("module", [adassp, bas])
def test_hc1_matches_statsmodels_at_negligible_privacy_noise(module, monkeypatch):
    kind = module.__name__.rsplit(".", 1)[1]
    monkeypatch.setitem(gate.INFLATION, kind, 1.0)
    monkeypatch.setitem(gate.INFLATION_FLOOR, kind, 1.0)
    X, y, rng = _hetero(40_000, 1)
    ols = sm.OLS(y, X)
    hc1 = np.asarray(ols.fit(cov_type="HC1").bse)
    plain = np.asarray(ols.fit().bse)
    kw = {"T": 400, "shrinkage": 0.2} if module is bas else {}
    fits = {c: module.estimate(X, y, eps=1e7, delta=1e-5, rng=rng, intercept_col=0,
                               bounds=BOUNDS, cov_type=c, **kw) for c in ("HC1", "nonrobust")}
    se = {c: np.sqrt(np.diag(f.inference.cov)) for c, f in fits.items()}
    assert fits["HC1"].inference.cov_type == "HC1"
    np.testing.assert_allclose(se["HC1"], hc1, rtol=0.15)
    assert abs(se["nonrobust"][1] / hc1[1] - 1) > 0.3       # the slope's SE differs a lot
    np.testing.assert_allclose(se["nonrobust"], plain, rtol=0.15)


def test_hc1_charges_its_shares_and_the_total_is_the_budget():
    X, y, rng = _hetero(3000, 2)
    led = Ledger()
    adassp.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0,
                    bounds=BOUNDS, cov_type="HC1")
    inf = [c for c in led.charges if c.stage == ssp.STAGE]
    assert sorted(c.mechanism for c in inf) == ["gaussian", "laplace"]
    meat = next(c for c in inf if c.mechanism == "gaussian")
    assert meat.eps == pytest.approx(sandwich.HC_SHARE)
    assert meat.delta == pytest.approx(sandwich.HC_SHARE * 1e-5)
    assert sum(c.eps for c in led.charges) == pytest.approx(1.0)
    assert sum(c.delta for c in led.charges) == pytest.approx(1e-5)


@pytest.mark.parametrize("kw", [{"cov_type": "HC3"}, {"cov_type": "HC1", "inference_share": 0},
                                {"cov_type": "HC1", "inference_share": 0.5, "hc_share": 0.5}])
def test_bad_cov_type_options_raise_before_any_charge(kw):
    X, y, rng = _hetero(500, 3)
    led = Ledger()
    with pytest.raises(ValidationError):
        bas.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0,
                     bounds=BOUNDS, **kw)
    assert not led.charges


def test_meat_factors_propagate_noise_and_rescale():
    S = np.diag([4.0, 1.0])
    L = sandwich.meat_factors({"meat": S, "sigma": 1e-9}, np.full(5, 8.0), 1.0, 0, 1.0,
                               seed=1)
    # the RSS says the intercept entry is 8, the meat 4: every draw is rescaled by 2
    np.testing.assert_allclose(L[0] @ L[0].T, 2 * S, atol=1e-6)
    L = sandwich.meat_factors({"meat": S, "sigma": 3.0}, np.full(2000, 4.0), 1.0, 0, 1.0,
                               seed=2)
    covs = L @ L.transpose(0, 2, 1)
    assert (np.linalg.eigvalsh(covs) >= -1e-9).all()          # PSD draws
    assert covs[:, 1, 1].std() > 1.0                          # the noise is propagated


def test_fit_statistics_match_ols_at_negligible_noise():
    rng = np.random.default_rng(4)
    n = 20_000
    X = np.c_[np.ones(n), rng.normal(size=n)]
    y = X @ np.array([1.0, 2.0]) + rng.normal(size=n)
    est = adassp.estimate(X, y, eps=1e7, delta=1e-5, rng=rng, intercept_col=0,
                          bounds={"x": (-5.0, 5.0), "y": (-15.0, 15.0)})
    ols = sm.OLS(y, X).fit()
    assert est.inference.r2 == pytest.approx(ols.rsquared, abs=0.01)
    assert est.inference.sigma == pytest.approx(np.sqrt(ols.scale), rel=0.02)
    broken = ssp.fit_statistics(np.eye(2) * n, np.zeros(2), 1.0 * n, 0, n, 1.0)
    assert broken["r2"] == 0.0                                 # no signal: R^2 0
