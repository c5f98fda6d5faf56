"""dp_glm's default from 7 fitted columns: objective perturbation's inference share chosen from
public values and the released count (design note "NN", benchmarks/glm_p10_rule.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstats.api.glm import dp_glm
from dpstats.estimators import glm_auto, objpert
from dpstats.estimators.inference.glm import OBJPERT_SHARE


def _switch(k: int) -> float:
    return glm_auto.OBJPERT_CONSTANT * (k / 6.0) ** glm_auto.OBJPERT_POWER


@pytest.mark.parametrize("n", [2_000.0, 5_000.0, 20_000.0, 1e6])
@pytest.mark.parametrize("eps", [0.25, 0.95, 4.0])
@pytest.mark.parametrize("k", [2, 6])
def test_up_to_six_columns_the_share_is_unchanged(k, eps, n):
    assert objpert.inference_share(k, eps, 1e-5, n, _switch(k)) == OBJPERT_SHARE


def test_share_at_the_reference_and_near_the_switch():
    # p = 10 at n = 20,000, eps 1 (fit eps 0.95): the reference share 0.20 (was 0.10: no
    # intervals in any fit, design note 75)
    assert objpert.inference_share(11, 0.95, 1e-5, 20_000.0, _switch(11)) == pytest.approx(
        0.20, abs=1e-6)
    # n = 7,000 is within twice the switch: the share stays 0.10 (objpert broke at 0.20 there)
    assert objpert.inference_share(11, 0.95, 1e-5, 7_000.0, _switch(11)) == OBJPERT_SHARE
    # many rows: the reference's noise needs no more than 0.10
    assert objpert.inference_share(11, 0.95, 1e-5, 1e6, _switch(11)) == OBJPERT_SHARE
    # many columns: capped
    assert objpert.inference_share(21, 0.95, 1e-5, 20_000.0, _switch(21)) == pytest.approx(
        objpert.SHARE_MAX)


def test_share_grows_with_columns_and_keeps_the_headroom():
    shares = [objpert.inference_share(k, 0.95, 1e-5, 30_000.0, _switch(k))
              for k in (7, 9, 11, 13, 16, 21)]
    assert shares == sorted(shares) and shares[0] < shares[-1]
    for n in np.linspace(3_000, 60_000, 40):
        s = objpert.inference_share(11, 0.95, 1e-5, float(n), _switch(11))
        assert OBJPERT_SHARE <= s <= objpert.SHARE_MAX
        if s > OBJPERT_SHARE:                    # the fit's own eps keeps twice the switch
            keep = (1 - s) / (1 - OBJPERT_SHARE)
            mu = glm_auto.gdp_mu(0.95 * keep, 1e-5 * keep)
            assert n * mu >= objpert.SHARE_HEADROOM * _switch(11) * (1 - 1e-9)


def _frame(n: int, p: int, seed: int, scale: float = 1.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * scale
    slopes = (-1.0) ** np.arange(p) * 0.4
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(0.5 - X @ slopes / scale))).astype(float)
    return df


def test_p10_at_20000_rows_releases_intervals():
    """Fails on the rule before (share 0.10): no intervals at 11 columns and 20,000 rows."""
    fit = dp_glm("y ~ " + " + ".join(f"x{j}" for j in range(10)), _frame(20_000, 10, 3),
                 eps=1.0, select=None, random_state=3)
    assert fit.auto_choice == "objpert"
    assert np.isfinite(fit.conf_int().to_numpy()).all()
    led = fit.ledger
    inf = led[led["stage"].str.contains("inference")]["eps"].sum()
    assert inf == pytest.approx(0.2 * 0.95, rel=0.05)
    assert fit.spent[0] == pytest.approx(1.0)


def test_share_reads_only_the_released_count_and_public_values(monkeypatch):
    """Two data sets of the same shape and different contents, with the released count
    fixed: the share objective perturbation gets is the same."""
    seen = []
    real = objpert.estimate

    def spy(X, y, **kw):
        seen.append(kw["inference_share"])
        return real(X, y, **kw)

    monkeypatch.setattr(objpert, "estimate", spy)
    for seed, scale in ((0, 1.0), (1, 5.0)):
        df = _frame(20_000, 10, seed, scale)
        X = np.c_[np.ones(len(df)), df.drop(columns="y").to_numpy()]
        glm_auto.estimate(X, df["y"].to_numpy(), eps=0.95, delta=1e-5, n_noisy=20_000.0,
                          rng=np.random.default_rng(seed), intercept_col=0)
    assert len(seen) == 2 and seen[0] == seen[1] == pytest.approx(0.20, abs=1e-6)
