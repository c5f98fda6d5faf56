"""No released value depends on the cluster or on the partitioning (issue 17, item 3), and a
seeded dask fit equals the seeded pandas fit with the real labels where the algorithm is the
same (item 4).

The cluster: seeded dask fits on a LocalCluster of one worker process and of two release the
same values, bit for bit, and so do the group models the Tukey mechanism reads (the fold
chains' count is a public setting, not the workers the scheduler lists). What the fit reads
from integer statistics (row count, bounds, centre) is the same bit for bit on any
partitioning.

The partitioning: every row's group label and subsample draw is a function of a client seed
and the row's global number in the design (dpstats.dask.numbering), so the same rows in 1, 3
or 7 partitions get the same labels and seeded fits release the same values up to the order
in which floats are added over partitions (a tight rtol). With one generator per partition
(before) these fits released other values of the same law, and these tests failed. All run
on one two-worker cluster (one start), the one-worker cluster only where it is compared.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import dpstats as dp  # noqa: E402
from dpstats.dask import engine, fold  # noqa: E402

#: Partitionings of the same frame.
PARTS = (1, 3, 7)
#: Relative tolerance: the partitions' float sums add in another order (rounding only).
RTOL = 1e-8


def frame(n: int = 6000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-2, 2, n),
                       "x3": rng.normal(3.0, 2.0, n)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + 0.5 * df.x3 + rng.standard_t(4, n)
    df.loc[::97, "x1"] = np.nan                         # dropped rows
    return df


def digest(*arrays) -> str:
    """A hash of the arrays' bits (NaN included)."""
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()


def released(fit) -> str:
    return digest(fit.params, fit.bse, fit.conf_int(), [fit.n_noisy or np.nan],
                  [getattr(fit, "m", None) or np.nan])


#: (formula, keyword arguments, the subsample's cap): the Tukey models from the rows the first
#: pass holds (no second read) and from a GroupPass (the cap lowered: the subsample thinned).
#: (The default fit at this size is BAS: tree-merged passes, whose order is the partitions',
#: never the workers'; 100 of them per fit, so it is left out.)
CASES = [("tukey_held", {"method": "tukey"}, 1 << 21),
         ("tukey_pass", {"method": "tukey"}, 1000)]


def seeded_fits(client, workers: int, monkeypatch) -> dict:
    """Every case's released values and the group models it fitted, on the cluster of
    ``workers`` worker processes, for a frame of 5 partitions (one partitioning: the fits do
    not depend on it, below)."""
    models = []
    fit_models = engine.Engine.fit_models

    def spy(self, *args, **kwargs):
        out = fit_models(self, *args, **kwargs)
        models.append(digest(out))
        return out
    monkeypatch.setattr(engine.Engine, "fit_models", spy)
    out = {}
    assert len(client.scheduler_info()["workers"]) == workers
    for parts in (5,):
        ddf = dd.from_pandas(frame(), npartitions=parts)
        for name, kw, cap in CASES:
            monkeypatch.setattr(fold, "SAMPLE_ROWS", cap)
            del models[:]
            fit = dp.dp_lm("y ~ x1 + x2 + x3", ddf, eps=1.0, random_state=7, **kw)
            out[name, parts] = (released(fit), tuple(models))
    monkeypatch.undo()
    return out


def test_seeded_fits_equal_on_one_and_two_workers(client, monkeypatch):
    """The same seeded fits on one worker and on two release the same values and fit the same
    group models, bit for bit (before, the fold had one chain per listed worker: on one worker
    the partitions' group sums were added in another order, so the models' floats differed,
    and a release could; a release then also depended on how many workers the scheduler
    listed at that moment)."""
    two = seeded_fits(client, 2, monkeypatch)
    cluster = distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    with distributed.Client(cluster) as one_client:
        one = seeded_fits(one_client, 1, monkeypatch)
    cluster.close()
    assert one["tukey_held", 5][1] and one["tukey_pass", 5][1]     # the spy saw the models
    for key in one:
        assert one[key] == two[key], key


def test_chains_are_public():
    """The chains' count is the public setting, capped by the partitions; no client read."""
    assert fold.chain_count(1) == 1 and fold.chain_count(9) == fold.FOLD_CHAINS
    assert fold.chain_count(9, 3) == 3


