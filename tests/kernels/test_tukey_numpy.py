"""The plain-numpy per-group OLS against the numba kernel, and the public-size rule choosing
between them (tukey_ols): numpy below NUMPY_MAX_WORK, the kernel (announced first) above."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpstats._kernels import tukey_ols
from dpstats._kernels.prepare import ahead, request_units
from dpstats._kernels.tukey import group_ols as kernel
from dpstats._kernels.tukey_numpy import group_ols_numpy

ROOT = Path(__file__).resolve().parents[2]


def _rel(got, ref):
    """Largest difference per group relative to that group's largest coefficient."""
    size = np.abs(ref).max(axis=1)
    diff = np.abs(got - ref).max(axis=1)
    return np.where(size > 0, diff / np.where(size > 0, size, 1.0), diff).max()


def _data(n, p, seed, spread=True):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.normal(size=(n, p - 1))
              * (rng.uniform(0.1, 100, p - 1) if spread else 1.0)]
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y, rng


@pytest.mark.parametrize("n,p,m", [(1000, 4, 50), (3000, 9, 330), (600, 15, 40), (400, 25, 12),
                                   (2000, 10, 1), (500, 6, 160)])
def test_full_rank_and_small_groups_match_the_kernel(n, p, m):
    X, y, rng = _data(n, p, n + p + m)
    labels = rng.integers(0, m, size=n)
    assert _rel(group_ols_numpy(X, y, labels, m), kernel(X, y, labels, m)) < 1e-10


@pytest.mark.parametrize("p", [6, 16])     # the Jacobi SVD path and the LAPACK path of the kernel
def test_rank_deficient_groups_match_the_kernel(p):
    X, y, rng = _data(3000, p, p)
    X[:, 2] = (rng.random(3000) < 0.04).astype(float)    # a rare dummy: absent from many groups
    X[:, 4] = X[:, 3]                                    # duplicated columns
    X[:, 5] = 0.0                                        # an all-zero column
    y = X @ rng.normal(size=p) + rng.normal(size=3000)
    labels = rng.integers(0, 150, size=3000)
    got, ref = group_ols_numpy(X, y, labels, 150), kernel(X, y, labels, 150)
    assert np.allclose(got[:, 3], got[:, 4]) and np.abs(got[:, 5]).max() < 1e-12   # min norm
    assert _rel(got, ref) < 1e-10


def test_empty_one_row_and_wide_groups_match_the_kernel():
    X, y, _ = _data(40, 8, 3)
    labels = np.array([0] + [1] * 3 + [2] * 6 + [4] * 30, dtype=np.int64)   # group 3 empty
    got, ref = group_ols_numpy(X, y, labels, 6), kernel(X, y, labels, 6)    # group 5 empty
    assert np.all(got[3] == 0.0) and np.all(got[5] == 0.0)
    # one row: every column is constant, only the first non-zero one (the intercept) is kept
    assert got[0, 0] == pytest.approx(y[0]) and np.all(got[0, 1:] == 0.0)
    np.testing.assert_allclose(got[1], np.linalg.pinv(X[1:4]) @ y[1:4], rtol=1e-9, atol=1e-12)
    assert _rel(got, ref) < 1e-10


def test_a_broken_rank_tolerance_is_caught():
    """The comparison can fail: without the minimum-norm projection in the original
    coordinates, rank-deficient groups differ from the kernel."""
    X, y, rng = _data(400, 5, 9)
    X[:, 4] = 3.0 * X[:, 3]
    labels = rng.integers(0, 10, size=400)
    A = X / np.linalg.norm(X, axis=0)                  # scaled once, minimum norm there
    naive = np.array([np.linalg.pinv(A[labels == g]) @ y[labels == g] for g in range(10)])
    naive /= np.linalg.norm(X, axis=0)
    assert _rel(naive, kernel(X, y, labels, 10)) > 1e-6
    assert _rel(group_ols_numpy(X, y, labels, 10), kernel(X, y, labels, 10)) < 1e-10


@pytest.mark.parametrize("limit, numba", [(10**9, False), (0, True)])
def test_the_public_size_rule_chooses_the_path(monkeypatch, limit, numba):
    calls = []
    monkeypatch.setattr(tukey_ols, "NUMPY_MAX_WORK", limit)
    monkeypatch.setattr("dpstats._kernels.prepare.prepare", lambda names: calls.append(names))
    import dpstats._kernels.tukey as tk
    import dpstats._kernels.tukey_numpy as tn
    real_np, real_k = tn.group_ols_numpy, tk.group_ols
    monkeypatch.setattr(tn, "group_ols_numpy", lambda *a: calls.append("numpy") or real_np(*a))
    monkeypatch.setattr(tk, "group_ols", lambda *a: calls.append("kernel") or real_k(*a))
    X, y, rng = _data(200, 4, 5)
    labels = rng.integers(0, 20, size=200)
    out = tukey_ols.group_ols(X, y, labels, 20)
    assert calls == ([("tukey",), "kernel"] if numba else ["numpy"])   # announced, then run
    assert _rel(out, real_k(X, y, labels, 20)) < 1e-10


def test_rule_reads_groups_and_columns_only():
    assert not tukey_ols.uses_kernel(764, 9)                  # california's demo fit
    assert tukey_ols.uses_kernel(1_000_000 // 60, 20)        # n = 1e6, p = 20
    per_model = 4 * tukey_ols.GROUP_ROWS_PER_COLUMN / 3.0      # p = 2, groups of 30 p rows
    boundary = int(tukey_ols.NUMPY_MAX_WORK // per_model)
    assert tukey_ols.uses_kernel(boundary + 1, 2)
    assert not tukey_ols.uses_kernel(boundary, 2)


def test_the_tukey_unit_is_not_prepared_ahead_of_a_request():
    assert request_units("lm", "tukey", None) == ("tukey",)
    assert ahead(request_units("lm", "tukey", "kendall")) == ("kendall", "shuffle")
    assert ahead(request_units("glm", "tukey", None)) == ("tukey_glm",)


ON_DEMAND = """
import json
import numpy as np, pandas as pd, dpstats as dp
from dpstats._kernels import prepare as pr, tukey_ols
from dpstats._kernels.runtime import compile_stats
tukey_ols.NUMPY_MAX_WORK = 0                 # every Tukey fit takes the kernel
real, seen = pr.prepare, []
def spy(names, **kw):
    out = real(names, **kw)
    seen.append([list(names), list(out), compile_stats()[0]])
    return out
pr.prepare = spy
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(3000, 4)), columns=list("abcd"))
df["y"] = df.a - df.b + rng.normal(size=3000)
dp.dp_lm("y ~ .", df, eps=2.0, method="tukey", select=None)
print(json.dumps({"seen": seen, "end": compile_stats()[0]}))
"""


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DPSTATS_FULL", "") in ("", "0"),
                    reason="compiles the Tukey kernel cold, about 15 s (DPSTATS_FULL=1)")
def test_the_kernel_path_announces_its_compile_before_it(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("DPSTATS_QUIET", None)
    out = subprocess.run([sys.executable, "-c", ON_DEMAND], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    tukey = [s for s in res["seen"] if s[0] == ["tukey"]]
    assert tukey[0][1] == ["tukey"]                       # compiled by prepare, first call
    assert res["end"] == tukey[0][2]                      # and nothing compiled after it
    assert out.stderr.count("compiling numerical kernels once") == 1
    assert "Tukey group OLS" in out.stderr
