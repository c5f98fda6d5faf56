"""No released value depends on the cluster: seeded dask fits on a LocalCluster of one worker
process and of two release the same values, bit for bit, and so do the group models the Tukey
mechanism reads (the fold chains' count is a public setting, not the workers the scheduler
lists). What the fit reads from integer statistics (row count, bounds, centre) is also the
same bit for bit on any partitioning.
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
#: pass holds (no second read), from a GroupPass (the cap lowered: the subsample thinned), and
#: the default fit.
CASES = [("tukey_held", {"method": "tukey"}, 1 << 21),
         ("tukey_pass", {"method": "tukey"}, 1000),
         ("default", {}, 1 << 21)]


def seeded_fits(workers: int, monkeypatch) -> dict:
    """Every case's released values and the group models it fitted, on a fresh cluster of
    ``workers`` worker processes, for frames of 4 and 5 partitions."""
    models = []
    fit_models = engine.Engine.fit_models

    def spy(self, *args, **kwargs):
        out = fit_models(self, *args, **kwargs)
        models.append(digest(out))
        return out
    monkeypatch.setattr(engine.Engine, "fit_models", spy)
    out = {}
    cluster = distributed.LocalCluster(n_workers=workers, processes=True,
                                       threads_per_worker=1, dashboard_address=None)
    with distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == workers
        for parts in (4, 5):
            ddf = dd.from_pandas(frame(), npartitions=parts)
            for name, kw, cap in CASES:
                monkeypatch.setattr(fold, "SAMPLE_ROWS", cap)
                del models[:]
                fit = dp.dp_lm("y ~ x1 + x2 + x3", ddf, eps=1.0, random_state=7, **kw)
                out[name, parts] = (released(fit), tuple(models))
    cluster.close()
    return out


def test_seeded_fits_equal_on_one_and_two_workers(monkeypatch):
    """The same seeded fits on one worker and on two release the same values and fit the same
    group models, bit for bit (before, the fold had one chain per listed worker: on one worker
    the partitions' group sums were added in another order, so the models' floats differed,
    and a release could; a release then also depended on how many workers the scheduler
    listed at that moment)."""
    one = seeded_fits(1, monkeypatch)
    two = seeded_fits(2, monkeypatch)
    assert one["tukey_held", 4][1] and one["tukey_pass", 5][1]     # the spy saw the models
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
