"""dp_lm on a dask DataFrame, on a real LocalCluster (two worker processes).

Where the algorithm is the same as in memory (AdaSSP, the private n, bounds histograms,
centres, private levels, the Tukey group fits given the same labels) a seeded dask fit must
equal the pandas fit up to floating rounding; with the default random labels the Tukey
releases are compared in distribution. Also: no value depends on the partitioning, no
metadata scan runs, only small aggregates come back, and what is not built yet is refused
before anything is charged.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import importlib  # noqa: E402

import dpstats as dp  # noqa: E402
import dpstats.dask.engine as engine  # noqa: E402
import dpstats.dask.passes as passes  # noqa: E402
import dpstats.dask.select as dask_select  # noqa: E402
import dpstats.dask.speculate as speculate  # noqa: E402
import dpstats.estimators.tukey.linear as tukey_linear  # noqa: E402
import dpstats.selection.sublasso as sublasso  # noqa: E402
from dpstats.errors import ValidationError  # noqa: E402
from dpstats.mechanisms.sampling import group_seed  # noqa: E402

dask_run = importlib.import_module("dpstats.dask.run")      # the module, not dask.run()
cloudpickle.register_pickle_by_value(sys.modules[__name__])   # label sources go to workers


def frame(n: int = 6000, seed: int = 0, text: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-2, 2, n),
                       "x3": rng.normal(3.0, 2.0, n)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + 0.5 * df.x3 + rng.normal(size=n)
    df.loc[::97, "x1"] = np.nan              # missing and infinite inputs: dropped rows
    df.loc[5::101, "x2"] = np.inf
    if text:
        df["g"] = rng.choice(["a", "b", "c"], size=n)
        df["y"] += (df.g == "b") * 1.5
    return df


class FixedLabels:
    """Labels from a fixed uniform per row of the original frame (by its index): the same
    labels in memory and on dask, whatever the partitioning (test-only label source)."""

    def __init__(self, u: np.ndarray, draw: bool = True):
        self.u, self.draw = u, draw

    def __call__(self, part, index, n, m, seed):
        lab = (self.u[np.asarray(index)] * m).astype(np.int64)
        assert lab.size == n
        return lab

    def in_memory(self, n, m, rng):
        if self.draw:                        # where the dask path draws its seed (draw=False:
            group_seed(rng)                  # drawn before the count, seed_before_count)
        return (self.u[:n] * m).astype(np.int64)


def seed_before_count(monkeypatch):
    """Make the in-memory fit draw two seeds right before the row count, where a dask fit
    that may run Tukey draws its group seed and its windows' subsample seed
    (dpstats.dask.speculate): the two draw for draw alike."""
    import dpstats.pipeline.run as pipeline_run
    real = pipeline_run.plan_budget

    def plan_budget(request, *args, **kwargs):
        group_seed(request.rng)
        group_seed(request.rng)
        return real(request, *args, **kwargs)
    monkeypatch.setattr(pipeline_run, "plan_budget", plan_budget)


def group_passes(monkeypatch) -> list:
    """The names of the passes the Tukey engine folds (a spy on engine.fold_frame)."""
    seen, real = [], engine.fold_frame

    def spy(ddf, fn, *args, **kwargs):
        seen.append(type(fn).__name__)
        return real(ddf, fn, *args, **kwargs)
    monkeypatch.setattr(engine, "fold_frame", spy)
    return seen


def test_adassp_equals_pandas_and_partitioning(client):
    df = frame()
    # no standard errors on dask yet: compare with a pandas fit that spends nothing on them
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, eps=1.0, method="adassp", random_state=3,
                 inference_share=0.0)
    for parts in (1, 4, 7):
        b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), eps=1.0,
                     method="adassp", random_state=3, inference_share=0.0)
        np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)
        np.testing.assert_allclose(np.r_[b.clip], np.r_[a.clip], rtol=1e-12)
        assert b.spent == a.spent and list(b.ledger.mechanism) == list(a.ledger.mechanism)


@pytest.mark.parametrize("method, opts", [("bas", {"T": 8, "inference_share": 0.0}),
                                          ("dpgd", {"epochs": 8})])
def test_per_round_methods_equal_pandas(client, method, opts):
    """Boosted AdaSSP and DP-GD: one pass per round, the same releases as in memory."""
    df = frame()
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, eps=1.0, method=method, random_state=3, **opts)
    b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=3), eps=1.0,
                 method=method, random_state=3, **opts)
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)


@pytest.mark.parametrize("held", [True, False])
def test_tukey_equals_pandas_given_the_same_labels(client, monkeypatch, held):
    """With ``held`` the first pass's subsample holds every row and the group sums at the
    chosen m come from those rows on their worker; else (the subsample thinned) from a
    GroupPass. Either way the pandas fit's models, given the same labels."""
    from dpstats.dask import fold
    if not held:
        monkeypatch.setattr(fold, "SAMPLE_ROWS", 1000)
    df = frame().dropna()
    df = df[np.isfinite(df.x2)].reset_index(drop=True)   # labels by index: every row kept
    labels = FixedLabels(np.random.default_rng(9).random(len(df)), draw=False)
    monkeypatch.setattr(tukey_linear, "partition_labels", labels.in_memory)
    monkeypatch.setattr(engine, "LABELS", labels)
    seed_before_count(monkeypatch)
    seen = group_passes(monkeypatch)
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, eps=1.0, method="tukey", random_state=4)
    for parts in (3, 5):
        b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), eps=1.0,
                     method="tukey", random_state=4)
        assert b.n_noisy == a.n_noisy and b.ptr.passed == a.ptr.passed
        np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-6)
    # m chosen from the count is not the first pass's guess (the cap): one group pass each,
    # unless the rows are held
    assert seen == ([] if held else ["GroupPass", "GroupPass"])