def test_count_bounds_and_centre_do_not_depend_on_the_partitioning():
    """The row count, the private bounds and the centre are released from integer statistics
    (counts, histograms, cell counts): the same bits on 1, 3 and 7 partitions (AdaSSP reads
    them; its Gram matrix is a float sum, equal up to rounding:
    tests/dask/test_dask_fit.py)."""
    df = frame()
    fits = [dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), eps=1.0,
                     method="adassp", random_state=3, inference_share=0.0)
            for parts in (1, 3, 7)]
    for fit in fits[1:]:
        assert fit.n_noisy == fits[0].n_noisy
        assert digest(np.r_[fit.clip]) == digest(np.r_[fits[0].clip])
        assert list(fit.ledger.eps) == list(fits[0].ledger.eps)


def wide(n: int = 6000, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{j}" for j in range(6)])
    df["y"] = 1 + 2 * df.x1 - 1.5 * df.x4 + df.x5 + rng.standard_t(4, n)
    df["g"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.5 + df.x1 - df.x2)))).astype(float)
    df.loc[::97, "x1"] = np.nan                       # dropped rows: design != frame rows
    return df


def values(fit) -> np.ndarray:
    """The released numbers of a fit (NaN where withheld)."""
    return np.r_[fit.params.to_numpy(), fit.bse.to_numpy(), fit.conf_int().to_numpy().ravel(),
                 fit.n_noisy or np.nan, getattr(fit, "m", None) or np.nan]


def assert_same(fits: list) -> None:
    for fit in fits[1:]:
        np.testing.assert_allclose(values(fit), values(fits[0]), rtol=RTOL, atol=1e-12)
        cols = ["stage", "mechanism", "eps", "delta"]
        assert fit.ledger[cols].to_numpy().tolist() == fits[0].ledger[cols].to_numpy().tolist()


#: The fits compared across partitionings. (dp_lm's default at this size is BAS: one pass per
#: round, no per-row draw, its sums in partition order; tests/dask/test_dask_fit.py compares
#: it with pandas. Where the default is Tukey, its groups are those of "lm tukey" and of the
#: GroupPass test below.)
FITS = {
    "lm tukey": lambda d: dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, method="tukey",
                                   random_state=7),
    "lm sublasso": lambda d: dp.dp_lm("y ~ . - g", d, eps=2.0, k=3, select="sublasso",
                                      method="adassp", random_state=7),
    "glm default": lambda d: dp.dp_glm("g ~ x1 + x2", d, eps=2.0, random_state=7),
}


@pytest.mark.parametrize("case", list(FITS))
def test_seeded_fits_do_not_depend_on_the_partitioning(client, case):
    """The same seeded fit of the same frame in 1, 3 and 7 partitions releases the same
    values (params, standard errors, intervals, n, m) up to rounding."""
    df = wide()
    fits = [FITS[case](dd.from_pandas(df, npartitions=k)) for k in PARTS]
    assert np.isfinite(fits[0].params.to_numpy()).all()
    assert_same(fits)


def engine_of(ddf, formula: str, kind: str, columns: tuple):
    """A methods engine on ``ddf`` after its first pass (every design column kept)."""
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.methods import MethodsEngine
    from dpstats.dask.passes import FirstPass, reduce_frame
    part = PartitionDesign(formula, kind, columns)
    first = reduce_frame(ddf, FirstPass(part))
    return MethodsEngine(ddf, part, first, range(len(columns)))


def test_group_pass_models_do_not_depend_on_the_partitioning(client):
    """The group fits of a GroupPass (SubLasso's groups; the Tukey models when the first pass
    did not keep every row) from the same seed: the same models on 1, 3 and 7 partitions."""
    from dpstats.dask.engine import models_of
    df = wide()
    models = [engine_of(dd.from_pandas(df, npartitions=k), "y ~ x1 + x2 + x3", "lm",
                        ("Intercept", "x1", "x2", "x3"))._groups(
                            40, np.random.default_rng(1), models_of) for k in PARTS]
    assert np.isfinite(models[0]).all() and models[0].shape == (40, 4)
    for got in models[1:]:
        np.testing.assert_allclose(got, models[0], rtol=1e-9)


