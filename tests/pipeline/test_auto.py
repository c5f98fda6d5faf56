"""method="auto" and the automatic number of terms of dp_lm (dpstats.pipeline.auto): the rule's
choices at chosen points, that the choice reads only the released row count and public values,
explicit formulas fitted as written, `y ~ .` selected, and the summary's sentence."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
import dpstats.pipeline.auto as auto_mod
import dpstats.pipeline.run as run_mod
from dpstats.errors import ValidationError
from dpstats.pipeline import budget as budget_mod
from dpstats.pipeline.auto import (
    choose_k,
    choose_method,
    decide,
    formula_selects,
    ptr_pass_probability,
)
from dpstats.pipeline.feasibility import (
    BAS_SUPPORT,
    BAS_TERM_SUPPORT,
    TUKEY_PREFERRED,
    bounded_count,
    count_needed,
    term_count,
    tukey_count,
    tukey_preferred_count,
)
from dpstats.pipeline.select import selection_mode

DELTA = 1e-5


def _frame(n, p=6, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * scale
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = 1.0 + X[:, :3] @ np.array([2.0, -1.0, 0.5]) + rng.standard_normal(n)
    return df


# ---- the rule at chosen points -----------------------------------------------------------------

def test_tukey_exactly_from_its_preferred_count():
    need = tukey_preferred_count(7, 0.95, DELTA)
    assert need == math.ceil(TUKEY_PREFERRED * tukey_count(7, 0.95, DELTA))
    assert choose_method(need, 7, 0.95, DELTA) == "tukey"
    assert choose_method(need - 1, 7, 0.95, DELTA) == "bas"
    # PTR-safe but below the preferred count: BAS (more accurate there in simulation)
    assert choose_method(tukey_count(7, 0.95, DELTA), 7, 0.95, DELTA) == "bas"
    assert choose_method(bounded_count(7, 0.95, DELTA) - 1, 7, 0.95, DELTA) is None


@pytest.mark.parametrize(("n_hat", "p", "eps", "method"), [
    (1e6, 21, 1.0, "tukey"), (20_000, 9, 1.0, "bas"), (80_000, 9, 1.0, "bas"),
    (250_000, 9, 1.0, "tukey"), (24_000, 4, 1.04, "bas"),
    (4_000, 13, 1.1, "bas"),
    (50_000, 41, 0.3, "bas"), (3_000, 2, 0.3, "bas"), (3_000, 2, 0.1, None),
    (300, 2, 10.0, "bas"), (700, 2, 10.0, "bas"), (2_500, 2, 10.0, "tukey")])
def test_choice_at_points(n_hat, p, eps, method):
    assert choose_method(n_hat, p, eps, DELTA) == method


def test_pass_probability_is_monotone_and_matches_the_choice():
    probs = [ptr_pass_probability(n, 11, 1.0, DELTA) for n in (1e3, 1e4, 3e4, 1e5, 1e6)]
    assert probs == sorted(probs) and probs[0] < 0.01 and probs[-1] > 0.99
    need = tukey_count(11, 1.0, DELTA)
    assert ptr_pass_probability(need, 11, 1.0, DELTA) >= 0.8
    assert ptr_pass_probability(need / 2, 11, 1.0, DELTA) < 0.1


def test_k_supported_by_the_rows():
    k = choose_k(30_000, 40, 1, 1.0, DELTA, "tukey")
    assert 1 <= k < 40
    assert term_count(k + 1, 1.0, DELTA, "tukey") <= 30_000 < term_count(k + 2, 1.0, DELTA,
                                                                          "tukey")
    assert choose_k(1e7, 40, 1, 1.0, DELTA, "tukey") == 40
    # bounded methods: a selected model gets BAS_TERM_SUPPORT rows x eps per column
    assert choose_k(6_000, 40, 1, 1.0, DELTA, "bas") == int(6_000 / BAS_TERM_SUPPORT) - 1
    assert choose_k(60_000, 80, 1, 0.5, DELTA, "bas") == int(60_000 * 0.5 / BAS_TERM_SUPPORT) - 1
    assert choose_k(500, 40, 1, 1.0, DELTA, "bas") == 1       # never below one term


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_select_only_below_bas_support(eps):
    """`y ~ .` keeps every term from n_hat * eps_reg / p = BAS_SUPPORT (100) on, and selects
    below it; the boundary moves with eps and p exactly as the ratio says."""
    p_full = 61
    at = math.ceil(BAS_SUPPORT * p_full / eps)
    assert at >= bounded_count(p_full, eps, DELTA)
    kw = dict(p_full=p_full, n_candidates=60, intercept=1, eps_all=eps, eps_sel=eps / 19,
              eps_n=eps / 19, delta=DELTA, method="auto", selection="auto", k=None)
    assert decide(n_hat=at, **kw).k is None
    below = decide(n_hat=at - 1, **kw)
    assert below.k is not None and below.k < 60
    assert below.k == choose_k(at - 1, 60, 1, eps - eps / 19, DELTA, "auto")


def test_decide_no_selection_when_every_term_fits():
    c = decide(n_hat=1e6, p_full=21, n_candidates=20, intercept=1, eps_all=1.0, eps_sel=0.05,
               eps_n=0.05, delta=DELTA, method="auto", selection="auto", k=None)
    assert (c.method, c.k, c.p) == ("tukey", None, 21)


def test_decide_selects_when_the_rows_do_not_support_every_term():
    c = decide(n_hat=3_000, p_full=41, n_candidates=40, intercept=1, eps_all=1.0, eps_sel=0.05,
               eps_n=0.05, delta=DELTA, method="auto", selection="auto", k=None)
    assert c.k is not None and 1 <= c.k < 40 and c.p == c.k + 1
    assert c.method in ("tukey", "bas")
    assert 3_000 >= count_needed(c.p, 0.95, DELTA, c.method)


def test_decide_explicit_k_wins_and_explicit_method_kept():
    c = decide(n_hat=1e6, p_full=21, n_candidates=20, intercept=1, eps_all=1.0, eps_sel=0.05,
               eps_n=0.05, delta=DELTA, method="auto", selection="auto", k=3)
    assert (c.k, c.p) == (3, 4)
    c = decide(n_hat=1e6, p_full=21, n_candidates=20, intercept=1, eps_all=1.0, eps_sel=0.05,
               eps_n=0.05, delta=DELTA, method="adassp", selection=None, k=None)
    assert (c.method, c.k, c.reason) == ("adassp", None, None)


def test_formula_text_decides_selection():
    assert formula_selects("y ~ .") and formula_selects("y ~ . - x1")
    assert not formula_selects("y ~ a + b + C(g)")
    assert not formula_selects("y ~ np.log(a) + I(b * 1.5)")
    assert not formula_selects("y ~ `a.b` + c")
    assert selection_mode("auto", False, None) is None
    assert selection_mode("auto", True, None) == "auto"
    assert selection_mode("kendall", False, None) == "kendall"
    assert selection_mode(None, True, None) is None


# ---- dp_lm ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big():
    return _frame(60_000, p=12)


def test_explicit_formula_is_fitted_as_written(big):
    fit = dp.dp_lm("y ~ x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7", big, eps=1.0, random_state=1)
    assert fit.selector is None and fit.selected == [] and fit.k is None
    assert (fit.params != 0).all()


def test_explicit_selector_on_an_explicit_formula_selects(big):
    fit = dp.dp_lm("y ~ x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7", big, eps=1.0, k=3,
                   select="kendall", random_state=1)
    assert fit.selector == "kendall" and len(fit.selected) == 3


def test_dot_selects_when_rows_are_short():
    df = _frame(8_000, p=30, seed=2)
    fit = dp.dp_lm("y ~ .", df, eps=0.3, random_state=3)
    assert fit.n_noisy * 0.3 * 0.95 / 31 < BAS_SUPPORT
    assert fit.selector in ("kendall", "sublasso")
    assert 1 <= fit.k < 30 and len(fit.selected) == fit.k
    assert fit.n_noisy >= count_needed(fit.k + 1, 0.3 * 0.9, DELTA, fit.method)
    assert fit.n_noisy >= term_count(fit.k + 1, 0.3 * 0.9, DELTA, "auto") or fit.k == 1
    assert fit.n_noisy < term_count(fit.k + 2, 0.3 * 0.9, DELTA, "auto")


def test_dot_fits_every_term_when_the_rows_support_them(big):
    fit = dp.dp_lm("y ~ .", big, eps=4.0, random_state=4)
    assert fit.selector is None and fit.method == "tukey" and fit.released
    assert "PTR test passes with probability" in fit.summary().as_text().replace("\n", " ")


def test_method_choice_pinned(big):
    fit = dp.dp_lm("y ~ .", big, eps=4.0, random_state=4)
    text = " ".join(fit.summary().as_text().split())
    assert fit.method_choice == (
        f"with n_hat \u2248 {_round2(fit.n_noisy)} and 13 columns at regression eps 3.8, "
        "Tukey's PTR test passes with probability > 0.99")
    assert f"Method: tukey (auto: {fit.method_choice})" in text
    assert "auto: with n_hat" in fit.summary().as_html()


def _round2(n):
    digits = max(0, len(str(int(n))) - 2)
    return f"{round(n, -digits):,.0f}"


def test_bas_chosen_with_reason():
    df = _frame(4_000, p=12, seed=5)
    fit = dp.dp_lm("y ~ x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11", df,
                   eps=1.1, random_state=6)
    assert fit.method == "bas" and fit.released
    assert fit.method_choice.startswith("with n_hat \u2248 ")
    eps_reg = 1.1 - 1.1 * 0.05
    assert (f"13 columns at regression eps {eps_reg:.3g}, Tukey's PTR test would pass with "
            "probability") in fit.method_choice


def test_explicit_method_has_no_choice(big):
    fit = dp.dp_lm("y ~ x0 + x1", big, eps=1.0, method="tukey", random_state=0)
    assert fit.method_choice is None and fit.method == "tukey"
    assert "Method: tukey\n" in fit.summary().as_text() or "Method: tukey " in \
        " ".join(fit.summary().as_text().split())


def test_auto_refuses_method_options_and_paper_accounting(big):
    with pytest.raises(ValidationError, match="need an explicit method"):
        dp.dp_lm("y ~ x0", big, eps=1.0, T=5)
    with pytest.raises(ValidationError, match="method='tukey'"):
        dp.dp_lm("y ~ x0", big, eps=1.0, accounting="paper")


# ---- the choice reads the released count, not the data ------------------------------------------

def _fixed_count(monkeypatch, value):
    def fake(n, eps, rng, ledger=None, **kw):
        ledger.charge("laplace", eps, 0.0, stage="private n", detail="row count (test stub)")
        return float(value)
    monkeypatch.setattr(budget_mod, "private_count", fake)


def _decision(fit):
    return fit.method, fit.k, fit.selector, fit.method_choice, tuple(fit.params.index)


@pytest.mark.parametrize("n_hat", [3_000.0, 40_000.0, 2_000_000.0])
def test_same_released_count_same_choice(monkeypatch, n_hat):
    """Two data sets with the same schema but 10x different sizes and scales get the same
    method and k once the released count is the same."""
    _fixed_count(monkeypatch, n_hat)
    a = dp.dp_lm("y ~ .", _frame(2_500, p=15, seed=1), eps=1.0, random_state=0)
    b = dp.dp_lm("y ~ .", _frame(25_000, p=15, seed=2, scale=50.0), eps=1.0, random_state=0)
    assert _decision(a) == _decision(b)


def test_broken_variant_reading_the_true_count_is_caught(monkeypatch):
    """The same check catches a decision that reads the true row count."""
    _fixed_count(monkeypatch, 40_000.0)
    real = run_mod._decide

    def leaky(request, design, candidates, selector, plan):
        from dataclasses import replace
        return real(request, design, candidates, selector,
                    replace(plan, n_noisy=float(design.X.shape[0])))

    monkeypatch.setattr(run_mod, "_decide", leaky)
    a = dp.dp_lm("y ~ .", _frame(2_500, p=15, seed=1), eps=1.0, random_state=0)
    b = dp.dp_lm("y ~ .", _frame(25_000, p=15, seed=2, scale=50.0), eps=1.0, random_state=0)
    assert _decision(a) != _decision(b)


def test_categorical_terms_choose_like_numeric_ones(monkeypatch):
    """Since Tukey's identified votes, a factor's dummies do not send a design to BAS: the
    choice is the one a numeric design of as many columns gets (FACTORS_TO_BAS restores the
    older rule, and the same check catches it)."""
    rng = np.random.default_rng(7)
    n = 50_000
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n), "w": rng.normal(size=n),
                       "g": pd.Categorical(rng.choice(list("abcd"), n), categories=list("abcd"))})
    df["y"] = df.x + (df.g == "b") + rng.normal(size=n)
    fit = dp.dp_lm("y ~ x + g", df, eps=3.0, random_state=0)
    numeric = dp.dp_lm("y ~ x + z + w", df, eps=3.0, random_state=0)
    assert fit.method == numeric.method == "tukey" and fit.released
    assert fit.method_choice.split(", Tukey")[1] == numeric.method_choice.split(", Tukey")[1]
    monkeypatch.setattr(auto_mod, "FACTORS_TO_BAS", True)
    assert dp.dp_lm("y ~ x + g", df, eps=3.0, random_state=0).method == "bas"


def test_ptr_safe_but_below_preferred_says_why():
    """Between the PTR count and TUKEY_PREFERRED x it, BAS, and the sentence says so."""
    n_hat = 2 * tukey_count(13, 0.95, DELTA)
    c = decide(n_hat=n_hat, p_full=13, n_candidates=12, intercept=1, eps_all=0.95,
               eps_sel=0.05, eps_n=0.05, delta=DELTA, method="auto", selection=None, k=None)
    assert c.method == "bas"
    assert c.reason.endswith("Tukey's PTR test would pass with probability > 0.99, but below "
                             "12 x its rows BAS was more accurate in simulation")
    far = decide(n_hat=6 * n_hat, p_full=13, n_candidates=12, intercept=1, eps_all=0.95,
                 eps_sel=0.05, eps_n=0.05, delta=DELTA, method="auto", selection=None, k=None)
    assert far.method == "tukey" and far.reason.endswith("passes with probability > 0.99")


def test_wide_design_does_not_simulate_the_tukey_count_of_every_column(monkeypatch):
    """ames-like: 2,900 rows, 266 columns. The decision must not run the PTR simulation for
    hundreds of columns (it took 150 s); the count of 40 columns already rules Tukey out."""
    import dpstats.pipeline.feasibility as feas
    seen = []
    real = feas.models_needed

    def spy(p, *args, **kw):
        seen.append(p)
        return real(p, *args, **kw)

    monkeypatch.setattr(feas, "models_needed", spy)
    feas.tukey_count.cache_clear()
    c = decide(n_hat=2_900, p_full=266, n_candidates=265, intercept=1, eps_all=1.04,
               eps_sel=0.055, eps_n=0.055, delta=DELTA, method="auto", selection="auto", k=None)
    assert c.method == "bas" and c.k is not None
    assert c.reason is not None and max(seen, default=0) <= 40
    feas.tukey_count.cache_clear()
