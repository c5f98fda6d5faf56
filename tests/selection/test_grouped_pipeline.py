"""Terms through the public API: Design.terms/term_of, dp.select and dp_lm select whole
factors, ``selected`` lists terms, a factor's coefficients are all kept or all "not selected",
and ``k`` beyond the number of terms is refused in terms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import ValidationError
from dpstats.formula.design import build_design
from dpstats.pipeline.select import candidate_columns, candidate_terms

LEVELS = ["a", "b", "c", "d", "e", "f"]


def frame(n=6000, seed=0):
    rng = np.random.default_rng([11, seed])
    g = rng.integers(0, len(LEVELS), n)
    df = pd.DataFrame(rng.standard_normal((n, 4)), columns=["x0", "x1", "x2", "x3"])
    df["g"] = pd.Categorical(np.array(LEVELS)[g], categories=LEVELS)
    df["y"] = (1.5 * df.x0 + 3.0 * np.array([0, 1, -1, 2, 0.5, -2])[g] + 0.8 * df.x3
               + rng.standard_normal(n))
    return df[["x0", "x1", "g", "x2", "x3", "y"]]


def test_design_terms_come_from_the_formula():
    df = frame(60).assign(h=lambda f: np.where(f.x1 > 0, "u", "v"))
    d = build_design("y ~ x0 + g + x0:g + C(h, levels=['u', 'v'])", df)
    assert d.terms == ("x0", "g", "C(h, levels=['u', 'v'])", "x0:g")
    assert d.term_of == (-1, 0, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3)
    assert len(d.term_of) == len(d.columns)
    fast = build_design("y ~ .", frame(60).drop(columns="g"))
    assert fast.terms == ("x0", "x1", "x2", "x3") and fast.term_of == (-1, 0, 1, 2, 3)
    nointercept = build_design("y ~ x1 + g - 1", frame(60))
    assert nointercept.terms == ("x1", "g") and nointercept.term_of == (0,) + (1,) * 6


def test_candidate_terms_map_columns_to_terms():
    d = build_design("y ~ .", frame(60))
    cand = candidate_columns(d.columns, d.has_intercept)
    term_of, names = candidate_terms(d, cand)
    assert names == ("x0", "x1", "g", "x2", "x3")
    assert term_of == (0, 1, 2, 2, 2, 2, 2, 3, 4)


@pytest.mark.parametrize("method", ["kendall", "sublasso", "sis"])
def test_select_returns_terms(method):
    df = frame()
    seen = set()
    for seed in range(3):
        res = dp.select("y ~ .", df, eps=20.0, method=method, k=2, random_state=seed)
        assert res.candidates == 5 and len(res.selected) == 2
        assert set(res.selected) <= {"x0", "x1", "g", "x2", "x3"}
        seen |= set(res.selected)
    assert "g" in seen
    assert "5 terms" in str(res.summary())


def test_k_beyond_terms_is_refused_in_terms():
    with pytest.raises(ValidationError, match=r"k=6 but the formula has only 5 candidate terms"):
        dp.select("y ~ .", frame(200), eps=1.0, method="kendall", k=6, random_state=0)


@pytest.mark.parametrize("select", ["kendall", "sublasso", "sis"])
def test_dp_lm_keeps_a_factor_whole(select):
    df = frame()
    dummies = [f"g[T.{lv}]" for lv in LEVELS[1:]]
    for seed in range(3):
        fit = dp.dp_lm("y ~ .", df, eps=3.0, select=select, k=2, method="adassp",
                       random_state=seed)
        assert len(fit.selected) == 2 and not any("[" in t for t in fit.selected)
        tidy = fit.tidy().set_index("term")
        marks = set(tidy.loc[dummies, "selected"])
        assert len(marks) == 1
        text = str(fit.summary())
        flags = {line.split()[-1] for line in text.splitlines()
                 if line.startswith("g[T.")}
        assert len(flags) == 1                 # "selected #r" for all, or "not selected"
        if "g" in fit.selected:
            assert (fit.params[dummies] != 0).all() and marks == {True}
        else:
            assert (fit.params[dummies] == 0).all() and marks == {False}


def test_explicit_terms_at_most_k_are_fitted_as_written():
    fit = dp.dp_lm("y ~ x0 + g + x3", frame(), eps=3.0, k=5, method="adassp", random_state=0)
    assert fit.selection is None and (fit.params != 0).all()


@pytest.mark.parametrize("method,needle", [("kendall", "each scored by the max over its columns"),
                                           ("sis", "scored by the max over them"),
                                           ("sublasso", "at most one per term and group")])
def test_ledger_says_how_terms_are_scored(method, needle):
    res = dp.select("y ~ .", frame(2000), eps=1.0, method=method, k=2, random_state=0)
    assert any(needle in c.detail for c in res.charges)
    numeric = dp.select("y ~ .", frame(2000).drop(columns="g"), eps=1.0, method=method, k=2,
                        random_state=0)
    assert not any(needle in c.detail for c in numeric.charges)


def test_skipped_selection_note_counts_terms():
    fit = dp.dp_lm("y ~ x0 + g + x3", frame(), eps=3.0, select="kendall", k=3,
                   method="adassp", random_state=0)
    assert fit.selection is None
    assert any("the formula has 3 candidate terms, not more than k=3" in n for n in fit.notes)