def test_logistic_group_labels_do_not_depend_on_the_partitioning(client, monkeypatch):
    """dp_glm's Tukey rows (labelled for the shuffle) carry the same label on every row of the
    design, however the frame is partitioned (the shuffle itself is not run here)."""
    import dpstats.dask.methods as methods
    df = wide()
    labels = []
    for k in PARTS:
        ddf = dd.from_pandas(df, npartitions=k)
        monkeypatch.setattr(methods, "shuffled_models", lambda d, rows, *a: rows)
        rows = engine_of(ddf, "g ~ x1 + x2", "glm", ("Intercept", "x1", "x2")).logistic_groups(
            1.0).fit_models(None, None, 50, np.random.default_rng(3))
        labels.append(np.concatenate([rows(ddf.get_partition(i).compute(), i)["g"].to_numpy()
                                      for i in range(k)]))
    assert labels[0].size == len(df.dropna()) and len(set(labels[0].tolist())) == 50
    for got in labels[1:]:
        np.testing.assert_array_equal(got, labels[0])


def test_selection_does_not_depend_on_the_partitioning(client, monkeypatch):
    """select() (its default) and DPKendall on a Bernoulli subsample (the rate lowered: the
    rows are kept by their global numbers' draws) select the same terms in the same order,
    with the same released scores, on every partitioning."""
    import dpstats.dask.select as dask_select
    df = wide(8000)
    picks = [dp.select("y ~ . - g", dd.from_pandas(df, npartitions=k), eps=3.0, k=3,
                       random_state=5) for k in PARTS]
    assert all(p.selected == picks[0].selected for p in picks)
    monkeypatch.setattr(dask_select, "SAMPLE_ROWS", 2000)        # q = 1/4
    fits = [dp.dp_lm("y ~ . - g", dd.from_pandas(df, npartitions=k), eps=3.0, k=3,
                     select="kendall", method="adassp", random_state=5) for k in PARTS]
    assert any("subsample" in note for note in fits[0].notes)
    assert all(f.selected == fits[0].selected for f in fits)
    assert_same(fits)


def test_seeded_tukey_equals_pandas_with_the_real_labels(client, monkeypatch):
    """The in-memory Tukey fit given the counter-based labels of its design rows 0..n-1
    (:func:`~dpstats.mechanisms.sampling.seeded_groups` from the seed the dask fit draws
    before the count; the in-memory fit draws the same two seeds there) releases what the dask
    fit releases with its own labels, on 1 and 4 partitions: the algorithm is the same."""
    import dpstats.estimators.tukey.linear as tukey_linear
    import dpstats.pipeline.run as pipeline_run
    from dpstats.mechanisms.sampling import group_seed, seeded_groups
    seeds, real = [], pipeline_run.plan_budget

    def plan_budget(request, *args, **kwargs):       # where the dask fit draws its two seeds
        seeds[:] = [group_seed(request.rng), group_seed(request.rng)]
        return real(request, *args, **kwargs)
    monkeypatch.setattr(pipeline_run, "plan_budget", plan_budget)
    monkeypatch.setattr(tukey_linear, "partition_labels",
                        lambda n, m, rng: seeded_groups(seeds[0], 0, n, m))
    df = wide()
    kw = {"eps": 1.0, "method": "tukey", "random_state": 4}
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, **kw)
    assert a.released
    for parts in (1, 4):
        b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), **kw)
        assert b.n_noisy == a.n_noisy and b.m == a.m
        np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("cap", [1000, 1 << 21])          # the subsample thinned / whole
def test_first_pass_sums_do_not_depend_on_the_partitioning(client, monkeypatch, cap):
    """The seeded Tukey fit whose m the first pass guessed (``m`` given: the models come from
    that pass's speculative group sums) releases the same values on 1, 3 and 7 partitions,
    with the first pass's subsample thinned (its cap lowered: every frame above 2^21 design
    rows) or holding every row. The first pass numbers each partition's rows from the
    earlier partitions' counts in the same graph; when it keyed its draws by partition
    instead (before session 15), the thinned case failed."""
    calls, real = [], fold.on_worker

    def spy(held, fn, *args):
        calls.append(getattr(fn, "__name__", ""))
        return real(held, fn, *args)
    monkeypatch.setattr(fold, "on_worker", spy)
    monkeypatch.setattr(fold, "SAMPLE_ROWS", cap)
    df = wide()
    fits = []
    for k in PARTS:
        del calls[:]
        fits.append(dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=k), eps=1.0,
                             method="tukey", m=840, random_state=7))
        assert "guessed_models" in calls, calls          # the first pass's sums, no pass
    assert fits[0].m == 840 and np.isfinite(fits[0].params.to_numpy()).all()
    assert_same(fits)


