"""No warning, error or message depends on whether a transform is valid on a row (issue 14,
leak 3), or on whether a row holds an infinite or huge value (leak 7).

``dp_lm("y ~ np.log(x)")`` used to be silent on D and to emit ``RuntimeWarning: invalid value
encountered in log`` on D plus one row with x = -1; an infinity a transform produced was refused
("infinite values"). Now numpy's warnings are silenced and never re-emitted, and rows a
transform makes non-finite are dropped like rows with a missing input, so D and D plus such a
row give the same warnings (none), no error and the same fit. Infinite values in the data
itself and design values beyond 1e150 are missing rows too (they were refused). The broken
variants at the end put the old behaviour back and show that the comparison catches it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
import dpstats.formula.design as design_module
from dpstats.errors import DataError
from dpstats.formula.design import build_design, design_for_new_data

N = 2000
ROWS = [  # formula, the added row (x, y), what the transform does on it
    ("y ~ np.log(x)", (-1.0, 0.3)),            # NaN, "invalid value encountered in log"
    ("y ~ np.log(x)", (0.0, 0.3)),             # -inf, "divide by zero"
    ("y ~ I(1/x)", (0.0, 0.3)),                # inf
    ("y ~ np.sqrt(x)", (-4.0, 0.3)),           # NaN
    ("y ~ I(x ** 2)", (1e200, 0.3)),           # overflow to inf
    ("np.log(y) ~ x", (2.0, -1.0)),            # NaN in the response
    ("np.log(y) ~ np.log(x)", (2.0, 0.0)),     # -inf in the response
    ("y ~ x", (np.inf, 0.3)),                  # inf in the data itself
    ("y ~ I(x > 3)", (np.inf, 0.3)),           # ... even where the transform is finite
    ("y ~ x", (2.0, -np.inf)),                 # -inf label in the data itself
    ("y ~ x", (1e200, 0.3)),                   # beyond 1e150
    ("y ~ np.exp(x)", (400.0, 0.3)),           # a transform beyond 1e150
]
IDS = [f"{f} at {row}" for f, row in ROWS]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"x": rng.uniform(1, 5, N), "y": rng.uniform(1, 3, N)})


def _plus(data: pd.DataFrame, row: tuple) -> pd.DataFrame:
    return pd.concat([data, pd.DataFrame({"x": [row[0]], "y": [row[1]]})], ignore_index=True)


def _outcome(formula: str, data: pd.DataFrame):
    """(exception type or None, warning messages, params or None) of one seeded fit."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            fit = dp.dp_lm(formula, data, eps=1.0, method="adassp", random_state=0)
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc), [str(w.message) for w in rec], None
    return None, [str(w.message) for w in rec], fit.params.to_numpy()


def _assert_neighbours_look_alike(formula: str, data: pd.DataFrame, row: tuple) -> None:
    base, plus = _outcome(formula, data), _outcome(formula, _plus(data, row))
    assert base[0] is None and plus[0] is None, (base[0], plus[0])   # both fits succeed
    assert base[1] == plus[1] == [], (base[1], plus[1])              # and warn nothing
    np.testing.assert_array_equal(base[2], plus[2])                  # the row was dropped


@pytest.mark.parametrize("formula, row", ROWS, ids=IDS)
def test_a_row_the_transform_cannot_take_leaves_no_trace(data, formula, row):
    _assert_neighbours_look_alike(formula, data, row)


@pytest.mark.parametrize("formula, row", ROWS, ids=IDS)
def test_the_design_drops_that_row(data, formula, row):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base, plus = build_design(formula, data), build_design(formula, _plus(data, row))
    np.testing.assert_array_equal(base.X, plus.X)
    np.testing.assert_array_equal(base.y, plus.y)
    assert plus.X.flags.c_contiguous and plus.y.flags.c_contiguous


def test_numpy_error_state_is_restored(data):
    before = np.geterr()
    build_design("y ~ np.log(x)", _plus(data, (-1.0, 0.3)))
    assert np.geterr() == before


def test_infinite_values_in_the_data_itself_are_missing_rows(data):
    bad = _plus(data, (np.inf, 0.3))
    for formula in ("y ~ x", "y ~ np.log(x)", "y ~ I(x * 2) + I(x > 3)", "y ~ ."):
        base, plus = build_design(formula, data), build_design(formula, bad)
        np.testing.assert_array_equal(base.X, plus.X)
        np.testing.assert_array_equal(base.y, plus.y)


def test_values_below_1e_150_are_set_to_zero(data):
    tiny = build_design("y ~ x", _plus(data, (1e-300, -2e-200)))
    zero = build_design("y ~ x", _plus(data, (0.0, 0.0)))
    np.testing.assert_array_equal(tiny.X, zero.X)
    np.testing.assert_array_equal(tiny.y, zero.y)


def test_predict_gives_nan_where_the_transform_is_invalid(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = dp.dp_lm("y ~ np.log(x)", data, eps=1.0, method="adassp", random_state=0)
        d = build_design("y ~ np.log(x)", data)
        new = pd.DataFrame({"x": [2.0, -1.0, 3.0]})
        pred = fit.predict(new)
        X = design_for_new_data(d, new)
    assert np.isnan(pred.iloc[1]) and np.isfinite(pred.iloc[[0, 2]]).all()
    assert np.isnan(X[1, 1]) and np.isfinite(X[[0, 2]]).all()


# ---- broken variants: the old behaviour is caught ---------------------------------------------
def _old_materialize(build, spec_of, data, *, predict):
    """The pre-fix warning handling: numpy's warnings raised while the design is evaluated are
    re-emitted to the caller."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = build()
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def test_re_emitting_numpy_warnings_is_caught(data, monkeypatch):
    monkeypatch.setattr(design_module, "_materialize", _old_materialize)
    assert _outcome("y ~ np.log(x)", data)[1] == []
    assert any("invalid value" in m for m in _outcome("y ~ np.log(x)",
                                                      _plus(data, (-1.0, 0.3)))[1])
    with pytest.raises(AssertionError):
        _assert_neighbours_look_alike("y ~ np.log(x)", data, (-1.0, 0.3))


def _old_check(X, y):
    """The pre-fix rule: refuse a design with an infinite value."""
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError("contain infinite values")
    return X, y


def test_refusing_transform_infinities_is_caught(data, monkeypatch):
    monkeypatch.setattr(design_module, "usable_rows", _old_check)
    assert _outcome("y ~ np.log(x)", _plus(data, (0.0, 0.3)))[0] is DataError
    with pytest.raises(AssertionError):
        _assert_neighbours_look_alike("y ~ np.log(x)", data, (0.0, 0.3))


def test_refusing_infinite_inputs_is_caught(data, monkeypatch):
    monkeypatch.setattr(design_module, "usable_rows", _old_check)
    monkeypatch.setattr(design_module, "infinite_inputs", lambda f: np.zeros(len(f), bool))
    with pytest.raises(AssertionError):
        _assert_neighbours_look_alike("y ~ x", data, (np.inf, 0.3))
