"""Tests for dpstats.formula.discovery: which columns need private level discovery, their
histograms, and designs built from released levels (new data recoded the same way)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpstats.errors import FormulaError
from dpstats.formula.design import build_design, design_for_new_data
from dpstats.formula.discovery import (
    POOLED,
    LevelCoding,
    apply_coding,
    level_histograms,
    pooled_name,
    text_factor_columns,
    undeclared_columns,
    with_placeholders,
)


def _spec(formula, df):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # warn_levels=False: no PrivacyLeakWarning
        return build_design(formula, df, warn_levels=False).spec


@pytest.fixture
def df(mixed):
    return mixed.assign(k=np.arange(len(mixed)) % 3, flag=mixed["x"] > 0,
                        s=mixed["g"].astype("string"))


@pytest.mark.parametrize("formula, cols", [
    ("y ~ x + g", ("g",)),
    ("y ~ x + h", ()),                            # pd.Categorical: declared
    ("y ~ C(g, levels=['a', 'b', 'c'])", ()),
    ("y ~ C(h)", ()),
    ("y ~ C(k)", ("k",)),                         # integer codes as a factor
    ("y ~ k + flag", ()),                         # numeric and bool (0/1) columns
    ("y ~ x + g + s + x:g", ("g", "s")),
    ("y ~ C(g) + g", ("g",)),
    ("y ~ .", ("g", "s")),
])
def test_undeclared_columns(df, formula, cols):
    assert undeclared_columns(_spec(formula, df), df) == cols


def test_undeclared_columns_fast_path(num):
    assert undeclared_columns(build_design("y ~ .", num).spec, num) == ()


def test_untraceable_categorical_term_is_refused(df):
    with pytest.raises(FormulaError, match="C\\(.*levels=") as exc:
        undeclared_columns(_spec("y ~ C(g + s)", df), df)   # row-wise, two columns
    assert "cannot be traced" in str(exc.value)


@pytest.mark.parametrize("formula", ["y ~ g + I(g == 'a')",
                                     "y ~ g + C(g, levels=['a', 'b', 'c'])",
                                     "y ~ C(k) + k"])
def test_column_used_as_category_and_otherwise_is_refused(df, formula):
    with pytest.raises(FormulaError, match="declare their levels"):
        undeclared_columns(_spec(formula, df), df)


def test_histograms_count_complete_rows_only():
    df = pd.DataFrame({"y": [1.0, np.nan, 3.0, 4.0, 5.0], "x": [0.0, 1.0, np.nan, 1.0, 2.0],
                       "g": ["a", "b", "b", "a", None], "k": [1, 1, 2, 2, 2]})
    assert level_histograms(df, ["y", "x", "g", "k"], ["g", "k"]) == [{"a": 2}, {1: 1, 2: 1}]


def test_apply_coding_pools_drops_and_keeps_missing():
    data = pd.DataFrame({"g": ["a", "zz", None, "b"], "h": ["u", "v", "u", None],
                         "x": [1.0, 2.0, 3.0, 4.0]})
    out = apply_coding(data, [LevelCoding("g", ("a", "b"), POOLED),
                              LevelCoding("h", ("u",), None), LevelCoding("absent", (), None)])
    assert out["g"].tolist()[:2] == ["a", POOLED] and pd.isna(out["g"][2])
    assert out["g"].cat.categories.tolist() == ["a", "b", POOLED]
    assert out["h"].tolist()[0] == "u" and out["h"].isna().tolist() == [False, True, False, True]
    assert out["h"].cat.categories.tolist() == ["u"]
    assert data["g"].tolist()[1] == "zz"                    # the input is not changed
    assert apply_coding(data, []) is data


def test_pooled_name_avoids_a_released_level():
    assert pooled_name(["a"]) == POOLED
    assert pooled_name([POOLED, POOLED + "_", 3]) == POOLED + "__"


def test_design_from_released_levels_and_new_data(no_warnings):
    df = pd.DataFrame({"y": np.arange(8.0), "x": np.linspace(0, 1, 8),
                       "g": ["a", "b", "a", "b", "SECRET", "c", "c", "a"],
                       "k": [4, 6, 4, 6, 8, 4, 6, 99]})
    codings = (LevelCoding("g", ("a", "b"), POOLED), LevelCoding("k", (4, 6), None))
    d = build_design("y ~ x + g + C(k)", apply_coding(df, codings))
    assert d.columns == ["Intercept", "x", "g[T.b]", f"g[T.{POOLED}]", "C(k)[T.6]"]
    assert d.X.shape[0] == 6 and d.levels_from_data == ()      # k = 8, 99 dropped
    assert d.variables == ("y", "x", "g", "k")
    from dataclasses import replace
    d = replace(d, recode=codings)
    new = pd.DataFrame({"x": [0.0, 0.0, 0.0], "g": ["NEVER", "b", "a"], "k": [6, 4, 12345]})
    X = design_for_new_data(d, new)
    np.testing.assert_array_equal(X[0], [1, 0, 0, 1, 1])      # unseen level -> pooled
    np.testing.assert_array_equal(X[1], [1, 0, 1, 0, 0])
    assert np.isnan(X[2]).all()                                # k not released, not pooled


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # inf * 0 inside formulaic
def test_a_row_with_an_infinite_value_is_missing_and_its_level_never_named():
    # was: the refusal of an infinite value named the term, not a level read from the data;
    # infinite values are now missing rows (issue 14, leak 7), so there is no message at all
    df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "x": [1.0, np.inf, 2.0, 3.0],
                       "g": ["a", "SECRETLEVEL", "b", "a"]})
    design = build_design("y ~ x:g", df, warn_levels=False)
    assert design.X.shape[0] == 3 and not any("SECRETLEVEL" in c for c in design.columns)


@pytest.mark.parametrize("formula, cols", [
    ("y ~ .", ("g", "s")),
    ("y ~ x + g + C(s)", ("g", "s")),
    ("y ~ g + I(g == 'a')", ()),                      # not only a category: real values
    ("y ~ C(g, levels=['a', 'b', 'c'])", ()),
    ("y ~ h + C(k) + flag", ()),                      # declared, numeric codes, bool
    ("y ~ x:g", ("g",)),
    ("y ~ nope + g", ("g",)),                         # the design builder refuses it
    ("y ~", ()),
])
def test_text_factor_columns(df, formula, cols):
    assert text_factor_columns(formula, df) == cols


def test_placeholders_give_a_small_first_design(df):
    wide = df.assign(g=[f"id{i}" for i in range(len(df))])
    built = with_placeholders(wide, ("g",))
    d = build_design("y ~ x + g + x:g", built, warn_levels=False)
    assert d.columns == ["Intercept", "x"]                    # one level: no dummy
    assert undeclared_columns(d.spec, built, ("g",)) == ("g",)
    assert wide["g"].iloc[0] == "id0"                         # the input is not changed
