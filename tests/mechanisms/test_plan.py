"""ReleasePlan and forfeit: composed costs are charged once, up front, and a plan cannot be
overdrawn (so the ledger never understates what was released)."""

import pytest

from dpstats.errors import BudgetExceededError
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.plan import ReleasePlan, forfeit


def test_plan_charges_once_before_any_release():
    led = Ledger(2.0, 1e-5)
    plan = ReleasePlan("exponential x 3 (composed)", 3, 1.5, 1e-6, led, stage="fit",
                       detail="advanced composition")
    assert led.spent == (1.5, 1e-6) and len(led.charges) == 1 and plan.used == 0
    for _ in range(3):
        plan.take()
    plan.finish()


def test_plan_refuses_an_extra_release_and_a_short_plan():
    plan = ReleasePlan("m", 2, 1.0, 0.0, None)
    plan.take()
    with pytest.raises(RuntimeError, match="paid for"):
        plan.finish()
    plan.take()
    with pytest.raises(RuntimeError, match="exceeds"):
        plan.take()


def test_plan_respects_the_ledger_cap():
    led = Ledger(1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        ReleasePlan("m", 5, 2.0, 0.0, led)
    assert led.spent == (0.0, 0.0)


def test_forfeit_records_spent_budget():
    led = Ledger()
    forfeit(led, "restricted exponential", 0.7, 1e-5, stage="regression", detail="not run")
    assert led.spent == (0.7, 1e-5) and led.charges[0].detail == "not run"
    forfeit(None, "x", 1.0, 0.0)
