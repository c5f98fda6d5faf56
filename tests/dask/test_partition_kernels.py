"""The one-pass kernels of the dask passes equal the in-memory statistics they replace.

:mod:`dpstats._kernels.partition_sums` computes per-group sums, log-scale histograms and the
private centre's cell counts of a partition; each must give exactly what the numpy code of
the in-memory path gives (the releases read them), including awkward values (zeros, -0.0,
infinities, values beyond the grids, repeated values), and a fold of several partitions must
equal the whole. Also: the number of Tukey models is capped as documented.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats._kernels.partition_sums import (
    CHUNK_ROWS,
    add_group_sums,
    group_sums_reference,
    group_sums_width,
)
from dpstats.dask.passes import column_cells, group_sums, log_counts, sums_of
from dpstats.estimators.tukey.choose_m import (
    CAP_MULTIPLE,
    MAX_MODELS,
    ROWS_PER_COLUMN,
    SAFETY,
    choose_m,
    models_cap,
    models_needed,
)
from dpstats.mechanisms.centre import centre_cells
from dpstats.mechanisms.gdp import log_histograms


def awkward(n: int = 20_000, p: int = 5, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.exp(rng.normal(0, 5, p))
    X[::7, 0] = 0.0
    X[::11, 1] = -0.0
    X[::13, 2] = np.inf
    X[::17, 2] = -np.inf
    X[::19, 3] = 2.0 ** -80
    X[::23, 3] = -(2.0 ** 80)
    X[:, 4] = np.round(X[:, 4], 1)            # many repeated values
    return X


@pytest.mark.parametrize("m", [1, 7, 40_000])     # groups of more and fewer rows than a chunk
def test_group_sums_equal_bincount(m):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30_000, 4)) * [1.0, 1e3, 1e-3, 5.0], rng.normal(size=30_000)
    labels = rng.integers(0, m, 30_000)
    assert (30_000 / m > CHUNK_ROWS) == (m < 8)
    acc = np.zeros((m, group_sums_width(4)))
    add_group_sums(acc, X, y, labels)
    ref = group_sums_reference(X, y, labels, m)
    np.testing.assert_allclose(acc, ref, rtol=1e-11, atol=1e-9)
    s = sums_of(acc, 4)
    j = min(3, m - 1)
    g = labels == j
    np.testing.assert_allclose(s["xty"][:, j], X[g].T @ y[g], rtol=1e-11)
    assert s["count"][j] == g.sum() and np.isclose(s["yy"][j], y[g] @ y[g])


@pytest.mark.parametrize("m", [7, 40_000])
def test_folded_partitions_equal_the_whole(m):
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(9_000, 3)), rng.normal(size=9_000)
    labels = rng.integers(0, m, 9_000)
    acc = None
    for lo in range(0, 9_000, 2_500):                   # four uneven partitions
        acc = group_sums(X[lo:lo + 2_500], y[lo:lo + 2_500], labels[lo:lo + 2_500], m, acc)
    np.testing.assert_allclose(acc, group_sums_reference(X, y, labels, m), rtol=1e-12,
                               atol=1e-12)


def test_split_group_sums_equal_on_one_and_two_threads(monkeypatch):
    """A partition summed in two halves (lowered thresholds) equals the whole up to rounding,
    gives the same floats on one thread or two (the split is the rows', not the threads'),
    and the split really ran (its floats differ from one serial call)."""
    import numba

    import dpstats.dask.passes as passes
    monkeypatch.setattr(passes, "SPLIT_ROWS", 1000)
    monkeypatch.setattr(passes, "SPLIT_PER_GROUP", 10)
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(40_000, 3)) * [1.0, 1e3, 1e-3], rng.normal(size=40_000)
    labels = rng.integers(0, 50, 40_000)
    ref = group_sums_reference(X, y, labels, 50)
    two = group_sums(X, y, labels, 50)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = group_sums(X, y, labels, 50)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(two, ref, rtol=1e-11, atol=1e-9)
    serial = np.zeros_like(ref)
    add_group_sums(serial, X, y, labels)
    assert not np.array_equal(serial, two)
    acc = group_sums(X, y, labels, 50, serial.copy())           # into an accumulator
    np.testing.assert_allclose(acc, 2 * ref, rtol=1e-11, atol=1e-9)


def test_log_counts_equal_log_histograms():
    cols = awkward()
    np.testing.assert_array_equal(log_counts(cols), log_histograms(cols))


def test_column_cells_equal_centre_cells():
    X = awkward()
    X = np.where(np.isfinite(X), X, 1e300)            # the design has finite values only
    for got, want in zip(column_cells(X), [centre_cells(X[:, j]) for j in range(X.shape[1])],
                         strict=True):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_models_capped_at_large_n():
    p, eps, delta = 6, 1.0, 1e-5
    need = int(np.ceil(SAFETY * models_needed(p, eps, delta)))
    cap = models_cap(p, eps, delta)
    assert cap == min(CAP_MULTIPLE * need, MAX_MODELS)
    r = ROWS_PER_COLUMN * p
    assert choose_m(1e6, p, eps, delta) == int(1e6 / r)                # below the cap: as before
    assert choose_m(r * cap * 10, p, eps, delta) == cap                # far above: the cap
    assert choose_m(1e12, p, eps, delta) == cap
    assert choose_m(r * cap - r, p, eps, delta) < cap                  # continuous up to it
    assert choose_m(2_000, p, eps, delta) == min(need, 2_000 // p)     # small n: unchanged


def test_fold_frame_is_independent_of_chains_and_partitions():
    """A group pass folded in 1, 2 or 3 chains over 1 or 5 partitions sums the same rows."""
    import pandas as pd

    dd = pytest.importorskip("dask.dataframe")
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.fold import fold_frame
    from dpstats.dask.passes import GroupPass

    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x1": rng.normal(size=3000), "x2": rng.uniform(size=3000)})
    df["y"] = df.x1 - df.x2 + rng.normal(size=3000)
    u = rng.random(3000)

    def labels(part, index, n, m, seed):          # by row: the same whatever the partitioning
        return (u[np.asarray(index)] * m).astype(np.int64)

    gp = GroupPass(PartitionDesign("y ~ x1 + x2", "lm", ("Intercept", "x1", "x2")),
                   (0, 1, 2), 50, 0, labels)
    X = np.column_stack([np.ones(3000), df.x1, df.x2])
    want = group_sums_reference(X, df.y.to_numpy(), (u * 50).astype(np.int64), 50)
    for parts, chains in ((1, 1), (5, 1), (5, 2), (5, 3)):
        got = fold_frame(dd.from_pandas(df, npartitions=parts), gp, np.copy, chains=chains)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("keep", [[0, 2, 4], [3, 1], [4]])
def test_kept_sums_equal_the_kept_columns_sums(keep):
    """The first pass sums every column; a Tukey fit on fewer columns takes a sub-array."""
    from dpstats.dask.speculate import kept_sums
    rng = np.random.default_rng(4)
    X, y, lab = rng.normal(size=(3000, 5)), rng.normal(size=3000), rng.integers(0, 7, 3000)
    got = kept_sums(group_sums(X, y, lab, 7), 5, keep)
    np.testing.assert_allclose(got, group_sums(X[:, keep], y, lab, 7), rtol=1e-12, atol=1e-12)


def test_guess_is_what_choose_m_takes_on_many_rows():
    """The first pass's guess is the m that the Tukey stage chooses from a large released count
    with all columns and no selector, with the regression budget of the pipeline's own plan (so
    the speculative sums are used there); a user's m is the guess; no guess without Tukey."""
    from types import SimpleNamespace as NS

    from dpstats.dask.speculate import guess_models
    from dpstats.pipeline.budget import DEFAULT_SPLIT, plan_budget, replan
    req = NS(kind="lm", method="auto", m="auto", eps=1.0, delta=1e-5, lemma="8.5",
             accounting="swap", shares=DEFAULT_SPLIT, budget=None, groups="auto",
             rng=np.random.default_rng(0))
    plan = replan(plan_budget(req, 10**9, "auto", force_n=True), req, None)
    for p in (3, 6, 10):
        assert guess_models(req, p, (0.0, 0.0)) == choose_m(1e9, p, plan.eps_reg,
                                                             plan.delta_reg)
    assert guess_models(NS(**{**vars(req), "m": 500}), 4, (0.0, 0.0)) == 500
    assert guess_models(NS(**{**vars(req), "method": "adassp"}), 4, (0.0, 0.0)) is None