def test_first_pass_subsample_does_not_depend_on_the_partitioning(client, monkeypatch):
    """The first pass's thinned subsample (the Tukey windows' and design moments' rows above
    2^21 design rows; its cap lowered here) holds the same rows, with the same uniforms, in
    the same order on 1, 3 and 7 partitions, and its group sums at the guess are equal up
    to rounding (before session 15 the uniforms and labels were keyed by partition)."""
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.passes import FirstPass, seeded_labels
    monkeypatch.setattr(fold, "SAMPLE_ROWS", 700)
    part = PartitionDesign("y ~ x1 + x2 + x3", "lm", ("Intercept", "x1", "x2", "x3"))
    fused = fold.FusedPass(FirstPass(part, centre=True), 60, 5, seeded_labels, sample_seed=17)
    df = wide()
    got = [fold.fold_frame(dd.from_pandas(df, npartitions=k), fused, fold.fused_total)
           for k in PARTS]
    assert 0 < got[0]["sample"]["thr"] < 1 and 0 < got[0]["sample"]["u"].size <= 700
    for total in got[1:]:
        assert total["sample"]["thr"] == got[0]["sample"]["thr"]
        for key in ("X", "y", "u"):
            np.testing.assert_array_equal(total["sample"][key], got[0]["sample"][key])
        np.testing.assert_allclose(total["groups"], got[0]["groups"], rtol=1e-12)


def test_placed_fold_moves_only_counts_and_sums(client):
    """The first pass as one graph (partition steps waiting for the earlier partitions' row
    counts): each chain's reads, designs and steps run on its worker; between workers move
    only the counts (ints) and a chain's accumulator for the final add, never a partition
    or its design."""
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.passes import FirstPass, seeded_labels
    part = PartitionDesign("y ~ x1 + x2 + x3", "lm", ("Intercept", "x1", "x2", "x3"))
    fused = fold.FusedPass(FirstPass(part, centre=True), 60, 5, seeded_labels, sample_seed=17)
    client.run(lambda dask_worker: dask_worker.transfer_incoming_log.clear())
    total = fold.fold_frame(dd.from_pandas(wide(), npartitions=7), fused, fold.fused_total)
    assert total["n"] == len(wide().dropna())
    moved = [str(key) for log in client.run(lambda dask_worker: [
        k for e in dask_worker.transfer_incoming_log for k in e["keys"]]).values()
        for key in log]
    # counts, their prefix sums (operator.add) and a chain's last step; no read or prepare
    assert moved and {k.split("-")[0] for k in moved} <= {"piece_rows", "add", "step"}, moved


def test_placed_fold_without_its_worker_is_made_again(client, monkeypatch):
    """A placed fold whose chain's worker is not in the cluster (here: an address no worker
    has, as after a worker left) is made again unplaced, with the same total."""
    from dpstats.dask.design import PartitionDesign
    from dpstats.dask.passes import GroupPass, seeded_labels
    part = PartitionDesign("y ~ x1 + x2 + x3", "lm", ("Intercept", "x1", "x2", "x3"))
    ddf = dd.from_pandas(wide(), npartitions=3)
    gp = GroupPass(part, (0, 1, 2, 3), 20, 5, seeded_labels, (0, 1, 2))
    want = fold.fold_frame(ddf, gp, fold.identity, pin=False)
    monkeypatch.setattr(fold, "CHECK_SECONDS", 0.2)
    monkeypatch.setattr(fold, "placement", lambda graph, owned, workers: (
        {key: ["tcp://127.0.0.1:9"] for key in graph}, {key: 0 for key in graph}))
    np.testing.assert_array_equal(fold.fold_frame(ddf, gp, fold.identity), want)