@pytest.mark.parametrize("m, passes_after, rows", [(120, [], 1 << 21), (120, [], 1000),
                                                   ("half", [], 1 << 21),
                                                   ("half", ["GroupPass"], 1000)])
def test_tukey_group_sums_from_the_first_pass(client, monkeypatch, m, passes_after, rows):
    """At the first pass's guess of m (here the user's m) the Tukey fit reads no more data and
    equals the pandas fit given the same labels; sums taken at another m are never used (a
    broken variant that used them would fit the wrong groups and differ). At another m the
    group sums come from the rows the first pass holds, or (its subsample thinned at
    ``rows``) from a GroupPass."""
    from dpstats.dask import fold
    monkeypatch.setattr(fold, "SAMPLE_ROWS", rows)
    df = frame().dropna()
    df = df[np.isfinite(df.x2)].reset_index(drop=True)
    labels = FixedLabels(np.random.default_rng(5).random(len(df)), draw=False)
    monkeypatch.setattr(tukey_linear, "partition_labels", labels.in_memory)
    monkeypatch.setattr(engine, "LABELS", labels)
    seed_before_count(monkeypatch)
    seen = group_passes(monkeypatch)
    if m == "half":                         # the guess is 240 models, the fit asks for 120
        monkeypatch.setattr(speculate, "guess_models", lambda *a: 240)
        monkeypatch.setattr(dask_run, "guess_models", lambda *a: 240)
        m = 120
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, eps=1.0, method="tukey", m=m, random_state=7)
    b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=4), eps=1.0,
                 method="tukey", m=m, random_state=7)
    assert seen == passes_after
    assert b.ptr.passed == a.ptr.passed and b.m == a.m == 120
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-6)


def test_tukey_distribution_matches_pandas(client):
    """Default random labels: the released slope has the same distribution (KS test)."""
    from scipy.stats import ks_2samp
    df = frame(3000)
    ddf = dd.from_pandas(df, npartitions=3)
    kw = {"eps": 2.0, "method": "tukey"}      # (the default picks BAS at this size)
    a = [dp.dp_lm("y ~ x1 + x2 + x3", df, random_state=s, **kw).params["x1"]
         for s in range(30)]
    b = [dp.dp_lm("y ~ x1 + x2 + x3", ddf, random_state=100 + s, **kw).params["x1"]
         for s in range(30)]
    assert ks_2samp(a, b).pvalue > 0.001


