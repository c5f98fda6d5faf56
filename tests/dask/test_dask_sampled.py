"""DPKendall and DP-SIS on a Bernoulli subsample on dask: the law of the selection.

On dask these selectors run in memory on a subsample that keeps each row with probability
``q = SAMPLE_ROWS / n_hat`` (:mod:`dpstats.dask.select`). The reference is the in-memory
selector on a Bernoulli(q) subsample of the pandas frame, with the same selection budget.
Over seeds, the number of truly active columns each run selects (0..k) must have the same
distribution in both (two-sided Mann-Whitney test), and a broken variant (the rate four
times too large, as if the rate were computed from n / 4) must be told apart by the same
test. Seeds are fixed, so the outcome is deterministic.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")


import dpstats as dp  # noqa: E402
import dpstats.dask.select as dask_select  # noqa: E402
from dpstats.selection import run_selector  # noqa: E402

#: The LocalCluster (two worker processes) of test_dask_fit, one per module.
FULL = os.environ.get("DPSTATS_FULL", "") == "1"
ACTIVE = {1, 4, 6}
N = 8000
#: The selectors' sample size on dask here (q = 1/8 for Kendall, 1/4 for SIS at N rows).
ROWS = {"kendall": 1000, "sis": 2000}
#: Total eps of each dask call (the selection gets it less the private count's share).
EPS = {"kendall": 0.25, "sis": 12.0}


def data() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(N, 8)), columns=[f"x{j}" for j in range(8)])
    df["y"] = 0.5 * df.x1 - 0.4 * df.x4 + 0.3 * df.x6 + rng.normal(size=N)
    return df


def hits(selected) -> int:
    return len({int(str(c)[1:]) for c in selected} & ACTIVE)


def dask_hits(ddf, method: str, seeds, sampled: bool = True) -> tuple[list[int], float]:
    """Active columns selected by dp.select on dask, per seed, and the selection's eps."""
    out, eps_sel = [], None
    for s in seeds:
        sel = dp.select("y ~ .", ddf, eps=EPS[method], k=3, method=method, random_state=s)
        assert any("subsample" in note for note in sel.notes) or not sampled
        out.append(hits(sel.selected))
        eps_sel = float(sel.ledger.eps[sel.ledger.stage.str.startswith("selection")].sum())
    return out, eps_sel


def reference_hits(df, method: str, q: float, eps_sel: float, seeds) -> list[int]:
    """The in-memory selector on a Bernoulli(q) subsample, with the same selection budget."""
    X, y = df.drop(columns="y").to_numpy(), df.y.to_numpy()
    out = []
    for s in seeds:
        rng = np.random.default_rng(10_000 + s)
        keep = rng.random(N) < q
        sel = run_selector(method, X[keep], y[keep], k=3, eps=eps_sel, rng=rng,
                           ledger=None, stage="selection", bounds="auto", columns=None)
        out.append(len(set(sel.indices) & ACTIVE))
    return out


def same_law(a, b) -> float:
    from scipy.stats import mannwhitneyu
    if len(set(a) | set(b)) == 1:
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def check(monkeypatch, method: str, runs: int) -> None:
    monkeypatch.setattr(dask_select, "SAMPLE_ROWS", ROWS[method])
    df = data()
    ddf = dd.from_pandas(df, npartitions=3)
    real, eps_sel = dask_hits(ddf, method, range(runs))
    ref = reference_hits(df, method, ROWS[method] / N, eps_sel, range(runs))
    assert min(ref) < 3                       # the subsample is small enough to matter
    assert same_law(real, ref) > 0.01, (real, ref)
    # broken variant: the rate four times too large
    real_rate = dask_select.sample_rate
    monkeypatch.setattr(dask_select, "sample_rate", lambda n: min(1.0, 4 * real_rate(n)))
    broken, _ = dask_hits(ddf, method, range(runs, 2 * runs), sampled=False)
    assert same_law(broken, ref) < 0.01, (broken, ref)


@pytest.mark.parametrize("method", ["kendall", "sis"])
def test_sampled_selector_has_the_in_memory_law(client, monkeypatch, method):
    check(monkeypatch, method, 12)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="120 dask selections per selector (DPSTATS_FULL=1)")
@pytest.mark.parametrize("method", ["kendall", "sis"])
def test_sampled_selector_has_the_in_memory_law_many_seeds(client, monkeypatch, method):
    check(monkeypatch, method, 60)
