"""The first pass's total held on its worker (dpstats.dask.fold.Held): the group sums it defers
while a chain's subsample holds every row, the Tukey group models taken from those rows
instead of a second read, and the windows' rows filtered where they are held. Every path must
give the same floats as the code it replaces (the eager sums, a GroupPass, the joined
subsample), so a seeded dask fit releases the same values whichever path runs.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import dpstats as dp  # noqa: E402
from dpstats.dask import engine, fold  # noqa: E402
from dpstats.dask.design import PartitionDesign  # noqa: E402
from dpstats.dask.passes import FirstPass, GroupPass, row_starts, seeded_labels  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])   # helpers go to the workers

PART = PartitionDesign("y ~ a + b + c", "lm", ("Intercept", "a", "b", "c"))


def data(n: int = 3000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["y"] = df.a - 2 * df.b + rng.standard_t(3, n)
    df.loc[::41, "b"] = np.nan                    # dropped rows: the design is not the frame
    return df


def fused(sample: bool, m: int = 40) -> fold.FusedPass:
    return fold.FusedPass(FirstPass(PART, centre=True), m, 5, seeded_labels,
                          sample_seed=17 if sample else None)


def reversed_chains(total: dict) -> np.ndarray:
    """A broken deferral: each chain's partitions summed in reverse order."""
    chains = [chain[::-1] for chain in total["deferred"]]
    return fold.pairwise([fold.chain_sums(c, *total["spec"], starts=total["starts"])
                          for c in chains],
                         fold.add_partials)


@pytest.mark.parametrize("rows", [1 << 21, 700])          # deferred to the end / thinned
@pytest.mark.parametrize("mode", ["pinned", "unpinned", "local"])
def test_deferred_group_sums_equal_the_eager_ones(client, monkeypatch, rows, mode):
    """The sums a chain defers while its subsample holds every row, taken at the end (every
    row held) or when the subsample first drops rows (then added to by the steps), are the
    floats a GroupPass adds over the rows numbered globally (bit for bit: the first pass
    knows every row's number), and those of the eager steps (no subsample); for 2 and 3
    chains, pinned, unpinned or without a distributed client."""
    monkeypatch.setattr(fold, "SAMPLE_ROWS", rows)
    monkeypatch.setattr(fold, "PIN_CHAINS", mode == "pinned")
    if mode == "local":
        monkeypatch.setattr(fold, "_client", lambda: None)
    ddf = dd.from_pandas(data(), npartitions=5)
    for chains in (2, 3):
        total = fold.fold_frame(ddf, fused(True), fold.fused_total, chains=chains)
        got = total["groups"]
        eager = fold.fold_frame(ddf, fused(False), fold.fused_total, chains=chains)["groups"]
        grouped = fold.fold_frame(ddf, GroupPass(PART, (0, 1, 2, 3), 40, 5, seeded_labels,
                                                 row_starts(total["rows"])), fold.identity,
                                  chains=chains)
        assert (total["sample"]["thr"] < 1.0) == (rows < 3000)
        np.testing.assert_array_equal(got, eager)
        np.testing.assert_array_equal(got, grouped)
        X, y = PART(data())
        assert np.isclose(got[:, -3].sum(), X.shape[0])            # every row counted once
    if rows > 3000 and mode == "local":      # the deferral is really there, and order-exact
        total = fold.fold_frame(ddf, fused(True), fold.identity, chains=2)
        assert total["groups"] is None and len(total["deferred"]) == 2
        assert not np.array_equal(reversed_chains(total), grouped)


@pytest.mark.parametrize("parts", [1, 4, 5])
def test_held_models_equal_the_group_pass(client, parts):
    """The Tukey models at an m other than the guess, taken from the held rows, equal a
    GroupPass's over the frame (same labels, chains and order: bit for bit); another seed
    (a broken variant) gives other models."""
    ddf = dd.from_pandas(data(), npartitions=parts)
    keep = (0, 1, 3)
    stats, held = fold.fold_frame(ddf, fused(True), fold.fused_stats, hold=True)
    assert stats["sample"]["thr"] == 1.0 and isinstance(held, fold.Held)
    chains = fold.chain_count(parts)
    got = held.apply(engine.held_models, keep, 25, 9, seeded_labels, chains)
    starts = row_starts(stats["rows"])
    want = fold.fold_frame(ddf, GroupPass(PART, keep, 25, 9, seeded_labels, starts),
                           engine.Finish(engine.models_of, len(keep)))
    np.testing.assert_array_equal(got, want)
    other = held.apply(engine.held_models, keep, 25, 10, seeded_labels, chains)
    assert not np.allclose(other, want)
    guessed = held.apply(engine.guessed_models, 4, keep)         # the guess m = 40
    full = fold.fold_frame(ddf, GroupPass(PART, (0, 1, 2, 3), 40, 5, seeded_labels, starts),
                           fold.identity)
    from dpstats.dask.speculate import kept_sums
    np.testing.assert_array_equal(
        guessed, engine.Finish(engine.models_of, len(keep))(kept_sums(full, 4, keep)))


