"""The numba builders of a dask partition equal the code they replace, value for value.

:mod:`dpstats.dask.numeric` builds a purely numeric formula's design in one numba pass; it must
give exactly :func:`~dpstats.formula.design.build_design`'s arrays (the rows the nonfinite
rules drop, tiny values set to 0, -0.0 kept, integer columns) and must not apply to a formula
it cannot prove identical (transforms, interactions, factors, undeclared categoricals,
released codings, nullable or boolean columns; dp_glm's bool or categorical response): those
fall back to the formula path. Seeded dask fits (dp_lm and dp_glm) are identical with and
without it. Also: the subsample filter kernel equals boolean
indexing, and the tabulated log-grid cells equal the formula at every cell edge.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpstats._kernels.design_rows import numeric_rows, rows_below
from dpstats._kernels.partition_sums import log_table
from dpstats.dask import numeric
from dpstats.dask.design import PartitionDesign
from dpstats.dask.numeric import numeric_design, numeric_plan
from dpstats.dask.passes import log_counts
from dpstats.formula.design import build_design
from dpstats.formula.nonfinite import MAX_ABS
from dpstats.mechanisms.gdp import CELLS_PER_OCTAVE, log_histograms

dd = pytest.importorskip("dask.dataframe")


def awkward_frame(n: int = 5_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": rng.normal(size=n), "a": rng.normal(size=n) * 1e3,
                       "b": rng.uniform(-2, 2, n), "c": rng.integers(-5, 5, n)})
    df.loc[::37, "a"] = np.nan
    df.loc[3::41, "b"] = np.inf
    df.loc[5::43, "b"] = -np.inf
    df.loc[7::47, "y"] = np.nan
    df.loc[9::53, "a"] = 1e200                 # beyond MAX_ABS: the row is dropped
    df.loc[11::59, "b"] = -3e-200              # below MIN_SCALE: set to 0
    df.loc[13::61, "y"] = 2e-190
    df.loc[15::67, "a"] = -0.0                 # kept as -0.0
    df.loc[17::71, "y"] = np.nan
    return df


FORMULAS = ["y ~ .", "y ~ a + b", "y ~ b + a - 1", "y ~ 0 + a + c", "y ~ 1 + c + b",
            "y ~ a + b + c + 0"]


def _plan(formula: str, df: pd.DataFrame):
    design = build_design(formula, df.iloc[:0], warn_levels=False)
    return numeric_plan(formula, "lm", df.iloc[:0], tuple(design.columns)), design


@pytest.mark.parametrize("formula", FORMULAS)
def test_numeric_builder_equals_the_formula_design(formula):
    df = awkward_frame()
    plan, _ = _plan(formula, df)
    assert plan is not None
    want = build_design(formula, df, warn_levels=False)
    X, y = numeric_design(df, plan)
    assert X.flags.c_contiguous and X.dtype == np.float64
    np.testing.assert_array_equal(X, want.X)
    np.testing.assert_array_equal(y, want.y)
    assert np.array_equal(np.signbit(X), np.signbit(want.X))       # -0.0 stays -0.0
    part = PartitionDesign(formula, "lm", tuple(want.columns), numeric=plan)
    Xp, yp = part(df)
    np.testing.assert_array_equal(Xp, want.X)
    np.testing.assert_array_equal(yp, want.y)


def test_a_broken_builder_is_caught():
    """The comparison above fails for a builder that skips the tiny-value rule or the limit."""
    df = awkward_frame()
    plan, _ = _plan("y ~ a + b", df)
    want = build_design("y ~ a + b", df, warn_levels=False)
    values = df.to_numpy(dtype=np.float64)
    cols = np.array([df.columns.get_loc(c) for c in plan.names])
    for max_abs, min_scale in [(MAX_ABS, 0.0), (np.inf, 1e-150)]:
        X, yo = np.empty((len(df), 3)), np.empty(len(df))
        k = numeric_rows(values, 0, cols, True, max_abs, min_scale, X, yo)
        assert not (k == want.X.shape[0] and np.array_equal(X[:k], want.X)
                    and np.array_equal(yo[:k], want.y))


@pytest.mark.parametrize("formula", ["y ~ np.log(a)", "y ~ a:b", "y ~ a * b", "y ~ C(c)",
                                     "np.log(y) ~ a", "y ~ I(a)", "y ~ a + a"])
def test_falls_back_for_formulas_it_cannot_prove(formula):
    df = awkward_frame().assign(y=lambda d: d.y.abs() + 1.0)
    design = build_design(formula, df.iloc[:0], warn_levels=False)
    assert numeric_plan(formula, "lm", df.iloc[:0], tuple(design.columns)) is None


def test_falls_back_for_other_columns_and_kinds():
    df = awkward_frame()
    meta = df.iloc[:0]
    cols = ("Intercept", "a", "b", "c")
    assert numeric_plan("y ~ .", "lm", meta, cols) is not None
    assert numeric_plan("y ~ .", "glm", meta, cols) is not None      # dp_glm: 0/1 rows
    flag = meta.assign(y=pd.Series([True], dtype=bool).iloc[:0])
    assert numeric_plan("y ~ .", "glm", flag, cols) is None             # bool response
    assert numeric_plan("y ~ .", "lm", meta, cols, text=("g",)) is None
    assert numeric_plan("y ~ .", "lm", meta, cols, codings=(("g", ()),)) is None
    for extra in [pd.Series([True], dtype=bool), pd.Series(["u"], dtype=object),
                  pd.Series([1.0], dtype="Float64"), pd.Series(["u"], dtype="category")]:
        other = meta.assign(d=extra.iloc[:0])
        assert numeric_plan("y ~ .", "lm", other, cols + ("d",)) is None
        assert numeric_plan("y ~ a + b", "lm", other, ("Intercept", "a", "b")) is not None
    assert numeric_plan("y ~ a + b", "lm", meta, ("Intercept", "b", "a")) is None
    numeric.ENABLED = False
    try:
        assert numeric_plan("y ~ .", "lm", meta, cols) is None
    finally:
        numeric.ENABLED = True


def binary_frame(n: int = 5_000, seed: int = 2) -> pd.DataFrame:
    """:func:`awkward_frame` with a numeric response mostly 0/1 (also 2, -0.0 and NaN)."""
    df = awkward_frame(n, seed)
    rng = np.random.default_rng(seed)
    df["y"] = rng.integers(0, 2, n).astype(float)
    df.loc[::29, "y"] = 2.0                     # not 0 or 1: dropped by dp_glm
    df.loc[4::31, "y"] = -0.0
    df.loc[6::37, "y"] = np.nan
    return df


@pytest.mark.parametrize("formula", ["y ~ .", "y ~ a + b", "y ~ 0 + a + c"])
def test_numeric_builder_serves_dp_glm(formula):
    """dp_glm's design (a numeric response: rows not 0 or 1 dropped) by the numeric builder
    equals the formula path's (build_design, binary_rows); without the 0/1 rule (a broken
    variant) it does not."""
    from dpstats.pipeline.glm_design import binary_rows
    df = binary_frame()
    want = binary_rows(build_design(formula, df, warn_levels=False))
    plan = numeric_plan(formula, "glm", df.iloc[:0], tuple(want.columns))
    assert plan is not None
    X, y = PartitionDesign(formula, "glm", tuple(want.columns), numeric=plan)(df)
    np.testing.assert_array_equal(X, want.X)
    np.testing.assert_array_equal(y, want.y)
    assert np.array_equal(np.signbit(y), np.signbit(want.y)) and X.flags.c_contiguous
    Xb, _ = PartitionDesign(formula, "lm", tuple(want.columns), numeric=plan)(df)
    assert Xb.shape[0] > X.shape[0]


@pytest.mark.parametrize("method", ["objpert", "dpgd"])
def test_seeded_dask_glm_fits_identical_with_and_without(method, monkeypatch):
    import dpstats as dp
    df = binary_frame(20_000, 3).drop(columns="c")
    _assert_same_with_and_without(dp.dp_glm, df, method, monkeypatch)


@pytest.mark.parametrize("method", ["auto", "adassp"])
def test_seeded_dask_fits_identical_with_and_without(method, monkeypatch):
    import dpstats as dp
    df = awkward_frame(20_000, 1).drop(columns="c")
    df["y"] = 1.0 + 2.0 * df.a.fillna(0) / 1e3 - df.b.clip(-2, 2).fillna(0) + df.y.fillna(0)
    _assert_same_with_and_without(dp.dp_lm, df, method, monkeypatch)


def _assert_same_with_and_without(fit_fn, df, method, monkeypatch):
    """A seeded dask fit of ``y ~ a + b`` with the numeric builder equals the one without."""
    fits, calls = [], []
    real = numeric.numeric_design
    monkeypatch.setattr(numeric, "numeric_design", lambda *a: calls.append(1) or real(*a))
    for enabled in (True, False):
        monkeypatch.setattr(numeric, "ENABLED", enabled)
        fits.append(fit_fn("y ~ a + b", dd.from_pandas(df, npartitions=3), eps=1.0,
                           method=method, random_state=5))
    assert calls                                      # the first fit used the numeric builder
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())
    assert str(fits[0].summary()) == str(fits[1].summary())


def test_rows_below_equals_boolean_indexing():
    X = np.arange(60.0).reshape(20, 3)
    y, u = np.arange(20.0), np.linspace(0.0, 1.0, 20)
    Xk, yk, uk = rows_below(X, y, u, 0.4)
    k = u < 0.4
    np.testing.assert_array_equal(Xk, X[k])
    np.testing.assert_array_equal(yk, y[k])
    np.testing.assert_array_equal(uk, u[k])


def test_log_table_equals_the_formula_at_every_cell_edge():
    """Each tabulated step and its neighbours (one ulp either side) against log_histograms
    (numpy's formula), over every exponent of the grid and beyond, both signs."""
    base, steps = log_table(CELLS_PER_OCTAVE, 64)
    exps = np.arange(1023 - 70, 1023 + 70)
    edges = (exps[:, None] << 52) | np.concatenate(
        [np.zeros((exps.size, 1), dtype=np.int64),
         np.minimum(steps[exps], (1 << 52) - 1)], axis=1)
    bits = edges.reshape(-1)
    vals = np.concatenate([bits.view(np.float64), np.nextafter(bits.view(np.float64), 0.0),
                           np.nextafter(bits.view(np.float64), np.inf)])
    vals = np.concatenate([vals, -vals, [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324,
                                         -1e-310, 1e308]])
    cols = np.stack([vals, vals[::-1]], axis=1)
    np.testing.assert_array_equal(log_counts(cols), log_histograms(cols))
    for v in vals[::5]:          # one value at a time: its own cell, not a swap of two
        one = log_counts(np.array([[v]]))
        np.testing.assert_array_equal(one, log_histograms(np.array([[v]])))


def test_broken_table_is_caught():
    base, steps = log_table(CELLS_PER_OCTAVE, 64)
    broken = steps.copy()
    broken[1023, 1] += 1                     # one step a mantissa too late
    from dpstats._kernels.partition_sums import add_log_histograms
    v = np.array([[np.array(steps[1023, 1] | (1023 << 52)).view(np.float64)]])
    counts = np.zeros((1, log_histograms(v).shape[1]), dtype=np.int64)
    add_log_histograms(counts, v.view(np.int64), base, broken, CELLS_PER_OCTAVE, 64)
    assert not np.array_equal(counts, log_histograms(v))


def test_partition_design_with_plan_pickles():
    import pickle
    df = awkward_frame(100)
    plan, design = _plan("y ~ .", df)
    part = replace(PartitionDesign("y ~ .", "lm", tuple(design.columns)), numeric=plan)
    again = pickle.loads(pickle.dumps(part))
    np.testing.assert_array_equal(again(df)[0], build_design("y ~ .", df).X)
