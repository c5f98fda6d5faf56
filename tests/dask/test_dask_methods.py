"""Every method on a dask frame, on a real LocalCluster (the cluster of test_dask_fit).

Frank-Wolfe (dp_lm and dp_glm, with and without screening), output and objective
perturbation and dp_glm's ``method="auto"`` run the in-memory algorithm on statistics summed
on the workers: a seeded dask fit must equal the pandas fit up to rounding, at any
partitioning, with the same ledger. dp_glm's Tukey mechanism shuffles the rows by their random
group label: equal to pandas given the same labels, and equal in distribution with the
default labels (slow).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from test_dask_fit import FixedLabels, frame  # noqa: E402

import dpstats as dp  # noqa: E402
import dpstats.dask.engine as engine  # noqa: E402
import dpstats.dask.glm as dask_glm  # noqa: E402
import dpstats.estimators.tukey.linear as tukey_linear  # noqa: E402
from dpstats.errors import ValidationError  # noqa: E402

#: The LocalCluster (two worker processes) of test_dask_fit, one per module.
FULL = os.environ.get("DPSTATS_FULL", "") == "1"


def binary(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    df = frame(n, seed)
    df["g"] = (df.y > 1.5).astype(float)
    return df.drop(columns="y")


def same(a, b, rtol=1e-9):
    """Equal coefficients and ledgers; where the dask fit releases no standard errors (its
    share set aside), the in-memory fit's 'inference' stage is left out, else the standard
    errors agree too."""
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=rtol, atol=1e-12)
    la = a.ledger
    if "inference" in set(b.ledger.stage):
        np.testing.assert_allclose(b.bse.to_numpy(), a.bse.to_numpy(), rtol=1e-6)
    else:
        la = a.ledger[a.ledger.stage != "inference"]
    assert list(b.ledger.mechanism) == list(la.mechanism)
    np.testing.assert_allclose(b.ledger.eps.to_numpy(), la.eps.to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("parts, opts", [(1, {"T": 25}), (4, {"T": 25}),
                                         (3, {"T": 25, "screen": 5})])
def test_fw_lm_equals_pandas(client, parts, opts):
    df = frame()
    a = dp.dp_lm("y ~ x1 + x2 + x3", df, eps=1.0, method="fw", random_state=3, **opts)
    b = dp.dp_lm("y ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), eps=1.0,
                 method="fw", random_state=3, **opts)
    same(a, b)
    assert np.count_nonzero(a.params.to_numpy()) > 1           # not a trivial all-zero fit
    if "screen" in opts:
        assert any("screening" in stage for stage in b.ledger.stage)


@pytest.mark.parametrize("method, opts", [("fw", {"T": 25}), ("outpert", {}), ("objpert", {}),
                                          ("auto", {})])
def test_glm_methods_equal_pandas(client, method, opts):
    df = binary()
    for parts in (1, 3):
        a = dp.dp_glm("g ~ x1 + x2 + x3", df, eps=2.0, method=method, random_state=4, **opts)
        b = dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=parts), eps=2.0,
                      method=method, random_state=4, **opts)
        same(a, b)


def test_glm_auto_chooses_objpert_on_more_rows(client):
    df = binary(20000)
    a = dp.dp_glm("g ~ x1 + x2 + x3", df, eps=2.0, random_state=1)
    b = dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=4), eps=2.0,
                  random_state=1)
    assert "objective perturbation" in set(b.ledger.mechanism)
    same(a, b)


def test_glm_auto_withholds_on_few_rows_and_spends_only_the_count(client):
    df = binary(150)
    a = dp.dp_glm("g ~ x1 + x2 + x3", df, eps=1.0, random_state=2)
    b = dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=2), eps=1.0,
                  random_state=2)
    assert not a.released and not b.released
    assert b.spent == a.spent and a.spent[0] < 0.1


def test_intercept_only_release_equals_pandas(client):
    """Pure noise: the threshold picks an intercept-only model; class counts on the workers."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x1": rng.normal(size=3000)})
    df["g"] = (rng.uniform(size=3000) < 0.2).astype(float)
    a = dp.dp_glm("g ~ x1", df, eps=1.0, method="outpert", random_state=7)
    b = dp.dp_glm("g ~ x1", dd.from_pandas(df, npartitions=3), eps=1.0, method="outpert",
                  random_state=7)
    same(a, b)


def test_ridge_solver_passes_are_few(client, monkeypatch):
    """The solver's evaluations are the passes (one each): a handful, not hundreds."""
    made = []
    real = dask_glm.DaskRows.ridge_fit

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        made.append(self.passes)
        return out
    monkeypatch.setattr(dask_glm.DaskRows, "ridge_fit", spy)
    dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(binary(), npartitions=3), eps=2.0,
              method="outpert", random_state=4)
    assert 2 <= made[0] <= 15