@pytest.mark.parametrize("rows", [1 << 21, 700])
def test_held_rows_equal_the_joined_subsample(client, monkeypatch, rows):
    """The windows' rows filtered on the worker are the joined subsample's rows below q, in
    the same order."""
    monkeypatch.setattr(fold, "SAMPLE_ROWS", rows)
    ddf = dd.from_pandas(data(), npartitions=4)
    stats, held = fold.fold_frame(ddf, fused(True), fold.fused_stats, hold=True)
    joined = held.apply(lambda total: fold.sample_rows(total["sample"]))
    keep = [0, 2, 3]
    for q in (stats["sample"]["thr"], 0.3 * stats["sample"]["thr"]):
        X, y = held.apply(fold.held_rows, q, keep)
        rows = joined["u"] < q
        np.testing.assert_array_equal(X, joined["X"][rows][:, keep])
        np.testing.assert_array_equal(y, joined["y"][rows])
        assert X.flags.c_contiguous and 0 < y.size


def group_passes(monkeypatch) -> list:
    seen, real = [], engine.fold_frame

    def spy(ddf, fn, *args, **kwargs):
        seen.append(type(fn).__name__)
        return real(ddf, fn, *args, **kwargs)
    monkeypatch.setattr(engine, "fold_frame", spy)
    return seen


# Every case releases (PTR withholds below about 600 groups of these 20,000 rows, and NaN
# would equal NaN). With m = 600 given the first pass's guess hits: thinned, its
# speculative sums are taken in the steps, held, at the end: the same labels (row numbers).
@pytest.mark.parametrize("kw", [{"method": "tukey"}, {"method": "tukey", "m": 600},
                                {"method": "tukey", "m": 600, "guess": 1200}, {}])
def test_seeded_fit_is_the_same_whether_the_rows_are_held(client, monkeypatch, kw):
    """A seeded dask fit releases the same values (coefficients, standard errors, PTR, m)
    when the held rows serve the Tukey groups and windows (no second read) as when the
    subsample is too small to hold them (with a guess that misses: a GroupPass)."""
    import importlib
    kw = dict(kw)
    guess = kw.pop("guess", None)
    if guess is not None:                     # the first pass sums at 1200, the fit asks 600
        monkeypatch.setattr(importlib.import_module("dpstats.dask.run"), "guess_models",
                            lambda *a: guess)
    ddf = dd.from_pandas(data(20_000), npartitions=3)
    seen = group_passes(monkeypatch)
    a = dp.dp_lm("y ~ a + b + c", ddf, eps=1.0, random_state=8, **kw)
    held = list(seen)
    monkeypatch.setattr(fold, "SAMPLE_ROWS", 2000)          # the chains' subsamples thinned
    b = dp.dp_lm("y ~ a + b + c", ddf, eps=1.0, random_state=8, **kw)
    assert a.method == b.method and a.m == b.m
    assert np.isfinite(a.params.to_numpy()).all()           # a released fit, not two NaNs
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    np.testing.assert_array_equal(a.bse.to_numpy(), b.bse.to_numpy())
    assert held == []
    if guess is not None:
        assert seen[len(held):] == ["GroupPass"]


def test_design_moments_from_sums_computed_elsewhere():
    """``design_moments(sums=)`` (the exact sums from a worker) releases what it releases from
    the rows, with the same noise and charge; sums of other rows (a broken variant) differ."""
    from dpstats.mechanisms.accountant import Ledger
    from dpstats.mechanisms.design_moments import clipped_sums, design_moments
    X = data(5000).dropna().to_numpy()
    cen, sc, cols = np.zeros(3), np.ones(3), [0, 1, 3]
    runs = []
    for sums in (None, clipped_sums(X, cen, sc, 3.0, cols=cols),
                 clipped_sums(X[1:], cen, sc, 3.0, cols=cols)):
        ledger = Ledger()
        out = design_moments(X if sums is None else None, cen, sc, 0.5,
                             np.random.default_rng(1), ledger, cols=cols, sums=sums)
        runs.append((np.r_[out[0], out[1].ravel()], ledger.spent))
    np.testing.assert_array_equal(runs[1][0], runs[0][0])
    assert runs[1][1] == runs[0][1]
    assert not np.allclose(runs[2][0], runs[0][0])
