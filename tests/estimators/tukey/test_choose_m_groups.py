"""Tukey's number of models (dpstats.estimators.tukey.choose_m): the models PTR needs, in groups
of up to ROWS_PER_COLUMN rows per column, and why (a rare 0/1 column is not voted to 0)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.estimators.inference import gate
from dpstats.estimators.tukey.choose_m import (
    GATE_INDEX,
    GATE_ROWS_PER_COLUMN,
    ROWS_PER_COLUMN,
    SAFETY,
    choose_m,
    gate_models,
    models_cap,
    models_needed,
)

P, EPS, DELTA = 6, 1.0, 1e-5


def _need(p=P, eps=EPS):
    return math.ceil(SAFETY * models_needed(p, eps, DELTA))


def test_needed_models_until_groups_reach_the_target_size():
    need, m_gate = _need(), gate_models(P, EPS)
    assert ROWS_PER_COLUMN > 3 and need < m_gate
    for n in (need * P, 3 * need * P, GATE_ROWS_PER_COLUMN * gate_models(P, EPS, 1.0) * P - 1):
        assert choose_m(n, P, EPS, DELTA) == need          # groups grow, models stay
    n = 2 * ROWS_PER_COLUMN * m_gate * P
    assert choose_m(n, P, EPS, DELTA) == int(n / (ROWS_PER_COLUMN * P))   # then models grow
    assert choose_m(1e12, P, EPS, DELTA) == models_cap(P, EPS, DELTA)
    assert choose_m(need * P - P, P, EPS, DELTA) == need - 1             # below: 1 row per column


def test_models_rise_to_open_the_intervals_gate_when_groups_stay_large_enough():
    """Where groups keep GATE_ROWS_PER_COLUMN rows per column, m is what the intervals' release
    gate needs with its margin, else the gate itself; a variant without the floor would
    withhold the intervals."""
    assert GATE_INDEX == gate.TUKEY_THRESHOLD
    with_margin, plain = gate_models(P, EPS), gate_models(P, EPS, 1.0)
    assert with_margin > plain
    for n in (GATE_ROWS_PER_COLUMN * with_margin * P, 20 * with_margin * P):
        assert choose_m(n, P, EPS, DELTA) == with_margin
    n = GATE_ROWS_PER_COLUMN * plain * P                      # room for the gate only
    m = choose_m(n, P, EPS, DELTA)
    assert m == plain and gate.tukey_passes(m, EPS, P)
    assert not gate.tukey_passes(_need(), EPS, P)            # the rule without the floor


def test_between_the_gate_and_its_margin_m_is_the_most_groups_of_five_rows_per_column():
    """Where groups of GATE_ROWS_PER_COLUMN rows per column allow more than the gate but less
    than its margin (1e6 x 20 at eps ~1), m is the most such groups, as the logistic rule; the
    old rule fell back to the gate itself (m = 5,527 at 1e6 x 20, where the window counts'
    noise withheld most intercepts' intervals)."""
    with_margin, plain = gate_models(P, EPS), gate_models(P, EPS, 1.0)
    n = GATE_ROWS_PER_COLUMN * P * (plain + with_margin) / 2
    m = choose_m(n, P, EPS, DELTA)
    assert m == int(n / (GATE_ROWS_PER_COLUMN * P)) and plain < m < with_margin
    big = choose_m(1e6, 21, 0.95, DELTA)
    assert big == int(1e6 / (GATE_ROWS_PER_COLUMN * 21)) > gate_models(21, 0.95, 1.0)


def test_kernel_dispatch_assumes_the_largest_groups():
    """The numpy group OLS is slow on large groups; its public work estimate uses the same
    rows per column as choose_m."""
    from dpstats._kernels.tukey_ols import GROUP_ROWS_PER_COLUMN, uses_kernel
    assert GROUP_ROWS_PER_COLUMN == ROWS_PER_COLUMN
    assert uses_kernel(choose_m(1e6, 21, 1.04, DELTA), 21)     # 1e6 x 20: the kernel


def test_monotone_in_the_released_count():
    ms = [choose_m(n, P, EPS, DELTA) for n in np.geomspace(100, 1e9, 60)]
    assert all(a <= b for a, b in zip(ms, ms[1:], strict=False))


def _rare_binary_frame(n=40_000, seed=3):
    rng = np.random.default_rng(seed)
    x0 = np.exp(rng.standard_normal(n))                      # right-skewed
    x1 = (rng.random(n) < 0.02).astype(float)                # rare 0/1 column
    z0 = np.clip((x0 - x0.mean()) / x0.std(), -4, 4)
    e = rng.standard_normal(n) * np.exp(0.5 * z0)            # heteroscedastic in x0
    return pd.DataFrame({"x0": x0, "x1": x1, "y": 1 + 0.5 * x0 + 3 * x1 + e})


@pytest.mark.filterwarnings("ignore::dpstats.NotPrivateWarning")
def test_rare_binary_effect_kept_and_the_old_small_groups_caught():
    """Groups of about 3 rows per column rarely see the 2% column, so their models vote ~0 for
    its effect (3 here); groups of up to 30 rows per column keep it. The old rule
    (m = n / (3 p)) is the broken variant the same check catches."""
    df = _rare_binary_frame()
    ols = dp.dp_lm("y ~ x0 + x1", df, eps=1.0, method="ols").params["x1"]
    new = dp.dp_lm("y ~ x0 + x1", df, eps=5.0, method="tukey", random_state=0)
    old = dp.dp_lm("y ~ x0 + x1", df, eps=5.0, method="tukey", m=len(df) // 9, random_state=0)
    assert new.released and old.released
    assert abs(new.params["x1"] - ols) < 0.5
    assert abs(old.params["x1"] - ols) > 2.0