def test_glm_tukey_equals_pandas_given_the_same_labels(client, monkeypatch):
    rng = np.random.default_rng(0)
    n = 30000
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-2, 2, n)})
    df["g"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.5 + df.x1 - df.x2)))).astype(float)
    labels = FixedLabels(np.random.default_rng(9).random(n))
    monkeypatch.setattr(tukey_linear, "partition_labels", labels.in_memory)
    monkeypatch.setattr(engine, "LABELS", labels)
    kw = {"eps": 5.0, "method": "tukey", "m": 300, "random_state": 4}
    a = dp.dp_glm("g ~ x1 + x2", df, **kw)
    assert a.released
    b = dp.dp_glm("g ~ x1 + x2", dd.from_pandas(df, npartitions=3), **kw)
    same(a, b, rtol=1e-6)
    # the intervals too: the same scales, weighted moments and window counts (every row)
    assert np.isfinite(a.bse).all() and np.isfinite(b.bse).all()
    assert "inference" in set(b.ledger.stage) and b.spent == a.spent
    np.testing.assert_allclose(b.cov_params().to_numpy(), a.cov_params().to_numpy(), rtol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="60 fits, about 60 s (DPSTATS_FULL=1)")
def test_glm_tukey_distribution_matches_pandas(client):
    """Default random labels (shuffled on dask): the released slope has the same law."""
    from scipy.stats import ks_2samp
    rng = np.random.default_rng(1)
    n = 20000
    df = pd.DataFrame({"x1": rng.normal(size=n)})
    df["g"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + df.x1)))).astype(float)
    ddf = dd.from_pandas(df, npartitions=3)
    kw = {"eps": 3.0, "method": "tukey", "m": 300}
    a = [dp.dp_glm("g ~ x1", df, random_state=s, **kw).params["x1"] for s in range(30)]
    b = [dp.dp_glm("g ~ x1", ddf, random_state=100 + s, **kw).params["x1"] for s in range(30)]
    assert ks_2samp(a, b).pvalue > 0.001


def test_ols_is_refused_and_charges_nothing(client):
    budget = dp.Budget(3.0, 1e-5)
    with pytest.raises(ValidationError, match="dask"):
        dp.dp_lm("y ~ x1 + x2", dd.from_pandas(frame(300), npartitions=2), eps=1.0,
                 method="ols", budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_no_metadata_scan_for_the_new_methods(client, monkeypatch):
    """FW, the logistic solvers and the shuffle by label compute nothing but their passes."""
    def refuse(*args, **kwargs):
        raise AssertionError("a metadata scan ran")
    cls = type(dd.from_pandas(frame(10), npartitions=1))
    for name in ("categorize", "unique", "nunique", "value_counts", "drop_duplicates",
                 "compute", "persist", "head", "quantile"):
        monkeypatch.setattr(cls, name, refuse, raising=False)
    df = binary(4000)
    ddf = dd.from_pandas(df, npartitions=3)
    dp.dp_lm("x3 ~ x1 + x2", ddf, eps=1.0, method="fw", T=5, random_state=1)
    for method, opts in (("objpert", {}), ("tukey", {"m": 60})):
        dp.dp_glm("g ~ x1 + x2", ddf, eps=3.0, method=method, random_state=1, **opts)


def test_importing_the_run_module_first_keeps_dp_lm_working():
    """``import dpstats.dask.run`` before the API loads must not shadow ``dpstats.dask.run``
    (the function the API calls) with the module of the same name."""
    import subprocess
    import sys
    code = ("import dpstats, dpstats.dask.run, numpy as np, pandas as pd\n"
            "df = pd.DataFrame({'x': np.arange(500.0) % 7}); df['y'] = df.x\n"
            "dpstats.dp_lm('y ~ x', df, eps=1.0, method='adassp', random_state=0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr[-500:]


def test_objpert_standard_errors_on_dask_equal_pandas(client):
    """dp_glm's default at larger n (objective perturbation) releases the same standard
    errors on dask: the Fisher information's exact sum from the threshold's pass on the
    workers, the noise on the client (a dask fit without them, as before, fails here)."""
    df = binary(60000, seed=1)
    a = dp.dp_glm("g ~ x1 + x2 + x3", df, eps=2.0, method="objpert", random_state=5)
    b = dp.dp_glm("g ~ x1 + x2 + x3", dd.from_pandas(df, npartitions=3), eps=2.0,
                  method="objpert", random_state=5)
    assert np.isfinite(a.bse).all() and "inference" in set(b.ledger.stage)
    same(a, b)