def test_text_column_levels_discovered_privately(client):
    df = frame(text=True)
    a = dp.dp_lm("y ~ .", df, eps=2.0, method="adassp", select=None, random_state=5,
                 inference_share=0.0)
    b = dp.dp_lm("y ~ .", dd.from_pandas(df, npartitions=4), eps=2.0, method="adassp",
                 select=None, random_state=5, inference_share=0.0)
    assert list(b.params.index) == list(a.params.index)
    assert "levels" in set(b.ledger.stage.str.split(":").str[0])
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)


def test_declared_categorical_needs_no_levels_stage(client):
    df = frame(text=True)
    df["g"] = pd.Categorical(df.g, categories=["a", "b", "c"])
    b = dp.dp_lm("y ~ .", dd.from_pandas(df, npartitions=3), eps=2.0, method="adassp",
                 select=None, random_state=5)
    assert "g[T.b]" in b.params.index
    assert "levels" not in set(b.ledger.stage)


def test_no_metadata_scan(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a metadata scan ran")
    cls = type(dd.from_pandas(frame(10), npartitions=1))
    for name in ("categorize", "unique", "nunique", "value_counts", "drop_duplicates",
                 "compute", "persist", "head"):
        monkeypatch.setattr(cls, name, refuse, raising=False)
    df = frame(text=True)
    for method in ("adassp", "tukey"):
        dp.dp_lm("y ~ .", dd.from_pandas(df, npartitions=3), eps=2.0, method=method,
                 select=None, random_state=1)


def test_only_small_aggregates_come_back(client, monkeypatch):
    sizes = {}
    real = passes.reduce_frame

    def spy(ddf, fn):
        out = real(ddf, fn)
        sizes.setdefault(len(ddf.dask) and ddf.npartitions, []).append(_nbytes(out))
        return out
    monkeypatch.setattr(passes, "reduce_frame", spy)
    monkeypatch.setattr(engine, "reduce_frame", spy)
    import importlib
    run_mod = importlib.import_module("dpstats.dask.run")   # the module, not dask.run()
    monkeypatch.setattr(run_mod, "reduce_frame", spy)
    for n in (2000, 16000):
        sizes.clear()
        dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(frame(n), npartitions=4), eps=1.0,
                 method="adassp", random_state=2)
        got = sizes[4]
        if n == 2000:
            small = got
    assert got == small            # the aggregates do not grow with the rows
    assert max(got) < 100_000


def _nbytes(obj) -> int:
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return sum(_nbytes(v) for v in obj)
    return int(getattr(obj, "nbytes", 8))


@pytest.mark.parametrize("call", [
    lambda d, b: dp.dp_lm("y ~ x1 + x2", d, eps=1.0, method="bas", variant="paper", budget=b),
    lambda d, b: dp.dp_lm("y ~ x1 + x2", d, eps=1.0, method="adassp", budget=b,
                          bounds_method="quantile"),
])
def test_refusals_charge_nothing(client, call):
    df = frame(500)
    df["g"] = (df.y > 1).astype(float)
    budget = dp.Budget(3.0, 1e-5)
    with pytest.raises(ValidationError, match="dask"):
        call(dd.from_pandas(df, npartitions=2), budget)
    assert budget.spent == (0.0, 0.0)


def wide(n: int = 8000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    df["y"] = 2 * df.x1 - 1.5 * df.x4 + df.x6 + rng.normal(size=n)
    return df


def test_sublasso_selection_equals_pandas_given_the_same_labels(client, monkeypatch):
    df = wide()
    labels = FixedLabels(np.random.default_rng(3).random(len(df)))
    monkeypatch.setattr(sublasso, "random_groups", labels.in_memory)
    monkeypatch.setattr(engine, "LABELS", labels)
    kw = {"eps": 1.0, "method": "adassp", "select": "sublasso", "k": 3, "random_state": 6,
          "inference_share": 0.0}
    a = dp.dp_lm("y ~ .", df, **kw)
    b = dp.dp_lm("y ~ .", dd.from_pandas(df, npartitions=3), **kw)
    assert b.selected == a.selected
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)