def test_speculative_sample_is_the_bernoulli_sample(monkeypatch):
    """The first pass's thinned subsample holds, below any q <= its threshold, exactly the
    rows a Bernoulli(q) sample pass with the same seed takes over the rows numbered
    globally, in the same order (whatever the partitioning)."""
    import dask.dataframe as dd
    import pandas as pd

    from dpstats.dask import fold
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.passes import (
        FirstPass,
        SamplePass,
        row_starts,
        sample_frame,
        seeded_labels,
    )
    monkeypatch.setattr(fold, "SAMPLE_ROWS", 300)
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "y"])
    part = PartitionDesign("y ~ a + b", "lm", ("Intercept", "a", "b"))
    fused = fold.FusedPass(FirstPass(part), 4, 0, seeded_labels, sample_seed=11)
    for parts in (1, 5):
        ddf = dd.from_pandas(df, npartitions=parts)
        total = fold.fold_frame(ddf, fused, fold.fused_total, chains=2)
        got, starts = total["sample"], row_starts(total["rows"])
        assert got["thr"] < 0.25 and got["u"].size <= 2 * 300 and (got["u"] < got["thr"]).all()
        q = 0.8 * got["thr"]
        X, y = sample_frame(ddf, SamplePass(part, (0, 1, 2), q, 11, starts))
        rows = got["u"] < q
        assert rows.sum() == y.size > 0
        np.testing.assert_array_equal(got["y"][rows], y)
        np.testing.assert_array_equal(got["X"][rows], X)
