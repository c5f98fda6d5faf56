"""The selection stage: which selector runs (dpstats.pipeline.select), and dp_lm with select=:
selected terms, zeros for the rest, budget split and accounting, skipped selection, validation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.api.lm import DEFAULT_SPLIT
from dpstats.errors import DPStatsError, UnknownMethodError, ValidationError
from dpstats.mechanisms.accountant import Ledger
from dpstats.pipeline.select import (
    AUTO_SNR,
    SELECT_CHOICES,
    auto_selector,
    candidate_columns,
    check_groups,
    needs_row_count,
    resolve_selector,
    run_selection,
)
from dpstats.selection import SELECTORS

TRUE = ["x2", "x7", "x10"]          # in order of decreasing strength
NAMES = [f"x{i}" for i in range(12)]


def _frame(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.standard_normal((n, 12)), columns=NAMES)
    df["y"] = 5.0 + 3.0 * df.x2 - 2.0 * df.x7 + 1.5 * df.x10 + rng.standard_normal(n)
    return df


@pytest.fixture(scope="module")
def frame():
    return _frame()


# ---- resolve_selector / auto_selector ---------------------------------------------------------

def test_select_choices():
    assert SELECT_CHOICES == ("auto", None, *SELECTORS)
    assert set(SELECTORS) >= {"kendall", "sublasso"}


@pytest.mark.parametrize("select", ["auto", *SELECTORS])
def test_resolve_selector_runs_when_there_are_more_candidates_than_k(select):
    assert resolve_selector(select, 6, 5) == (select, None)
    assert resolve_selector(select, 100, 5) == (select, None)


def test_resolve_selector_none_never_runs():
    assert resolve_selector(None, 100, 5) == (None, None)
    assert resolve_selector(None, 2, 5) == (None, None)


@pytest.mark.parametrize("n_candidates", [0, 1, 4, 5])
def test_auto_skips_silently_with_at_most_k_candidates(n_candidates):
    assert resolve_selector("auto", n_candidates, 5) == (None, None)


@pytest.mark.parametrize("select", SELECTORS)
@pytest.mark.parametrize("n_candidates", [1, 5])
def test_named_selector_with_at_most_k_candidates_is_skipped_with_a_note(select, n_candidates):
    sel, note = resolve_selector(select, n_candidates, 5)
    assert sel is None
    assert "skipped" in note and repr(select) in note and "k=5" in note
    assert f"{n_candidates} candidate" in note and "regression" in note


def test_auto_selector_boundary_of_auto_snr():
    # votes = n_hat / (candidates + 1); SubLasso iff votes >= AUTO_SNR * 2k / eps_sel
    k, eps_sel, cands = 5, 0.5, 9
    threshold = AUTO_SNR * 2.0 * k / eps_sel
    assert threshold == 80.0 and AUTO_SNR == 4.0
    at = threshold * (cands + 1)
    assert auto_selector(at, cands, k, eps_sel) == "sublasso"
    assert auto_selector(np.nextafter(at, 0.0), cands, k, eps_sel) == "kendall"
    assert auto_selector(at * 10, cands, k, eps_sel) == "sublasso"
    assert auto_selector(at / 10, cands, k, eps_sel) == "kendall"
    # more budget or smaller k lowers the bar; more candidates raises it
    assert auto_selector(at * 0.6, cands, k, eps_sel * 2) == "sublasso"
    assert auto_selector(at * 0.6, cands, 2, eps_sel) == "sublasso"
    assert auto_selector(at, 2 * cands, k, eps_sel) == "kendall"


def test_auto_selector_docstring_cases():
    assert auto_selector(48_000.0, 9, 5, 0.055) == "sublasso"
    assert auto_selector(12_000.0, 40, 5, 0.055) == "kendall"
    assert auto_selector(-50.0, 9, 5, 0.055) == "kendall"     # a negative noisy count is legal


def test_needs_row_count():
    assert needs_row_count("auto", 7)
    assert needs_row_count("sublasso", "auto") and needs_row_count("sublasso", "sqrt")
    assert not needs_row_count("sublasso", 40)
    assert not needs_row_count("kendall", "auto") and not needs_row_count(None, "auto")


def test_candidate_columns_exclude_only_the_intercept():
    cols = ["Intercept", "a", "b"]
    assert candidate_columns(cols, True) == [1, 2]
    assert candidate_columns(cols, False) == [0, 1, 2]
    assert candidate_columns(["a", "Intercept", "b"], True) == [0, 2]


@pytest.mark.parametrize("groups", ["auto", "sqrt", 1, 50])
def test_check_groups_accepts(groups):
    assert check_groups(groups) == groups


@pytest.mark.parametrize("groups", [0, -1, True, 2.5, "many", None, np.nan])
def test_check_groups_rejects(groups):
    with pytest.raises(ValidationError, match="groups"):
        check_groups(groups)


def test_run_selection_maps_to_design_columns_and_never_picks_the_intercept():
    df = _frame(3000, seed=1)
    X = np.column_stack([np.ones(len(df)), df[NAMES].to_numpy()])
    cands = list(range(1, 13))
    led = Ledger()
    sel = run_selection("kendall", X, df.y.to_numpy(), cands, k=3, eps=1e6,
                        rng=np.random.default_rng(0), ledger=led)
    assert sel.indices == (3, 8, 11)                     # design columns of x2, x7, x10
    assert sel.method == "kendall" and sel.eps == 1e6 and len(led) == 3


# ---- dp_lm with selection -------------------------------------------------------------------

def _check_selected_fit(fit, df, eps, delta, selector):
    assert fit.selector == selector and fit.k == 3
    assert len(fit.selected) == 3 and sorted(fit.selected) == sorted(TRUE)
    assert fit.selection.selected == tuple(fit.selected) and fit.selection.method == selector
    assert fit.released
    # unselected columns are exactly zero; the intercept is kept and estimated
    others = [c for c in NAMES if c not in fit.selected]
    assert (fit.params[others] == 0.0).all()
    assert (fit.params[fit.selected] != 0.0).all()
    assert list(fit.params.index) == ["Intercept", *NAMES]
    np.testing.assert_allclose(fit.params[["Intercept", *TRUE]], [5.0, 3.0, -2.0, 1.5],
                               atol=0.2)
    # the summary lists the selected terms in selection order
    text = str(fit.summary())
    assert "Selected terms" in text
    assert ", ".join(f"{i}. {t}" for i, t in enumerate(fit.selected, 1)) in text
    # ledger: the selection stage costs exactly its share; the whole fit costs eps, delta
    led = fit.ledger
    assert "selection" in set(led.stage)
    assert led.loc[led.stage == "selection", "eps"].sum() == pytest.approx(
        fit.split["selection"], rel=1e-12)
    assert fit.split["selection"] == pytest.approx(DEFAULT_SPLIT["selection"] * eps, rel=1e-12)
    assert (led.loc[led.stage == "selection", "delta"] == 0).all()
    assert math.fsum(fit.split.values()) == pytest.approx(eps, rel=1e-12)
    assert fit.spent[0] == pytest.approx(eps, rel=1e-12)
    assert fit.spent[1] == pytest.approx(delta, rel=1e-12)
    for stage in ("private n", "regression"):
        key = "n" if stage == "private n" else stage
        # the regression budget also holds the fit's standard errors (stage "inference")
        stages = [stage] if stage == "private n" else [stage, "inference"]
        assert led.loc[led.stage.isin(stages), "eps"].sum() == pytest.approx(fit.split[key],
                                                                              rel=1e-12)


def test_kendall_selects_the_signal_in_order(frame):
    budget = dp.Budget(5.0, 1e-5)
    fit = dp.dp_lm("y ~ .", frame, eps=5.0, select="kendall", k=3, budget=budget,
                   random_state=1)
    _check_selected_fit(fit, frame, 5.0, 1e-5, "kendall")
    assert fit.selected == TRUE                           # strongest first
    led = fit.ledger
    sel = led[led.stage == "selection"]
    assert list(sel.mechanism) == ["exponential"] * 3
    assert sel.eps.tolist() == pytest.approx([0.25 / 3] * 3, rel=1e-12)
    assert budget.spent == pytest.approx((5.0, 1e-5), rel=1e-12)


@pytest.mark.parametrize("groups", ["auto", "sqrt", 300])
def test_sublasso_selects_the_signal(frame, groups):
    fit = dp.dp_lm("y ~ .", frame, eps=5.0, select="sublasso", k=3, groups=groups,
                   random_state=2)
    _check_selected_fit(fit, frame, 5.0, 1e-5, "sublasso")
    sel = fit.ledger[fit.ledger.stage == "selection"]
    assert list(sel.mechanism) == ["gumbel top-k"] and sel.eps.iloc[0] == pytest.approx(0.25)


def test_auto_picks_sublasso_with_many_rows_per_group(frame):
    fit = dp.dp_lm("y ~ .", frame, eps=5.0, select="auto", k=3, random_state=3)
    assert fit.selector == auto_selector(fit.n_noisy, 12, 3, fit.split["selection"])
    _check_selected_fit(fit, frame, 5.0, 1e-5, "sublasso")


def test_auto_picks_kendall_when_votes_cannot_beat_the_noise(frame):
    fit = dp.dp_lm("y ~ .", frame, eps=0.2, select="auto", k=3, random_state=3)
    assert fit.selector == "kendall" == auto_selector(fit.n_noisy, 12, 3, fit.split["selection"])
    assert len(fit.selected) == 3 and fit.spent == pytest.approx((0.2, 1e-5), rel=1e-12)
    assert fit.ledger.loc[fit.ledger.stage == "selection", "eps"].sum() == pytest.approx(0.01)


def test_custom_split_sets_the_selection_share(frame):
    split = {"n": 0.1, "selection": 0.2, "regression": 0.7}
    fit = dp.dp_lm("y ~ .", frame, eps=2.0, select="kendall", k=3, split=split,
                   random_state=4)
    led = fit.ledger
    assert led.loc[led.stage == "selection", "eps"].sum() == pytest.approx(0.4, rel=1e-12)
    assert led.loc[led.stage == "private n", "eps"].sum() == pytest.approx(0.2, rel=1e-12)
    assert fit.spent == pytest.approx((2.0, 1e-5), rel=1e-12)


# ---- budget: unused shares go to the regression -----------------------------------------------

@pytest.mark.parametrize(("kwargs", "n_share", "sel_share"), [
    ({"select": None}, 0.05, 0.0),                              # no selection
    ({"select": None, "m": 500}, 0.0, 0.0),                     # nothing but the regression
    ({"select": "kendall", "m": 500}, 0.0, 0.05),               # Kendall needs no row count
    ({"select": "sublasso", "m": 500, "groups": 300}, 0.0, 0.05),
    ({"select": "sublasso", "m": 500, "groups": "auto"}, 0.05, 0.05),   # groups need n_hat
    ({"select": "auto", "m": 500}, 0.05, 0.05),                 # the auto rule reads n_hat
])
def test_unused_shares_go_to_the_regression(frame, kwargs, n_share, sel_share):
    eps = 1.0
    budget = dp.Budget(eps, 1e-5)
    fit = dp.dp_lm("y ~ .", frame, eps=eps, k=3, budget=budget, method="tukey", random_state=5,
                   **kwargs)
    assert fit.split == pytest.approx({"n": n_share * eps, "selection": sel_share * eps,
                                       "regression": (1 - n_share - sel_share) * eps})
    led = fit.ledger
    for stage, key in (("private n", "n"), ("selection", "selection"),
                       ("regression", "regression")):
        assert led.loc[led.stage == stage, "eps"].sum() == pytest.approx(fit.split[key],
                                                                         rel=1e-12, abs=0)
    assert ("selection" in set(led.stage)) == (sel_share > 0)
    assert ("private n" in set(led.stage)) == (n_share > 0)
    assert (fit.n_noisy is not None) == (n_share > 0)
    assert fit.spent == pytest.approx((eps, 1e-5), rel=1e-12)
    assert budget.spent == pytest.approx((eps, 1e-5), rel=1e-12)
    if kwargs["select"] is None:
        assert fit.selected == [] and fit.selection is None and fit.k is None
        assert "Selected terms" not in str(fit.summary())


def test_named_selector_skipped_when_formula_has_at_most_k_candidates(frame):
    fit = dp.dp_lm("y ~ x2 + x7 + x10", frame, eps=1.0, select="kendall", k=3, random_state=6)
    assert fit.selected == [] and fit.selection is None and fit.selector is None
    assert any("skipped" in n and "'kendall'" in n for n in fit.notes)
    assert "skipped" in str(fit.summary())
    assert "selection" not in set(fit.ledger.stage)
    assert fit.split["selection"] == 0.0
    assert fit.split["regression"] == pytest.approx(0.95)
    assert fit.spent == pytest.approx((1.0, 1e-5), rel=1e-12)
    assert (fit.params != 0).all()


def test_auto_skips_without_a_note_when_formula_has_at_most_k_candidates(frame):
    fit = dp.dp_lm("y ~ x2 + x7 + x10", frame, eps=1.0, select="auto", k=5, random_state=6)
    assert fit.selected == [] and fit.selector is None
    assert not any("skipped" in n for n in fit.notes)
    assert "selection" not in set(fit.ledger.stage)
    assert fit.spent == pytest.approx((1.0, 1e-5), rel=1e-12)


# ---- validation: before any charge ------------------------------------------------------------

@pytest.mark.parametrize(("override", "exc", "needle"), [
    ({"select": "bogus"}, UnknownMethodError, "select"),
    ({"select": "Kendall"}, UnknownMethodError, "select"),
    ({"select": ""}, UnknownMethodError, "select"),
    ({"groups": 0}, ValidationError, "groups"),
    ({"groups": -2}, ValidationError, "groups"),
    ({"groups": "bogus"}, ValidationError, "groups"),
    ({"groups": True}, ValidationError, "groups"),
    ({"groups": 2.5}, ValidationError, "groups"),
    ({"k": 0}, ValidationError, "k"),
    ({"k": 2.5}, ValidationError, "k"),
    ({"select": "sublasso", "groups": 0}, ValidationError, "groups"),
])
def test_bad_selection_arguments_raise_before_any_charge(frame, override, exc, needle):
    budget = dp.Budget(10.0, 1e-3)
    kwargs = {"eps": 1.0, "select": "kendall", "k": 3, "budget": budget}
    kwargs.update(override)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=needle) as info:
            dp.dp_lm("y ~ .", frame, **kwargs)
    assert isinstance(info.value, DPStatsError)
    assert budget.spent == (0.0, 0.0) and len(budget.ledger) == 0


def test_numpy_integer_groups_are_accepted_like_python_ints(frame):
    fit = dp.dp_lm("y ~ .", frame, eps=1.0, select="sublasso", k=3, groups=np.int64(300),
                   m=500, random_state=7)
    assert fit.selection is not None and len(fit.selected) == 3
