"""polars DataFrames and pyarrow Tables are accepted wherever a pandas frame is (dp_lm, dp_glm,
select, predict and score), converted once by :mod:`dpstats.formula.frames`: the same seeded fit
on the three versions of a bundled data set is bit-identical, a polars ``Enum`` (or an Arrow
dictionary) declares its levels, and a polars ``Categorical`` is text, discovered privately.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.formula.design import check_data
from dpstats.formula.frames import polars_by_column

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

CATS = ("cut", "color", "clarity")


@pytest.fixture(scope="module")
def diamonds():
    return dp.datasets.load("diamonds")


def as_polars(df: pd.DataFrame):
    """The polars version of a pandas frame: declared categories as ``pl.Enum``."""
    out = pl.from_pandas(df)
    return out.with_columns([pl.col(c).cast(pl.String).cast(pl.Enum(list(df[c].cat.categories)))
                             for c in df.select_dtypes("category")])


def as_arrow(df: pd.DataFrame):
    return pa.Table.from_pandas(df, preserve_index=False)


def ledger(fit) -> list:
    return [(c.stage, c.mechanism, c.eps, c.delta, c.detail) for c in fit.charges]


def same_fit(a, b) -> None:
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    assert list(a.params.index) == list(b.params.index)
    assert ledger(a) == ledger(b) and a.selected == b.selected and a.notes == b.notes


@pytest.mark.parametrize("convert", [as_polars, as_arrow], ids=["polars", "pyarrow"])
def test_seeded_lm_is_bit_identical_on_polars_and_arrow(diamonds, convert):
    formula = "price ~ carat + depth + table + cut + color + clarity"
    ref = dp.dp_lm(formula, diamonds, eps=1.0, random_state=5)
    other = dp.dp_lm(formula, convert(diamonds), eps=1.0, random_state=5)
    assert ref.released
    same_fit(ref, other)
    new = diamonds.iloc[:50]
    np.testing.assert_array_equal(other.predict(convert(new)).to_numpy(),
                                  ref.predict(new).to_numpy())
    assert other.score(convert(new)) == ref.score(new)


@pytest.mark.parametrize("convert", [as_polars, as_arrow], ids=["polars", "pyarrow"])
def test_seeded_glm_and_select_are_bit_identical_on_polars_and_arrow(diamonds, convert):
    data = diamonds.assign(dear=(diamonds["price"] > 2400).astype(int)).drop(columns="price")
    formula = "dear ~ carat + depth + cut + color"
    ref = dp.dp_glm(formula, data, eps=1.0, random_state=2)
    other = dp.dp_glm(formula, convert(data), eps=1.0, random_state=2)
    same_fit(ref, other)
    new = convert(data.iloc[100:160])
    np.testing.assert_array_equal(other.predict(new).to_numpy(),
                                  ref.predict(data.iloc[100:160]).to_numpy())
    assert other.score(new) == ref.score(data.iloc[100:160])
    sel = dp.select("dear ~ .", convert(data), eps=1.0, random_state=3)
    assert sel.selected == dp.select("dear ~ .", data, eps=1.0, random_state=3).selected


def test_polars_enum_declares_levels_and_categorical_is_discovered_privately():
    rng = np.random.default_rng(1)
    n = 3000
    g = rng.choice(["lo", "mid", "hi"], n)
    y = rng.normal(size=n) + (g == "hi")
    enum = pl.DataFrame({"y": y, "g": pl.Series(g, dtype=pl.Enum(["mid", "lo", "hi"]))})
    fit = dp.dp_lm("y ~ g", enum, eps=1.0, random_state=0, method="adassp")
    assert fit.released and "levels" not in [c.stage for c in fit.charges]  # declared
    assert list(fit.params.index) == ["Intercept", "g[T.lo]", "g[T.hi]"]    # in their order
    pred = fit.predict(pl.DataFrame({"g": pl.Series(["hi", None], dtype=enum.schema["g"])}))
    assert np.isfinite(pred.iloc[0]) and np.isnan(pred.iloc[1])
    cat = enum.with_columns(pl.col("g").cast(pl.String).cast(pl.Categorical))
    fit = dp.dp_lm("y ~ g", cat, eps=1.0, random_state=0, method="adassp")
    assert fit.charges[0].stage == "levels"          # its levels are discovered privately
    assert fit.predict(cat.head(5)).notna().all()


def test_dtypes_survive_the_conversion():
    frame = pl.DataFrame({
        "e": pl.Series(["b", None, "a"], dtype=pl.Enum(["c", "a", "b"])),
        "c": pl.Series(["x", "y", None], dtype=pl.Categorical),
        "s": ["u", None, "w"], "b": [True, False, True], "i": [1, None, 3], "j": [1, 2, 3],
        "f": [1.5, None, 2.0], "d": pl.Series([1, 2, 3]).cast(pl.Date)})
    for out in (check_data(frame), polars_by_column(frame), check_data(frame.to_arrow())):
        assert list(out["e"].cat.categories) == ["c", "a", "b"] and out["e"].isna().tolist() == [
            False, True, False]
        assert out["b"].dtype == bool and out["j"].dtype == np.int64
        assert out["i"].dtype == np.float64 and np.isnan(out["i"][1])
        assert out["s"][1] is None or pd.isna(out["s"][1])
        assert pd.api.types.is_datetime64_any_dtype(out["d"].dtype)
        assert not isinstance(out["s"].dtype, pd.CategoricalDtype)
    # the polars Categorical is text (its categories are what polars met in the data)
    assert not isinstance(check_data(frame)["c"].dtype, pd.CategoricalDtype)
    assert isinstance(check_data(frame.to_arrow())["c"].dtype, pd.CategoricalDtype)  # dictionary


def test_record_batch_and_lazy_frame():
    table = pa.table({"y": [1.0, 2.0, 3.0], "x": [0.0, 1.0, 2.0]})
    assert check_data(table.to_batches()[0]).shape == (3, 2)
    with pytest.warns(dp.NotPrivateWarning):
        fit = dp.dp_lm("y ~ x", table, eps=1.0, method="ols")
    with pytest.raises(dp.errors.DataError, match=r"newdata\.collect\(\)"):
        fit.predict(pl.from_arrow(table).lazy())


def test_a_fit_converts_once_and_works_without_pyarrow(diamonds, monkeypatch):
    import dpstats.formula.frames as frames
    calls = []
    monkeypatch.setattr(frames, "_from_polars", lambda f: calls.append(1) or polars_by_column(f))
    data = diamonds.assign(dear=diamonds["price"] > 2400)
    formula = "dear ~ carat + depth + cut"
    other = dp.dp_glm(formula, as_polars(data), eps=1.0, random_state=4)
    assert calls == [1]
    same_fit(dp.dp_glm(formula, data, eps=1.0, random_state=4), other)
    monkeypatch.undo()

    def no_pyarrow(*args, **kwargs):
        raise ModuleNotFoundError("pyarrow")
    monkeypatch.setattr(pl.DataFrame, "to_pandas", no_pyarrow)
    pd.testing.assert_frame_equal(check_data(as_polars(diamonds)), diamonds)


def test_import_dpstats_imports_neither_polars_nor_pyarrow():
    code = ("import sys, pandas as pd, formulaic; before = set(sys.modules); import dpstats; "
            "dpstats.dp_lm; from dpstats.formula.design import check_data; "
            "check_data(pd.DataFrame({'a': [1]})); "   # pandas may load pyarrow itself: not ours
            "print(sorted({'polars', 'pyarrow'} & (set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_sklearn_estimators_take_polars_and_arrow(diamonds):
    pytest.importorskip("sklearn")
    from dpstats.sklearn import DPLinearRegression, DPLogisticRegression
    X, y = diamonds.drop(columns="price"), diamonds["price"]
    ref = DPLinearRegression(eps=1.0, random_state=0).fit(X, y)
    for convert in (as_polars, as_arrow):
        est = DPLinearRegression(eps=1.0, random_state=0).fit(convert(X), pl.Series(y))
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        assert list(est.feature_names_in_) == list(X.columns)
        np.testing.assert_array_equal(est.predict(convert(X.head(20))), ref.predict(X.head(20)))
    clf = DPLogisticRegression(eps=1.0, random_state=0).fit(as_polars(X), y > 2400)
    assert clf.predict_proba(as_arrow(X.head(5))).shape == (5, 2)
