"""Tests for dpstats.mechanisms.accountant: charges, ledgers, shared budgets, splits,
composition."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpstats.errors import BudgetExceededError, DPStatsError, PrivacyParameterError
from dpstats.mechanisms.accountant import Budget, Charge, Ledger, advanced_composition, split_budget

# --------------------------------------------------------------------------------------------
# Ledger
# --------------------------------------------------------------------------------------------


def test_charges_recorded_in_order_with_all_fields():
    led = Ledger(2.0, 1e-5, label="my fit")
    c1 = led.charge("laplace", 0.1, stage="private n", detail="row count; sensitivity 1")
    led.set_stage("selection")
    c2 = led.charge("gumbel top-k", 0.2)
    c3 = led.charge("gaussian", 0.5, 1e-6, stage="regression", detail="sigma 3.2")

    assert led.charges == (c1, c2, c3)
    assert len(led) == 3
    assert c1 == Charge("private n", "laplace", 0.1, 0.0, "row count; sensitivity 1", "my fit")
    # a charge without its own stage takes the ledger's current stage
    assert (c2.stage, c2.mechanism, c2.eps, c2.delta, c2.detail) == \
        ("selection", "gumbel top-k", 0.2, 0.0, "")
    assert (c3.stage, c3.eps, c3.delta, c3.detail) == ("regression", 0.5, 1e-6, "sigma 3.2")
    assert all(c.label == "my fit" for c in led.charges)
    # charges are immutable records
    with pytest.raises(AttributeError):
        c1.eps = 0.0  # type: ignore[misc]


def test_default_stage_when_none_set():
    led = Ledger()
    assert led.charge("laplace", 0.1).stage == "release"


def test_spent_is_basic_composition_with_exact_summation():
    led = Ledger(10.0, 0.5)
    eps_list = [0.1] * 10 + [1e-17] * 1000 + [0.3]
    for e in eps_list:
        led.charge("laplace", e)
    led.charge("gaussian", 0.2, 1e-6)
    led.charge("gaussian", 0.2, 2e-6)
    eps, delta = led.spent
    expected = math.fsum(eps_list + [0.2, 0.2])
    assert eps == expected
    assert expected != sum(eps_list + [0.2, 0.2])  # naive summation would differ here
    assert delta == math.fsum([1e-6, 2e-6])


def test_empty_ledger_spends_nothing():
    led = Ledger(1.0, 1e-5)
    assert led.spent == (0.0, 0.0)
    assert len(led) == 0
    assert list(led.to_frame().columns) == ["stage", "mechanism", "eps", "delta", "detail"]
    assert led.to_frame().empty


def test_charge_exceeding_eps_cap_raises_and_records_nothing():
    led = Ledger(1.0, 1e-5)
    led.charge("laplace", 0.6)
    with pytest.raises(BudgetExceededError, match="exceed"):
        led.charge("laplace", 0.5)
    assert len(led) == 1
    assert led.spent == (0.6, 0.0)
    # what remains can still be spent exactly (up to float tolerance)
    led.charge("laplace", 0.4)
    assert led.spent[0] == pytest.approx(1.0)


def test_charge_exceeding_delta_cap_raises_and_records_nothing():
    led = Ledger(1.0, 1e-6)
    with pytest.raises(BudgetExceededError):
        led.charge("gaussian", 0.1, 2e-6)
    assert len(led) == 0
    pure = Ledger(1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        pure.charge("gaussian", 0.1, 1e-12)
    assert len(pure) == 0


def test_budget_exceeded_is_a_dpstats_error():
    assert issubclass(BudgetExceededError, DPStatsError)


@pytest.mark.parametrize("eps, delta", [
    (-0.1, 0.0), (math.nan, 0.0), (math.inf, 0.0), (-math.inf, 0.0),
    (0.1, 1.0), (0.1, 1.5), (0.1, -1e-9), (0.1, math.nan),
])
def test_invalid_charges_raise_and_record_nothing(eps, delta):
    led = Ledger()
    with pytest.raises(PrivacyParameterError):
        led.charge("laplace", eps, delta)
    assert len(led) == 0
    assert led.spent == (0.0, 0.0)


def test_zero_eps_charge_is_allowed():
    led = Ledger(1.0, 0.0)
    led.charge("deterministic", 0.0)
    assert led.spent == (0.0, 0.0)
    assert len(led) == 1


def test_nan_cap_refuses_charges():
    led = Ledger(math.nan, 0.0)
    with pytest.raises(BudgetExceededError):
        led.charge("laplace", 0.1)


def test_to_frame_columns_and_values():
    led = Ledger(2.0, 1e-5)
    led.charge("laplace", 0.1, stage="private n", detail="n")
    led.charge("gaussian", 0.9, 1e-5, stage="regression", detail="beta")
    df = led.to_frame()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["stage", "mechanism", "eps", "delta", "detail"]
    assert df["stage"].tolist() == ["private n", "regression"]
    assert df["mechanism"].tolist() == ["laplace", "gaussian"]
    assert df["eps"].tolist() == [0.1, 0.9]
    assert df["delta"].tolist() == [0.0, 1e-5]
    assert df["detail"].tolist() == ["n", "beta"]


# --------------------------------------------------------------------------------------------
# Budget
# --------------------------------------------------------------------------------------------


def test_budget_check_names_remaining_budget():
    b = Budget(1.0, 1e-5)
    b.check(1.0, 1e-5)  # exactly everything fits
    led = b.ledger_for(0.7, 1e-5)
    led.charge("laplace", 0.7)
    with pytest.raises(BudgetExceededError) as info:
        b.check(0.5, 0.0)
    msg = str(info.value)
    assert "0.3" in msg and "left" in msg and "eps=0.5" in msg
    with pytest.raises(BudgetExceededError, match="delta"):
        b.check(0.1, 2e-5)
    with pytest.raises(BudgetExceededError):
        b.check(math.nan, 0.0)


def test_ledger_for_refuses_before_spending():
    b = Budget(1.0, 1e-5)
    with pytest.raises(BudgetExceededError):
        b.ledger_for(1.5, 1e-6)
    assert b.spent == (0.0, 0.0)
    assert b.ledger.empty


def test_ledger_for_charges_appear_in_budget_ledger_with_fit_labels():
    b = Budget(2.0, 1e-5)
    led = b.ledger_for(1.0, 1e-6)
    led.charge("laplace", 0.05, stage="private n", detail="row count")
    led.charge("gaussian", 0.9, 1e-6, stage="regression", detail="coefficients")
    assert led.label == "fit 1"
    df = b.ledger
    assert list(df.columns) == ["fit", "stage", "mechanism", "eps", "delta", "detail"]
    assert df["fit"].tolist() == ["fit 1", "fit 1"]
    assert df["stage"].tolist() == ["private n", "regression"]
    assert df["mechanism"].tolist() == ["laplace", "gaussian"]
    assert df["detail"].tolist() == ["row count", "coefficients"]
    assert b.spent == pytest.approx((0.95, 1e-6))
    assert b.remaining == pytest.approx((1.05, 9e-6))
    assert led.spent == b.spent


def test_two_fits_share_a_budget():
    b = Budget(1.0, 1e-5)
    a = b.ledger_for(0.6, 5e-6, label="model A")
    a.charge("laplace", 0.1, stage="private n")
    a.charge("gaussian", 0.5, 5e-6, stage="regression")
    # the second fit asks for more than what is left
    with pytest.raises(BudgetExceededError):
        b.ledger_for(0.6, 5e-6)
    bb = b.ledger_for(0.4, 5e-6, label="model B")
    bb.charge("laplace", 0.4, stage="selection")
    assert b.ledger["fit"].tolist() == ["model A", "model A", "model B"]
    assert a.spent == (0.6, 5e-6)
    assert bb.spent == (0.4, 0.0)
    assert b.spent == pytest.approx((1.0, 5e-6))
    # nothing left in eps: any further charge fails and is not recorded anywhere
    with pytest.raises(BudgetExceededError):
        bb.charge("laplace", 1e-3)
    assert len(bb) == 1 and len(b.ledger) == 3


def test_parent_refusal_records_nothing_in_the_fit_ledger():
    b = Budget(1.0, 0.0)
    l1 = b.ledger_for(0.8, 0.0)
    l2 = b.ledger_for(0.8, 0.0)  # both fit when asked; the budget is enforced when spending
    l1.charge("laplace", 0.8)
    with pytest.raises(BudgetExceededError, match="remaining"):
        l2.charge("laplace", 0.5)
    assert len(l2) == 0
    assert b.spent == (0.8, 0.0)


def test_default_labels_are_distinct_for_ledgers_created_before_spending():
    b = Budget(2.0, 1e-5)
    l1 = b.ledger_for(0.5, 0.0)
    l2 = b.ledger_for(0.5, 0.0)
    l1.charge("laplace", 0.1)
    l2.charge("laplace", 0.1)
    l3 = b.ledger_for(0.5, 0.0)
    assert [l1.label, l2.label, l3.label] == ["fit 1", "fit 2", "fit 3"]
    assert b.ledger["fit"].tolist() == ["fit 1", "fit 2"]


def test_remaining_never_negative():
    b = Budget(1.0, 1e-6)
    led = b.ledger_for(1.0, 1e-6)
    led.charge("laplace", 0.5 + 0.3)
    led.charge("laplace", 0.2 + 1e-10)  # within float tolerance of the cap
    led.charge("gaussian", 0.0, 1e-6)
    r_eps, r_delta = b.remaining
    assert r_eps >= 0.0 and r_delta >= 0.0
    assert r_eps == pytest.approx(0.0, abs=1e-9)
    assert r_delta == 0.0


@pytest.mark.parametrize("kwargs", [
    {"eps": 0}, {"eps": -1.0}, {"eps": "1"}, {"eps": math.nan}, {"eps": math.inf},
    {"eps": None}, {"eps": True},
    {"eps": 1.0, "delta": 1}, {"eps": 1.0, "delta": -1e-5}, {"eps": 1.0, "delta": math.nan},
    {"eps": 1.0, "delta": "1e-5"},
])
def test_budget_rejects_bad_parameters(kwargs):
    with pytest.raises(PrivacyParameterError) as info:
        Budget(**kwargs)
    assert isinstance(info.value, DPStatsError)
    bad = "delta" if "delta" in kwargs else "eps"
    assert bad in str(info.value)


def test_budget_accepts_zero_delta_and_reports_it():
    b = Budget(1, 0)
    assert (b.eps, b.delta) == (1.0, 0.0)
    assert b.remaining == (1.0, 0.0)
    assert "Budget(" in repr(b)


# --------------------------------------------------------------------------------------------
# split_budget and advanced composition
# --------------------------------------------------------------------------------------------


def test_split_budget_multiplies_shares():
    out = split_budget(2.0, {"n": 0.05, "selection": 0.05, "regression": 0.9})
    assert out == pytest.approx({"n": 0.1, "selection": 0.1, "regression": 1.8})
    assert list(out) == ["n", "selection", "regression"]
    assert math.fsum(out.values()) == pytest.approx(2.0)
    assert split_budget(1.0, {"all": 1.0, "nothing": 0.0}) == {"all": 1.0, "nothing": 0.0}


@pytest.mark.parametrize("shares", [
    {"a": 0.5, "b": 0.4},
    {"a": 0.5, "b": 0.6},
    {"a": 1.2, "b": -0.2},
    {"a": math.nan, "b": 1.0},
    {"a": math.inf, "b": -math.inf},
    {},
])
def test_split_budget_rejects_bad_shares(shares):
    with pytest.raises(PrivacyParameterError):
        split_budget(1.0, shares)


def _adv_formula(eps, k, slack):
    return math.sqrt(2 * k * math.log(1 / slack)) * eps + k * eps * (math.exp(eps) - 1)


@pytest.mark.parametrize("eps, delta_each, k, slack", [
    (0.01, 1e-7, 1000, 1e-6),
    (0.05, 0.0, 500, 1e-5),
    (0.1, 1e-8, 100, 1e-6),
])
def test_advanced_composition_matches_formula_when_tighter(eps, delta_each, k, slack):
    e_tot, d_tot = advanced_composition(eps, delta_each, k, slack)
    assert e_tot == pytest.approx(_adv_formula(eps, k, slack), rel=1e-12)
    assert e_tot < k * eps
    assert d_tot == pytest.approx(k * delta_each + slack, rel=1e-12)


@pytest.mark.parametrize("eps, k", [(1.0, 1), (1.0, 3), (0.5, 10), (2.0, 50), (0.01, 1),
                                    (0.01, 10_000), (5.0, 2)])
def test_advanced_composition_never_exceeds_basic(eps, k):
    e_tot, _ = advanced_composition(eps, 0.0, k, 1e-6)
    assert e_tot <= k * eps
    assert e_tot == pytest.approx(min(_adv_formula(eps, k, 1e-6), k * eps), rel=1e-12)


@pytest.mark.parametrize("k, slack", [(0, 1e-6), (-1, 1e-6), (5, 0.0), (5, 1.0), (5, -0.1)])
def test_advanced_composition_rejects_bad_arguments(k, slack):
    with pytest.raises(PrivacyParameterError):
        advanced_composition(0.1, 0.0, k, slack)


def test_budget_exceeded_says_delta_ran_out_with_the_fix():
    """Issue 18: two fits each asking for the whole delta; the message names delta, not eps."""
    b = Budget(2.0, 1e-5)
    b.ledger_for(1.0, 1e-5).charge("laplace", 1.0, 1e-5)
    with pytest.raises(BudgetExceededError) as info:
        b.check(1.0, 1e-5)
    msg = str(info.value)
    assert "delta ran out (asked 1e-05, 0 left)" in msg
    assert "eps ran out" not in msg
    assert "give each fit its share" in msg and "delta=5e-6" in msg


def test_budget_exceeded_says_eps_ran_out_with_the_numbers():
    b = Budget(1.0, 1e-5)
    b.ledger_for(0.7, 0.0).charge("laplace", 0.7)
    with pytest.raises(BudgetExceededError) as info:
        b.check(0.5, 0.0)
    msg = str(info.value)
    assert "eps ran out (asked 0.5, 0.3 left)" in msg and "pass eps <= 0.3" in msg
    assert "delta ran out" not in msg
