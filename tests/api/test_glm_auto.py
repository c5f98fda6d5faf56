"""dp_glm's default ``method="auto"``: the withheld fit at small n (message pinned), what the
result says about the choice, and accuracy against the majority class and non-private
logistic regression on seeded synthetic data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from dpstats.api.glm import dp_glm
from dpstats.errors import ValidationError
from dpstats.estimators.glm_auto import choose, objpert_rows, rows_needed


def _frame(n, seed, b0=0.3, slopes=(1.5, -1.0)):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(len(slopes))})
    eta = b0 + sum(b * df[f"x{j}"] for j, b in enumerate(slopes))
    df["y"] = rng.uniform(size=n) < 1 / (1 + np.exp(-eta))
    return df


def test_small_n_is_withheld_with_the_rows_needed():
    fit = dp_glm("y ~ x0 + x1", _frame(50, 0), eps=1.0, random_state=0)
    assert not fit.released and fit.unreleased_reason == "too_few_rows"
    assert fit.method == "auto" and fit.auto_choice is None
    assert fit.params.isna().all()
    assert fit.spent == pytest.approx((0.05, 0.0))           # only the private row count
    need = rows_needed(3, 0.95, 1e-5)
    assert fit.notes[-1] == (
        "method='auto' withheld the fit: the private row count (0, a lower bound) is below "
        f"the {need:,} rows a private logistic regression needs at eps = 0.95 (rule from "
        "simulation: below it the private fit does not beat predicting the majority class).")
    text = str(fit.summary())
    assert "Coefficients are not released: the private row count is below what any" in text
    assert "auto (chosen by method='auto')" in text
    assert "scale" not in fit.notes[-1]                     # no blame on the data's scale


@pytest.mark.parametrize("n,chosen,words", [(2_000, "outpert", "output perturbation"),
                                             (20_000, "objpert", "objective perturbation")])
def test_summary_says_what_was_chosen_and_why(n, chosen, words):
    fit = dp_glm("y ~ x0 + x1", _frame(n, 1), eps=1.0, random_state=1)
    text = " ".join(str(fit.summary()).split())
    assert fit.released and f"{chosen} (chosen by method='auto')" in text
    assert f"method='auto' chose {words} ('{chosen}')" in text


def test_switch_to_objpert_derived_on_coefficient_error():
    """benchmarks/glm_auto_switch.py: at 5,000 rows, 5 predictors and eps 1 (design note 75's
    cell) objective perturbation's coefficients were far closer (median RMSE 0.068 against
    0.236); the accuracy-derived switch (1500 / mu, 5,864 rows) ran output perturbation
    there. More columns need more rows."""
    fit = dp_glm("y ~ .", _frame(5_000, 3, slopes=(0.6, -0.5, 0.4, -0.3, 0.2)), eps=1.0,
                 select=None, random_state=3)
    assert fit.released and fit.method == "objpert"
    assert fit.n_noisy < 1500 / 0.2558
    assert choose(4_000.0, 6, 0.95, 1e-5)[0] == "objpert"
    assert choose(4_000.0, 11, 0.95, 1e-5)[0] == "outpert"
    assert objpert_rows(2, 0.95, 1e-5) < objpert_rows(6, 0.95, 1e-5) < objpert_rows(
        11, 0.95, 1e-5)


def test_auto_takes_no_method_options():
    with pytest.raises(ValidationError, match="not an option of method='auto'"):
        dp_glm("y ~ x0", _frame(100, 0), eps=1.0, kappa=2.0)


def _test_acc(fit, test):
    return fit.score(test)


@pytest.mark.parametrize("seed", [0, 1])
def test_rich_data_within_003_of_nonprivate_logistic(seed):
    train, test = _frame(10_000, 10 + seed), _frame(20_000, 20 + seed)
    fit = dp_glm("y ~ x0 + x1", train, eps=1.0, random_state=seed)
    X = sm.add_constant(train[["x0", "x1"]])
    beta = sm.Logit(train.y.astype(float), X).fit(disp=0).params.to_numpy()
    ref = float(np.mean((sm.add_constant(test[["x0", "x1"]]) @ beta >= 0) == test.y))
    assert fit.score(test) >= ref - 0.03


def test_no_signal_not_worse_than_majority():
    """Labels independent of the features (75% ones): within 0.01 of the majority class."""
    gaps = []
    for seed in range(5):
        train = _frame(3000, 30 + seed, b0=1.1, slopes=(0.0, 0.0, 0.0))
        test = _frame(10_000, 40 + seed, b0=1.1, slopes=(0.0, 0.0, 0.0))
        fit = dp_glm("y ~ .", train, eps=1.0, random_state=seed)
        gaps.append(fit.score(test) - max(test.y.mean(), 1 - test.y.mean()))
    assert np.median(gaps) >= -0.01


def test_small_n_withholds_before_selection_spends():
    """With more candidate terms than k the withhold comes before the selection stage: only
    the row count is charged, and the note still names the rows needed."""
    df = _frame(60, 2, slopes=(1.0, -1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0))
    fit = dp_glm("y ~ .", df, eps=1.0, random_state=2)
    assert not fit.released and fit.unreleased_reason == "too_few_rows"
    assert fit.spent == pytest.approx((0.05, 0.0)) and fit.selected == []
    assert "rows a private logistic regression needs" in fit.notes[-1]
