"""dpstats.select on its own: results, ledger, summary, errors (nothing charged), wide frames;
dp_lm with select="sis" and public bounds."""

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import DPStatsError, UnknownMethodError, ValidationError


@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.standard_normal((200, 400)), columns=[f"g{i}" for i in range(400)])
    df["y"] = 2 * df.g11 - 1.5 * df.g222 + df.g5 + 0.1 * rng.standard_normal(200)
    return df


@pytest.mark.parametrize("method", ["kendall", "sublasso", "sis", "auto"])
def test_select_finds_the_signal_at_large_eps(wide, method):
    kw = {"bounds": (-5.0, 5.0)} if method == "sis" else {}
    res = dp.select("y ~ .", wide, eps=200.0, k=3, method=method, random_state=3, **kw)
    assert sorted(res.selected) == ["g11", "g222", "g5"]
    assert res.spent == pytest.approx((200.0, 0.0))
    assert res.k == 3 and res.candidates == 400 and res.seeded
    assert res.ordered == (res.method != "sis")
    stages = set(res.ledger.stage)
    assert stages <= {"selection", "private n"}
    assert ("private n" in stages) == (res.method == "sublasso" or method == "auto")


def test_select_summary_text_and_html(wide):
    res = dp.select("y ~ .", wide, eps=50.0, k=2, method="sis", bounds=(-5.0, 5.0),
                    random_state=0)
    text = str(res.summary())
    assert "feature selection" in text and "a set, listed in column order" in text
    assert "Privacy ledger" in text and "2 of 400" in text
    assert "Coefficients" not in text
    html = res._repr_html_()
    assert "dpstats-selected" in html and "dpstats-coefs" not in html
    assert "SelectionResult" in repr(res)


def test_select_with_a_shared_budget_records_and_refuses(wide):
    b = dp.Budget(1.0, 1e-6)
    dp.select("y ~ .", wide, eps=0.6, k=2, budget=b, random_state=0)
    assert b.spent[0] == pytest.approx(0.6)
    with pytest.raises(dp.BudgetExceededError):
        dp.select("y ~ .", wide, eps=0.6, k=2, budget=b, random_state=0)
    assert b.spent[0] == pytest.approx(0.6)


@pytest.mark.parametrize(("kwargs", "exc"), [
    ({"method": "lasso"}, UnknownMethodError),
    ({"k": 0}, ValidationError),
    ({"k": 401}, ValidationError),
    ({"eps": -1.0}, DPStatsError),
    ({"groups": 0, "method": "sublasso"}, ValidationError),
    ({"bounds": (3.0, 1.0), "method": "sis"}, ValidationError),
    ({"bounds": "data"}, ValidationError),
    ({"bounds": 5}, ValidationError),
])
def test_select_errors_charge_nothing(wide, kwargs, exc):
    b = dp.Budget(10.0, 1e-6)
    args = {"eps": 1.0, "k": 2, "budget": b, **kwargs}
    with pytest.raises(exc):
        dp.select("y ~ .", wide, **args)
    assert b.spent == (0.0, 0.0)


def test_numpy_integer_groups_are_accepted(wide):
    res = dp.select("y ~ .", wide, eps=5.0, k=2, method="sublasso", groups=np.int64(10),
                    random_state=0)
    assert len(res.selected) == 2 and res.n_noisy is None


def test_dp_lm_with_sis_and_public_bounds():
    rng = np.random.default_rng(5)
    n = 30000
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 8)), columns=[f"x{i}" for i in range(8)])
    df["y"] = 0.5 * df.x2 - 0.4 * df.x6 + 0.05 * rng.standard_normal(n)
    fit = dp.dp_lm("y ~ .", df, eps=20.0, k=2, select="sis", bounds=(-1.0, 1.0),
                   random_state=1)
    assert sorted(fit.selected) == ["x2", "x6"] and fit.selection.ordered is False
    assert fit.released and (fit.params.drop(["Intercept", "x2", "x6"]) == 0).all()
    assert "a set, listed in column order" in str(fit.summary())
    sel_eps = fit.ledger.loc[fit.ledger.stage == "selection", "eps"].sum()
    assert sel_eps == pytest.approx(0.05 * 20.0)
    assert fit.spent[0] == pytest.approx(20.0)


def test_dp_lm_bad_public_bounds_charge_nothing():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.standard_normal((500, 7)), columns=list("abcdefg"))
    b = dp.Budget(5.0, 1e-5)
    with pytest.raises(ValidationError):
        dp.dp_lm("g ~ .", df, eps=1.0, select="sis", bounds={"x": (1.0, 1.0), "y": (0, 1)},
                 budget=b)
    assert b.spent == (0.0, 0.0)
