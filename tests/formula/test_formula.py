"""Tests for dpstats.formula.design: formula -> design matrix, privacy guards,
prediction designs."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from dpstats.errors import (
    DataError,
    DPStatsError,
    FormulaError,
    PrivacyLeakWarning,
    StatefulTransformError,
)
from dpstats.formula.design import build_design, design_for_new_data

SECRET = 987654.321


def _manual(df, cols, intercept=True):
    parts = ([np.ones(len(df))] if intercept else []) + [df[c].to_numpy(float) for c in cols]
    return np.column_stack(parts)


# ----------------------------------------------------------------------------- "." expansion
def test_dot_expands_other_columns_in_frame_order(num, no_warnings):
    d = build_design("y ~ .", num)
    assert d.columns == ["Intercept", "a", "BOROUGH_Staten Island", "b"]
    assert d.expanded == "y ~ (a + `BOROUGH_Staten Island` + b)"
    assert d.formula == "y ~ ." and d.label == "y" and d.has_intercept
    np.testing.assert_allclose(d.X, _manual(num, ["a", "BOROUGH_Staten Island", "b"]))
    np.testing.assert_allclose(d.y, num["y"].to_numpy())
    assert d.levels_from_data == ()


def test_dot_minus_term_and_plus_interaction(num, no_warnings):
    d = build_design("y ~ . - b", num)
    assert d.columns == ["Intercept", "a", "BOROUGH_Staten Island"]
    d = build_design("y ~ . + a:b", num)
    assert d.columns[-1] == "a:b"
    np.testing.assert_allclose(d.X[:, -1], num["a"] * num["b"])
    d = build_design("y ~ . - 1", num)
    assert d.columns == ["a", "BOROUGH_Staten Island", "b"] and not d.has_intercept


def test_dot_inside_names_and_numbers_is_not_expanded(num, no_warnings):
    d = build_design("y ~ np.log(b) + I(a * .5) + I(a * 1.5)", num)
    assert d.columns == ["Intercept", "np.log(b)", "I(a * 0.5)", "I(a * 1.5)"]
    np.testing.assert_allclose(d.X[:, 1:], np.column_stack(
        [np.log(num["b"]), 0.5 * num["a"], 1.5 * num["a"]]))


def test_odd_label_name_and_expression_label(num, no_warnings):
    df = num.rename(columns={"y": "sale price"})
    d = build_design("`sale price` ~ .", df)
    assert d.label == "sale price" and "sale price" not in d.columns
    d = build_design("np.exp(y) ~ .", num)
    assert d.label == "np.exp(y)" and "y" not in d.columns
    np.testing.assert_allclose(d.y, np.exp(num["y"]))


def test_dot_with_only_the_label_is_an_error():
    with pytest.raises(FormulaError, match="no column besides"):
        build_design("y ~ .", pd.DataFrame({"y": [1.0, 2.0]}))


# ----------------------------------------------------------------------------- explicit terms
def test_explicit_terms_and_interactions_match_numpy(num, no_warnings):
    d = build_design("y ~ a + b + a:b", num)
    ref = np.column_stack([np.ones(len(num)), num["a"], num["b"], num["a"] * num["b"]])
    assert d.columns == ["Intercept", "a", "b", "a:b"]
    np.testing.assert_allclose(d.X, ref)
    d2 = build_design("y ~ a*b", num)
    assert d2.columns == d.columns
    np.testing.assert_allclose(d2.X, ref)


@pytest.mark.parametrize("f", ["y ~ a + b - 1", "y ~ a + b + 0", "y ~ 0 + a + b"])
def test_no_intercept(num, f):
    d = build_design(f, num)
    assert d.columns == ["a", "b"] and not d.has_intercept
    np.testing.assert_allclose(d.X, _manual(num, ["a", "b"], intercept=False))


def test_output_arrays_are_plain_float64_c_contiguous(mixed):
    with pytest.warns(PrivacyLeakWarning):
        d = build_design("y ~ x + h + g + x:h", mixed)
    for arr in (d.X, d.y):
        assert type(arr) is np.ndarray and arr.dtype == np.float64
        assert arr.flags.c_contiguous
    assert d.y.shape == (len(mixed),) and d.X.shape == (len(mixed), len(d.columns))
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.label = "z"  # type: ignore[misc]


def test_mixed_formula_matches_manual_dummies(mixed, no_warnings):
    d = build_design("y ~ x + h + x:h", mixed)
    hv, hw = (mixed["h"] == "v").to_numpy(float), (mixed["h"] == "w").to_numpy(float)
    x = mixed["x"].to_numpy()
    assert d.columns == ["Intercept", "x", "h[T.v]", "h[T.w]", "x:h[T.v]", "x:h[T.w]"]
    np.testing.assert_allclose(d.X, np.column_stack([np.ones_like(x), x, hv, hw, x * hv, x * hw]))


# ----------------------------------------------------------------------------- category levels
def test_declared_levels_via_C_keep_unobserved_level(mixed, no_warnings):
    d = build_design("y ~ C(g, levels=['c', 'b', 'a', 'zz'])", mixed)
    base = "C(g, levels=['c', 'b', 'a', 'zz'])"
    assert d.columns == ["Intercept", f"{base}[T.b]", f"{base}[T.a]", f"{base}[T.zz]"]
    assert not d.X[:, -1].any()
    np.testing.assert_allclose(d.X[:, 1], mixed["g"] == "b")
    assert d.levels_from_data == ()


def test_categorical_dtype_column_set_does_not_depend_on_data(mixed, no_warnings):
    d = build_design("y ~ x + h", mixed)
    assert d.columns == ["Intercept", "x", "h[T.v]", "h[T.w]"]  # 'w' never occurs
    only_v = mixed[mixed["h"] == "v"]  # the reference level 'u' is absent too
    d2 = build_design("y ~ x + h", only_v)
    assert d2.columns == d.columns
    assert d.levels_from_data == () == d2.levels_from_data


def test_C_without_levels_on_categorical_dtype_is_declared(mixed, no_warnings):
    d = build_design("y ~ C(h)", mixed)
    assert d.columns == ["Intercept", "C(h)[T.v]", "C(h)[T.w]"]


def test_levels_read_from_data_warn_once_naming_all(mixed):
    df = mixed.assign(k=np.where(mixed["x"] > 0, "p", "q").astype(object),
                      n=np.arange(len(mixed)) % 3)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        d = build_design("y ~ x + h + g + k + C(n)", df)
    leaks = [w for w in rec if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1 and len(rec) == 1
    msg = str(leaks[0].message)
    for name in ("'g'", "'k'", "'n'"):
        assert name in msg
    assert "'h'" not in msg and "pd.Categorical" in msg and "C(col, levels=[...])" in msg
    assert d.levels_from_data == ("g", "k", "n")
    assert {"g[T.b]", "g[T.c]", "k[T.q]", "C(n)[T.1]", "C(n)[T.2]"} <= set(d.columns)


def test_bool_column_is_coded_0_1_without_warning(mixed, no_warnings):
    df = mixed.assign(flag=mixed["x"] > 0)
    d = build_design("y ~ flag", df)
    assert d.columns == ["Intercept", "flag"]
    np.testing.assert_allclose(d.X[:, 1], df["flag"].astype(float))


def test_values_outside_declared_levels_raise(mixed):
    df = mixed.assign(g=mixed["g"].replace({"c": "SECRETLEVEL"}))
    with pytest.raises(DataError, match="'g'") as exc:
        build_design("y ~ C(g, levels=['a', 'b'])", df)
    assert "SECRETLEVEL" not in str(exc.value)


# ----------------------------------------------------------------------------- missing values
def test_rows_with_missing_values_are_dropped(mixed):
    df = mixed.copy()
    df.loc[[1, 5], "x"] = np.nan
    df.loc[[7], "y"] = np.nan
    df.loc[[9, 5], "h"] = np.nan
    df["unused"] = np.nan  # missing values in unused columns do not drop rows
    d = build_design("y ~ x + h", df)
    ref = df.dropna(subset=["y", "x", "h"])
    assert d.X.shape[0] == len(mixed) - 4
    np.testing.assert_allclose(d.y, ref["y"])
    np.testing.assert_allclose(d.X[:, 1], ref["x"])
    np.testing.assert_allclose(d.X[:, 2], ref["h"] == "v")
    assert not any("drop" in f.name or f.name.startswith("n_") for f in dataclasses.fields(d))


def test_missing_values_in_string_and_nullable_columns(mixed):
    df = mixed.astype({"g": object})
    df.loc[3, "g"] = None
    df["z"] = pd.array([None] + [1] * (len(df) - 1), dtype="Int64")
    with pytest.warns(PrivacyLeakWarning):
        d = build_design("y ~ g + z", df)
    assert d.X.shape[0] == len(df) - 2


# ----------------------------------------------------------------------------- stateful transforms
@pytest.mark.parametrize("term", [
    "center(a)", "scale(a)", "standardize(a)", "poly(a, 2)", "bs(a, df=4)", "cr(a, df=4)",
    "cs(a, df=4)", "cc(a, df=4)", "te(a, b)", "hashed(a, levels=4)", "lag(a)",
    "I(a - np.mean(a))", "I(a / a.std())", "I(a > np.quantile(a, 0.5))", "np.log(a) + scale(b)",
    "a:center(b)",
])
def test_stateful_transforms_are_refused(num, term):
    with pytest.raises(StatefulTransformError) as exc:
        build_design(f"y ~ {term}", num)
    msg = str(exc.value)
    assert "learns from the data" in msg and "I((x - 50) / 10)" in msg
    assert isinstance(exc.value, FormulaError)


def test_stateful_transform_in_response_is_refused(num):
    with pytest.raises(StatefulTransformError):
        build_design("scale(y) ~ a", num)


def test_public_constant_transform_is_allowed(num, no_warnings):
    d = build_design("y ~ I((a - 50) / 10) + np.clip(b, 1.2, 1.8) + Q('BOROUGH_Staten Island')",
                     num)
    np.testing.assert_allclose(d.X[:, 1], (num["a"] - 50) / 10)
    np.testing.assert_allclose(d.X[:, 2], np.clip(num["b"], 1.2, 1.8))


# ----------------------------------------------------------------------------- errors
class _FakePolars:
    pass


_FakePolars.__module__ = "polars.dataframe.frame"


@pytest.mark.parametrize("data", [np.ones((3, 2)), _FakePolars()])
def test_data_must_be_a_dataframe(data):  # a dict of columns is converted: test_bad_inputs.py
    with pytest.raises(DataError, match=r"pd\.DataFrame") as exc:
        build_design("y ~ x", data)
    if isinstance(data, _FakePolars):   # named like polars, but not a frame of it
        assert "a polars DataFrame or a pyarrow Table is accepted" in str(exc.value)


def test_frames_without_columns_are_refused_and_without_rows_fitted():
    with pytest.raises(DataError, match="empty"):
        build_design("y ~ x", pd.DataFrame(index=[0, 1]))
    # the row count of the data is private: no rows is a design with no rows, not an error
    d = build_design("y ~ x", pd.DataFrame({"y": [], "x": []}))
    assert d.X.shape == (0, 2) and d.y.shape == (0,) and d.columns == ["Intercept", "x"]


@pytest.mark.parametrize("formula, match", [
    (None, "must be a string"), (42, "must be a string"), ("y x", "exactly one '~'"),
    ("y ~ a ~ b", "exactly one '~'"), ("~ a", "no response"), ("y ~ ", "no terms"),
    ("y ~ (a", "could not be parsed"), ("y ~ a +", "could not be parsed"),
    ("y ~ a | b", "multi-part"), ("y + a ~ b", "exactly one response"), ("y ~ 0", "no terms"),
])
def test_bad_formulas(num, formula, match):
    with pytest.raises(FormulaError, match=match):
        build_design(formula, num)


def test_unknown_names_list_close_matches(num):
    with pytest.raises(FormulaError) as exc:
        build_design("y ~ aa + bb + BOROUGH_Staten_Island + zzzz", num)
    msg = str(exc.value)
    assert "'aa'" in msg and "'zzzz'" in msg and "did you mean 'BOROUGH_Staten Island'" in msg
    with pytest.raises(FormulaError, match="'yy'"):
        build_design("yy ~ a", num)
    with pytest.raises(FormulaError, match="'foo'"):
        build_design("y ~ foo(a)", num)


@pytest.mark.parametrize("label", [
    pd.Series(["p", "q"] * 5), pd.Categorical(["p", "q"] * 5),
    pd.date_range("2020-01-01", periods=10), pd.Series(["p", "q"] * 5, dtype=object),
])
def test_non_numeric_label_is_refused(label):
    df = pd.DataFrame({"y": label, "x": np.arange(10.0)})
    with pytest.raises(DataError, match="numeric label"):
        build_design("y ~ x", df)


def test_bool_label_is_accepted_as_0_1():
    df = pd.DataFrame({"y": [True, False, True, False], "x": [1.0, 2.0, 3.0, 5.0]})
    np.testing.assert_array_equal(build_design("y ~ x", df).y, [1.0, 0.0, 1.0, 0.0])


def test_infinite_values_are_missing_rows(num):
    df = num.assign(a=num["a"].where(num.index != 3, np.inf), b=SECRET)
    got, want = build_design("y ~ a + b", df), build_design("y ~ a + b", df.drop(index=3))
    np.testing.assert_array_equal(got.X, want.X)
    np.testing.assert_array_equal(got.y, want.y)
    assert build_design("y ~ b", num.assign(y=-np.inf)).X.shape == (0, 2)
    # an infinity a transform produces (log(0) = -inf) is a missing row too: here every row is
    # one, so none is left (tests/formula/test_nonfinite_rows.py: one row)
    assert build_design("y ~ np.log(a)", num.assign(a=0.0)).X.shape == (0, 2)


def test_no_rows_left_after_dropping_is_a_design_without_rows(num):
    df = num.assign(a=np.where(np.arange(len(num)) % 2, np.nan, 1.0),
                    b=np.where(np.arange(len(num)) % 2, 1.0, np.nan))
    assert build_design("y ~ a + b", df).X.shape == (0, 3)
    d = build_design("y ~ np.log(a)", num.assign(a=-1.0))   # NaN produced by a transform
    assert d.X.shape == (0, 2) and d.y.shape == (0,)


def test_datetime_feature_is_refused(num):
    df = num.assign(when=pd.date_range("2020-01-01", periods=len(num)))
    with pytest.raises(DataError, match="year"):
        build_design("y ~ a + when", df)
    with pytest.raises(DataError, match="'when'"):
        build_design("y ~ .", df)


def test_non_string_or_duplicate_column_names():
    with pytest.raises(DataError, match="unique strings"):
        build_design("y ~ .", pd.DataFrame(np.ones((3, 2))))
    with pytest.raises(DataError, match="unique strings"):
        build_design("y ~ x", pd.DataFrame(np.ones((3, 3)), columns=["y", "x", "x"]))


def test_response_on_both_sides_is_refused(num):
    with pytest.raises(FormulaError, match=r"'y'.*also appear"):
        build_design("y ~ y + a", num)
    with pytest.raises(FormulaError, match="also appear"):
        build_design("np.log(y) ~ a + I(y > 0)", num)


@pytest.mark.parametrize("formula", ["y ~ x", "y ~ I(s + 1)", "y ~ np.log(s)", "y ~ I(x * s)"])
def test_errors_are_dpstats_errors_without_data_values(mixed, formula):
    df = mixed.assign(s="987654.321", y=mixed["y"].astype(object))
    df.loc[0, "y"] = "987654.321"
    if formula != "y ~ x":
        df["y"] = mixed["y"]
    with pytest.raises(DPStatsError) as exc:
        build_design(formula, df)
    assert "987654" not in str(exc.value)
    assert exc.value.__cause__ is None


def test_nullable_dtypes(mixed):
    df = mixed.assign(s=pd.array(["p", None, "q"] * 20, dtype="string"),
                      f=pd.array([True, None, False] * 20, dtype="boolean"))
    with pytest.warns(PrivacyLeakWarning, match="'s'"):
        d = build_design("y ~ s + f", df)
    assert d.columns == ["Intercept", "s[T.q]", "f"] and d.X.shape[0] == 40
    new = df.iloc[:3].assign(s=pd.array(["q", "p", "q"], dtype="string"))
    np.testing.assert_allclose(design_for_new_data(d, new)[0], [1, 1, 1])
