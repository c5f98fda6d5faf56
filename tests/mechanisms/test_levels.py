"""Tests for dpstats.mechanisms.levels: private discovery of category levels.

The threshold is checked against the exact tail of the discrete Laplace distribution; the
release probabilities of a new level (count 1) and of a level at the threshold are checked by
sampling with fixed seeds and tolerances of many standard errors. The privacy audit is in
tests/privacy/test_audit_levels.py.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from dpstats.errors import BudgetExceededError, PrivacyParameterError
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.levels import (
    ReleasedLevels,
    level_order,
    private_levels,
    stability_threshold,
)


def tail(num: int, den: int, k: int) -> float:
    """P(Z >= k) for k >= 1 under P(z) ~ exp(-|z| den / num)."""
    q = math.exp(-den / num)
    return q**k / (1 + q)


@pytest.mark.parametrize("eps, delta", [(0.5, 0.01), (1.0, 1e-6), (0.01, 1e-9), (3.0, 0.2),
                                        (1e-4, 1e-5), (50.0, 1e-12)])
def test_threshold_is_the_smallest_that_keeps_a_new_level_below_delta(eps, delta):
    num, den, tau = stability_threshold(eps, delta)
    assert num / den >= 1 / eps and num / den <= (1 / eps) * (1 + 2**-39)
    assert tau >= 1
    # a level of count 1 passes iff 1 + Z >= tau
    assert tail(num, den, tau - 1) <= delta if tau >= 2 else True
    if tau >= 3:   # one less would not do (up to the 1e-12 safety margin)
        assert tail(num, den, tau - 2) > delta * (1 - 1e-9)


def test_threshold_matches_the_laplace_rule_for_small_eps():
    """For small eps the discrete tail is the continuous one: 1 + ln(1/(2 delta)) / eps."""
    _, _, tau = stability_threshold(0.01, 1e-6)
    assert abs(tau - (1 + math.log(1 / (2e-6)) / 0.01)) <= 2


def test_common_levels_released_rare_not_and_sorted():
    hist = {"zeta": 9000, "alpha": 7000, "mid": 5000, "rare": 1, "few": 3}
    out = private_levels([hist], 1.0, 1e-6, np.random.default_rng(0))
    assert out == [ReleasedLevels(("alpha", "mid", "zeta"), False)]


def test_release_does_not_depend_on_the_order_of_the_histogram():
    items = [(f"l{i:02d}", 100 + 37 * i) for i in range(30)] + [("x", 1), ("y", 2)]
    outs = set()
    for seed in range(5):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        outs.add(private_levels([dict(shuffled)], 2.0, 1e-3, np.random.default_rng(7))[0])
    assert len(outs) == 1


def test_levels_are_the_data_values_unchanged():
    odd = "  Very Good \u00e9\n"
    out = private_levels([{odd: 5000, 7: 4000, 2.5: 6000}], 1.0, 1e-6, np.random.default_rng(1))
    assert out[0].levels == (2.5, 7, odd)
    assert out[0].levels[2] is odd


def test_level_order_is_a_function_of_the_value():
    assert sorted([True, "b", None, 3, 1.5, "a"], key=level_order) == \
        [1.5, 3, "a", "b", None, True]


def test_pooled_level_kept_when_the_rest_is_large_and_dropped_when_empty():
    rng = np.random.default_rng(2)
    many_rare = {"big": 20000, **{f"r{i}": 5 for i in range(2000)}}
    assert private_levels([many_rare], 1.0, 1e-6, rng)[0] == ReleasedLevels(("big",), True)
    assert private_levels([{"a": 20000, "b": 9000}], 1.0, 1e-6, rng)[0].pooled is False


def test_nothing_released_means_everything_pooled():
    out = private_levels([{f"id{i}": 1 for i in range(500)}], 1.0, 1e-6,
                         np.random.default_rng(3))
    assert out == [ReleasedLevels((), True)]


def test_empty_histogram():
    out = private_levels([{}, {"a": 0}], 1.0, 1e-6, np.random.default_rng(0))
    assert out == [ReleasedLevels((), False)] * 2


def test_ledger_one_charge_per_column_with_the_split_budget():
    led = Ledger(1.0, 1e-5)
    private_levels([{"a": 10}, {"b": 10}, {"c": 10}], 0.3, 3e-6, np.random.default_rng(0), led,
                   names=["g", "h", "k"])
    assert [c.stage for c in led.charges] == ["levels"] * 3
    assert [c.eps for c in led.charges] == pytest.approx([0.1] * 3)
    assert [c.delta for c in led.charges] == pytest.approx([1e-6] * 3)
    assert led.spent == pytest.approx((0.3, 3e-6))
    _, _, tau = stability_threshold(0.05, 1e-6)
    assert all(f">= {tau}" in c.detail for c in led.charges)
    assert "'g'" in led.charges[0].detail and "'k'" in led.charges[2].detail


def test_detail_reveals_nothing_about_the_data():
    details = []
    for hist in ({"a": 10}, {"a": 10_000, "b": 3, "c": 99}):
        led = Ledger()
        private_levels([hist], 1.0, 1e-6, np.random.default_rng(0), led, names=["g"])
        details.append(led.charges[0].detail)
    assert details[0] == details[1]


def test_charge_before_release_and_refusals():
    with pytest.raises(BudgetExceededError):
        private_levels([{"a": 10}], 1.0, 1e-6, np.random.default_rng(0), Ledger(0.5, 1e-6))
    with pytest.raises(PrivacyParameterError):
        private_levels([{"a": 10}], 0.0, 1e-6, np.random.default_rng(0))
    with pytest.raises(PrivacyParameterError):
        private_levels([{"a": 10}], 1.0, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least one"):
        private_levels([], 1.0, 1e-6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="one entry per"):
        private_levels([{"a": 1}], 1.0, 1e-6, np.random.default_rng(0), names=["a", "b"])


def test_seeded_release_is_reproducible():
    hist = {f"l{i}": 20 + 3 * i for i in range(40)}
    a = private_levels([hist], 1.0, 1e-3, np.random.default_rng(11))
    b = private_levels([hist], 1.0, 1e-3, np.random.default_rng(11))
    assert a == b


def _release_rate(hist, level, eps, delta, draws, seed):
    rng = np.random.default_rng(seed)
    return np.mean([level in private_levels([hist], eps, delta, rng)[0].levels
                    for _ in range(draws)])


def test_new_level_released_with_the_exact_tail_probability():
    """A level of count 1 passes with probability P(Z >= tau - 1) <= delta."""
    eps, delta, draws = 1.0, 0.05, 6000
    num, den, tau = stability_threshold(eps / 2, delta)
    p = tail(num, den, tau - 1)
    assert p <= delta
    rate = _release_rate({"a": 1}, "a", eps, delta, draws, 0)
    assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / draws) + 1e-3


def test_level_at_the_threshold_passes_about_half_the_time():
    eps, delta, draws = 1.0, 1e-3, 4000
    num, den, tau = stability_threshold(eps / 2, delta)
    q = math.exp(-den / num)
    p = 1 - q / (1 + q)            # P(Z >= 0)
    rate = _release_rate({"a": tau}, "a", eps, delta, draws, 1)
    assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / draws)
