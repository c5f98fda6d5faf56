"""Standard errors on a dask frame equal the pandas fit's (issue 17).

AdaSSP and Boosted AdaSSP: the residual sums (and, for ``cov_type="HC1"``, the clipped meat)
are computed on the workers at the released fit and released on the client by the in-memory
mechanisms, so a seeded dask fit's ``bse`` and ``conf_int`` equal the pandas fit's up to
rounding, and so do the budget and the ledger. Tukey: given the same group labels, below
``SCALE_ROWS`` rows (every row in the windows' sample, nothing drawn) the seeded intervals are
equal; above it the windows' rows are a Bernoulli subsample drawn on the workers, compared in
distribution. A broken variant (residuals at a wrong fit) must differ.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from test_dask_fit import FixedLabels, group_passes, seed_before_count  # noqa: E402

import dpstats as dp  # noqa: E402
import dpstats.dask.engine as engine  # noqa: E402
import dpstats.dask.inference as dask_inference  # noqa: E402
import dpstats.estimators.inference.tukey as tukey_inference  # noqa: E402
import dpstats.estimators.tukey.linear as tukey_linear  # noqa: E402


def clean(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-2, 2, n)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + (0.5 + np.abs(df.x1)) * rng.normal(size=n)
    return df


def same_intervals(a, b, rtol=1e-7, finite: int = 3):
    assert np.isfinite(a.bse.to_numpy()).sum() >= finite
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(b.bse.to_numpy(), a.bse.to_numpy(), rtol=rtol)
    np.testing.assert_allclose(b.conf_int().to_numpy(), a.conf_int().to_numpy(), rtol=rtol)
    assert b.spent == a.spent and list(b.ledger.mechanism) == list(a.ledger.mechanism)


@pytest.mark.parametrize("method, opts", [
    ("adassp", {}), ("bas", {"T": 6, "cov_type": "HC1"}),
    pytest.param("adassp", {"cov_type": "HC1"}, marks=pytest.mark.slow),
    pytest.param("bas", {"T": 6}, marks=pytest.mark.slow)])
def test_ssp_intervals_equal_pandas(client, method, opts):
    df = clean(60_000)
    eps = 8.0 if method == "adassp" else 1.0      # AdaSSP's intervals need n * eps >= 390,000
    a = dp.dp_lm("y ~ x1 + x2", df, eps=eps, method=method, random_state=5, **opts)
    b = dp.dp_lm("y ~ x1 + x2", dd.from_pandas(df, npartitions=3), eps=eps, method=method,
                 random_state=5, **opts)
    same_intervals(a, b)


def test_ssp_intervals_catch_residuals_at_a_wrong_fit(client, monkeypatch):
    """A variant that sums the residuals at another fit gives other standard errors."""
    real = dask_inference.ResidualRows.rss
    monkeypatch.setattr(dask_inference.ResidualRows, "rss",
                        lambda self, theta: real(self, np.asarray(theta) * 0.5))
    df = clean(60_000)
    a = dp.dp_lm("y ~ x1 + x2", df, eps=1.0, method="adassp", random_state=5)
    b = dp.dp_lm("y ~ x1 + x2", dd.from_pandas(df, npartitions=3), eps=1.0, method="adassp",
                 random_state=5)
    assert not np.allclose(b.bse.to_numpy(), a.bse.to_numpy(), rtol=1e-3)


def test_tukey_intervals_equal_pandas_given_the_same_labels(client, monkeypatch):
    df = clean(20_000)                     # below SCALE_ROWS: the windows read every row
    labels = FixedLabels(np.random.default_rng(9).random(len(df)), draw=False)
    monkeypatch.setattr(tukey_linear, "partition_labels", labels.in_memory)
    monkeypatch.setattr(engine, "LABELS", labels)
    seed_before_count(monkeypatch)
    group_passes(monkeypatch)
    a = dp.dp_lm("y ~ x1 + x2", df, eps=1.0, method="tukey", random_state=4)
    b = dp.dp_lm("y ~ x1 + x2", dd.from_pandas(df, npartitions=3), eps=1.0, method="tukey",
                 random_state=4)
    assert a.inference.method.startswith("Tukey")
    same_intervals(a, b, rtol=1e-6, finite=2)   # (a window count out of range: NaN in both)
    ca, cb = a.cov_params().to_numpy(), b.cov_params().to_numpy()   # the design moments:
    assert np.isfinite(ca[0, 1]) or np.isfinite(ca[1, 2])            # summed on the workers
    np.testing.assert_allclose(cb, ca, rtol=1e-6)


def spy_rows(monkeypatch) -> list:
    """``(q, rows)`` of every subsample the Tukey intervals read on dask: the windows'
    (``TukeyRows.sample``) and the design moments' (``TukeyRows.moment_sums``: its rows
    counted from the held subsample, which draws nothing, or NaN when a pass brings them)."""
    calls = []
    sample, sums = dask_inference.TukeyRows.sample, dask_inference.TukeyRows.moment_sums

    def spy_sample(self, q, rng):
        out = sample(self, q, rng)
        calls.append((q, out[0].shape[0]))
        return out

    def spy_sums(self, q, rng, *args):
        spec = self.speculative
        held = spec is not None and q <= spec["thr"]
        calls.append((q, sample(self, q, rng)[0].shape[0] if held else np.nan))
        return sums(self, q, rng, *args)
    monkeypatch.setattr(dask_inference.TukeyRows, "sample", spy_sample)
    monkeypatch.setattr(dask_inference.TukeyRows, "moment_sums", spy_sums)
    return calls


def tukey_bse(data, seeds) -> np.ndarray:
    return np.array([dp.dp_lm("y ~ x1 + x2", data, eps=1.0, method="tukey",
                              random_state=s).bse["x1"] for s in seeds])


@pytest.mark.slow
def test_tukey_intervals_from_a_subsample(client, monkeypatch):
    """Above the windows' row cap the dask fit draws the Bernoulli subsample on the workers
    (one sample pass) and releases finite standard errors of the in-memory size."""
    df = clean(3 * tukey_inference.SCALE_ROWS)     # the windows read a third of the rows
    calls = spy_rows(monkeypatch)
    a = tukey_bse(df, range(2))
    b = tukey_bse(dd.from_pandas(df, npartitions=2), range(100, 102))
    assert [q for q, _ in calls] == [1 / 3, 1.0] * 2
    assert np.isfinite(a).all() and np.isfinite(b).all()
    assert 0.5 < b.mean() / a.mean() < 2.0


def test_tukey_windows_sample_a_share_of_the_rows(client, monkeypatch):
    """Fast variant: above the row cap (here lowered) the windows' rows are a Bernoulli
    subsample of the frame at ``q = 1 / parts``, drawn on the workers."""
    monkeypatch.setattr(tukey_inference, "SCALE_ROWS", 1500)
    monkeypatch.setattr(tukey_inference, "SCALE_NEPS", 0.0)    # the cap alone sets the rate
    calls = spy_rows(monkeypatch)
    fit = dp.dp_lm("y ~ x1 + x2", dd.from_pandas(clean(6000), npartitions=2), eps=1.0,
                   method="tukey", random_state=3)
    assert [q for q, _ in calls] == [0.25, 1.0] and 1000 < calls[0][1] < 2000
    assert calls[1][1] == 6000           # the design moments: every row below MOMENT_ROWS
    assert "inference" in set(fit.ledger.stage)


@pytest.mark.slow
def test_tukey_intervals_distribution_matches_pandas(client, monkeypatch):
    """The released standard errors have the in-memory law (KS test on the slope's bse)."""
    from scipy.stats import ks_2samp
    df = clean(3 * tukey_inference.SCALE_ROWS)
    a = tukey_bse(df, range(40))
    b = tukey_bse(dd.from_pandas(df, npartitions=2), range(100, 140))
    assert np.isfinite(a).mean() >= 0.9 and np.isfinite(b).mean() >= 0.9   # Q_NOISE may
    assert ks_2samp(a[np.isfinite(a)], b[np.isfinite(b)]).pvalue > 0.001     # withhold one
