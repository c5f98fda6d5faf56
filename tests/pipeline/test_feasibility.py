"""Feasibility before spending (dpstats.pipeline.feasibility, dpstats.rows_needed): the public
row requirement, and the stop right after the private row count when no method can fit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ValidationError
from dpstats.pipeline.feasibility import count_needed, rows_needed
from dpstats.withheld import EXPLANATIONS, Withheld, explain

EPSS = [0.1, 0.3, 1.0, 3.0, 10.0]
PS = [1, 2, 3, 5, 8, 13, 21, 41]


def _frame(n, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = 1.0 + X[:, 0] + rng.standard_normal(n)
    return df


@pytest.mark.parametrize("method", ["auto", "tukey", "bas", "adassp"])
def test_rows_needed_monotone_in_eps_and_p(method):
    grid = [[rows_needed(p, eps, 1e-5, method) for eps in EPSS] for p in PS]
    for row in grid:                                  # more eps, fewer rows
        assert row == sorted(row, reverse=True)
    for col in zip(*grid, strict=True):               # more columns, more rows
        assert list(col) == sorted(col)
    assert all(v >= 1 for row in grid for v in row)


def test_rows_needed_auto_is_the_smaller_and_public():
    for p in (2, 10, 30):
        auto = dp.rows_needed(p, 1.0)
        assert auto <= dp.rows_needed(p, 1.0, method="tukey")
        assert auto <= dp.rows_needed(p, 1.0, method="bas")
    assert dp.rows_needed(5, 1.0) == dp.rows_needed(5, 1.0)        # deterministic
    assert "rows_needed" in dp.__all__


def test_rows_needed_adds_the_count_margin():
    eps_n = 1.0 * 0.05
    margin = math.log(1 / (2 * 1e-4)) / eps_n
    assert rows_needed(4, 1.0, 1e-5, "tukey") == math.ceil(count_needed(4, 0.95, 1e-5, "tukey")
                                                           + margin)


@pytest.mark.parametrize(("args", "match"), [
    ((0, 1.0), "p must be a positive integer"), ((2.5, 1.0), "p must be a positive integer"),
    ((3, -1.0), "eps"), ((3, 1.0, 1e-5, "magic"), "method must be one of")])
def test_rows_needed_validation(args, match):
    with pytest.raises(ValidationError, match=match):
        rows_needed(*args)


def test_feasibility_stop_charges_only_the_private_count():
    b = dp.Budget(5.0, 1e-4)
    fit = dp.dp_lm("y ~ .", _frame(60), eps=1.0, budget=b, random_state=0)
    assert not fit.released and fit.unreleased_reason == "too_few_rows"
    assert fit.params.isna().all() and fit.ptr is None and fit.selected == []
    assert [c.stage for c in fit.charges] == ["private n"]
    assert fit.spent == (0.05, 0.0)
    assert b.spent == (0.05, 0.0)


def test_feasibility_stop_says_how_many_rows():
    fit = dp.dp_lm("y ~ .", _frame(60), eps=1.0, random_state=0)
    need = rows_needed(2, 1.0 / 0.95 * 0.9, 1e-5)   # smallest model: intercept + 1 term
    note = next(n for n in fit.notes if n.startswith("Too few rows"))
    assert note == ("Too few rows: the private row count is below what any method needs for 2 "
                    "columns at regression eps 0.9; about "
                    f"{fit_rows(fit):,} rows of data are needed (dpstats.rows_needed). The fit "
                    "stopped after the row count; nothing else was charged.")
    assert abs(fit_rows(fit) - need) <= 0.2 * need
    text = " ".join(fit.summary().as_text().split())
    assert "Coefficients are not released: the private row count is below" in text
    assert "The budget is still spent" not in text
    assert "-" not in fit_rows_text(fit)


def fit_rows(fit):
    note = next(n for n in fit.notes if n.startswith("Too few rows"))
    return int(note.split("about ")[1].split(" rows")[0].replace(",", ""))


def fit_rows_text(fit):
    return fit.summary().as_text().split("n (private lower bound):")[1].split("\n")[0]


def test_explicit_formula_infeasible_uses_the_whole_model():
    fit = dp.dp_lm("y ~ x0 + x1 + x2 + x3 + x4 + x5", _frame(200), eps=0.5, random_state=1)
    assert fit.unreleased_reason == "too_few_rows"
    assert "7 columns at regression eps 0.475" in fit.notes[0]


def test_never_a_negative_row_count_shown():
    fit = dp.dp_lm("y ~ .", _frame(3), eps=0.2, random_state=2)
    assert fit.n_noisy < 0                       # the released value stays as released
    text = fit.summary().as_text() + fit.summary().as_html() + repr(fit)
    assert "< 1 (noisy)" in text
    for line in text.splitlines():
        if "rows" in line or "n (private" in line:
            assert " -" not in line.replace(" - ", " ")


def test_withheld_code_explained():
    assert Withheld("too_few_rows") is Withheld.TOO_FEW_ROWS
    assert EXPLANATIONS[Withheld.TOO_FEW_ROWS].short.startswith("too few rows for any method")
    assert explain("too_few_rows").startswith("the private row count is below")


def test_feasible_fit_is_not_stopped():
    fit = dp.dp_lm("y ~ .", _frame(5_000), eps=1.0, random_state=3)
    assert fit.released and fit.unreleased_reason is None
