"""Tests for dpstats.formula.design on new data: prediction designs and scoring responses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstats.errors import DataError, PredictionError, PrivacyLeakWarning
from dpstats.formula.design import Design, build_design, design_for_new_data, response_for_new_data


# ----------------------------------------------------------------------------- new data
def test_design_for_new_data_reproduces_fit(mixed):
    with pytest.warns(PrivacyLeakWarning):
        d = build_design("y ~ x + h + g + x:h + np.log(np.abs(x))", mixed)
    shuffled = mixed[["g", "h", "x"]].assign(extra=1.0)  # reordered, extra column, no label
    X = design_for_new_data(d, shuffled)
    np.testing.assert_allclose(X, d.X)
    assert type(X) is np.ndarray and X.dtype == np.float64 and X.flags.c_contiguous
    few = mixed[mixed["g"] == "a"].iloc[:3]  # levels absent from new data keep their columns
    np.testing.assert_allclose(design_for_new_data(d, few), d.X[few.index])


def test_new_data_categories_are_matched_by_value(mixed, no_warnings):
    d = build_design("y ~ h", mixed)
    new = pd.DataFrame({"h": pd.Categorical(["w", "u", "v"], categories=["w", "v", "u"])})
    np.testing.assert_allclose(design_for_new_data(d, new), [[1, 0, 1], [1, 0, 0], [1, 1, 0]])
    as_str = pd.DataFrame({"h": ["w", "u", "v"]})
    np.testing.assert_allclose(design_for_new_data(d, as_str), [[1, 0, 1], [1, 0, 0], [1, 1, 0]])


def test_new_data_rows_with_missing_inputs_become_nan(mixed, no_warnings):
    d = build_design("y ~ x + h", mixed)
    new = pd.DataFrame({"x": [1.0, np.nan, 2.0], "h": ["u", "v", None]}, index=[10, 10, 3])
    X = design_for_new_data(d, new)
    assert X.shape == (3, 4)
    np.testing.assert_allclose(X[0], [1, 1, 0, 0])
    assert np.isnan(X[1:]).all()


def test_new_data_unseen_level_names_variable_not_value(mixed):
    with pytest.warns(PrivacyLeakWarning):
        d = build_design("y ~ x + g", mixed)
    new = pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "SECRETLEVEL"]})
    with pytest.raises(PredictionError, match="'g'") as exc:
        design_for_new_data(d, new)
    assert "SECRETLEVEL" not in str(exc.value)
    d2 = build_design("y ~ x + C(g, levels=['a', 'b', 'c'])", mixed)
    with pytest.raises(PredictionError, match="'g'"):
        design_for_new_data(d2, new)
    d3 = build_design("y ~ h", mixed)
    with pytest.raises(PredictionError, match="'h'"):
        design_for_new_data(d3, pd.DataFrame({"h": ["u", "SECRETLEVEL"]}))


def test_new_data_missing_column_and_wrong_type(mixed, no_warnings):
    d = build_design("y ~ x + h", mixed)
    with pytest.raises(PredictionError, match="'h'"):
        design_for_new_data(d, mixed[["x"]])
    with pytest.raises(DataError, match="newdata"):
        design_for_new_data(d, mixed.to_numpy())


def test_response_for_new_data_drops_incomplete_rows(mixed, no_warnings):
    d = build_design("y ~ x + h", mixed)
    new = mixed.copy()
    new.loc[[0, 4], "y"] = np.nan
    new.loc[[2], "x"] = np.nan
    X, y = response_for_new_data(d, new)
    keep = new.dropna(subset=["y", "x", "h"]).index
    np.testing.assert_allclose(X, d.X[keep])
    np.testing.assert_allclose(y, mixed["y"].to_numpy()[keep])
    with pytest.raises(PredictionError, match="'y'"):
        response_for_new_data(d, mixed[["x", "h"]])
    with pytest.raises(DataError, match="numeric label"):
        response_for_new_data(d, mixed.assign(y="p"))
    with pytest.raises(DataError, match="no rows"):
        response_for_new_data(d, mixed.assign(y=np.nan))


def test_response_for_new_data_with_expression_label(num, no_warnings):
    d = build_design("np.exp(y) ~ a", num)
    X, y = response_for_new_data(d, num.iloc[:5])
    np.testing.assert_allclose(y, np.exp(num["y"].iloc[:5]))
    np.testing.assert_allclose(X, d.X[:5])


def test_intercept_only_model(num, no_warnings):
    d = build_design("y ~ 1", num)
    assert d.columns == ["Intercept"] and isinstance(d, Design)
    np.testing.assert_allclose(design_for_new_data(d, num.iloc[:4]), np.ones((4, 1)))