def test_default_fit_selects_on_dask(client):
    """select='auto' (SubLasso or DPKendall by the released n) and the default method."""
    df = wide()
    for n_parts in (1, 4):
        fit = dp.dp_lm("y ~ .", dd.from_pandas(df, npartitions=n_parts), eps=3.0, k=3,
                       random_state=2)
        assert sorted(fit.selected) == ["x1", "x4", "x6"]


def test_kendall_on_a_subsample(client, monkeypatch):
    monkeypatch.setattr(dask_select, "SAMPLE_ROWS", 2000)
    fit = dp.dp_lm("y ~ .", dd.from_pandas(wide(), npartitions=3), eps=5.0, k=3,
                   select="kendall", random_state=2)
    assert sorted(fit.selected) == ["x1", "x4", "x6"]
    assert any("subsample" in note for note in fit.notes)


def test_select_runs_on_dask(client):
    sel = dp.select("y ~ .", dd.from_pandas(wide(), npartitions=2), eps=5.0, k=3,
                    random_state=0)
    assert sorted(sel.selected) == ["x1", "x4", "x6"]


def test_dp_glm_dpgd_equals_pandas(client):
    df = frame()
    df["g"] = (df.y > 1.5).astype(float)
    df = df.drop(columns="y")
    kw = {"eps": 2.0, "method": "dpgd", "epochs": 8, "random_state": 4}
    a = dp.dp_glm("g ~ x1 + x2 + x3", df, **kw)
    b = dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=3), **kw)
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)


class WhereRun:
    """A fold step that records which worker ran each partition (picklable)."""

    def __call__(self, acc, pdf, part):
        from distributed import get_worker
        return (acc or []) + [(part, get_worker().address)]


def test_fold_chains_stay_on_their_workers(client):
    """Pinned folds: every step of a chain (its reads included) runs on one worker, and the
    chains use different workers, so the accumulator never moves mid-chain."""
    from dpstats.dask.fold import fold_frame
    ddf = dd.from_pandas(frame(2000), npartitions=6)
    runs = fold_frame(ddf, WhereRun(), sorted)
    assert [p for p, _ in runs] == list(range(6))
    where = {p % 2: set() for p in range(6)}
    for p, addr in runs:
        where[p % 2].add(addr)
    assert all(len(w) == 1 for w in where.values()) and where[0] != where[1]


@pytest.mark.parametrize("pin", [True, False])
def test_fused_pass_equals_the_whole(client, monkeypatch, pin):
    """The fused fold (count, log-grid counts, centre cells added as key counts, group sums)
    equals the first pass and the group sums of the whole design, pinned or not."""
    from dpstats.dask import fold
    from dpstats.dask.design import PartitionDesign
    monkeypatch.setattr(fold, "PIN_CHAINS", pin)
    df = frame(3000).dropna()
    df = df[np.isfinite(df.x2)].reset_index(drop=True)
    part = PartitionDesign("y ~ x1 + x2 + x3", "lm", ("Intercept", "x1", "x2", "x3"))
    labels = FixedLabels(np.random.default_rng(2).random(len(df)), draw=False)
    fused = fold.FusedPass(passes.FirstPass(part, centre=True), 40, 0, labels)
    got = fold.fold_frame(dd.from_pandas(df, npartitions=5), fused, fold.fused_total)
    X, y = part(df)
    want = passes.FirstPass(part, centre=True).stats(X, y)
    assert got["n"] == want["n"] and got["raw"] is not None
    np.testing.assert_array_equal(got["hist"], want["hist"])
    for a, b in zip(got["cells"], want["cells"], strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    lab = labels(0, df.index, len(df), 40, 0)
    np.testing.assert_allclose(got["groups"], passes.group_sums(X, y, lab, 40), rtol=1e-10)
