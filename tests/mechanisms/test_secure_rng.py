"""Tests for the OS-CSPRNG generator used by default (random_state=None)."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from scipy import stats

import dpstats
from dpstats._kernels.shuffle import fisher_yates, fisher_yates_reference
from dpstats.mechanisms.rng import SecureGenerator, as_rng


@pytest.fixture
def rng():
    return SecureGenerator()


def test_default_randomness_is_the_secure_generator():
    gen, seeded = as_rng(None)
    assert isinstance(gen, SecureGenerator) and isinstance(gen, np.random.Generator)
    assert seeded is False
    mine = SecureGenerator()
    assert as_rng(mine) == (mine, False)
    # seeded inputs stay reproducible numpy streams
    a, s = as_rng(5)
    assert s is True and not isinstance(a, SecureGenerator)
    assert as_rng(5)[0].integers(0, 2**62) == as_rng(5)[0].integers(0, 2**62)


def test_draws_come_from_os_urandom(monkeypatch, rng):
    """Every draw reads os.urandom: with a fake constant source the output is constant."""
    import dpstats.mechanisms.rng as mod
    monkeypatch.setattr(mod.os, "urandom", lambda k: b"\x00" * k)
    assert rng.random() == 0.0
    assert rng.integers(3, 9) == 3
    monkeypatch.setattr(mod.os, "urandom", lambda k: b"\xff" * k)
    assert rng.random() == 1.0 - 2.0**-53


def test_two_generators_do_not_repeat(rng):
    a = SecureGenerator().integers(0, 2**63, size=4)
    b = SecureGenerator().integers(0, 2**63, size=4)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("low, high", [(0, 7), (-3, 3), (10, 11), (0, 2**40 + 3)])
def test_integers_are_uniform_and_in_range(rng, low, high):
    x = rng.integers(low, high, size=60_000)
    assert x.dtype == np.int64 and x.min() >= low and x.max() < high
    if high - low == 1:
        assert np.all(x == low)
    elif high - low <= 7:
        counts = np.bincount(x - low, minlength=high - low)
        assert stats.chisquare(counts).pvalue > 1e-4
    else:
        assert stats.kstest((x - low) / (high - low), "uniform").pvalue > 1e-4


def test_integers_shapes_dtypes_and_scalars(rng):
    assert rng.integers(0, 5, size=(2, 3)).shape == (2, 3)
    assert rng.integers(0, 5, size=(2, 3), dtype=np.int32).dtype == np.int32
    s = rng.integers(0, 5)
    assert np.ndim(s) == 0 and 0 <= s < 5
    assert rng.integers(5).dtype == np.int64          # one bound means [0, 5)
    assert rng.integers(0, 1, endpoint=True, size=500).max() == 1
    w = rng.integers(0, 2**64, size=1000, dtype=np.uint64)
    assert w.dtype == np.uint64 and w.max() > 2**63     # full 64-bit range
    with pytest.raises(ValueError):
        rng.integers(5, 5)
    with pytest.raises(ValueError):
        rng.integers(0, 300, dtype=np.uint8)


def test_bounded_integers_have_no_modulo_bias(rng):
    """A range of 3 * 2^62 would show a 2x bias in the top third under plain modulo."""
    r = 3 * 2**62
    x = rng.integers(0, r, size=60_000, dtype=np.uint64)
    thirds = np.bincount((x // np.uint64(2**62)).astype(int), minlength=3)
    assert stats.chisquare(thirds).pvalue > 1e-4


def test_random_and_uniform(rng):
    u = rng.random(100_000)
    assert u.min() >= 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    assert np.all(u * 2.0**53 == np.round(u * 2.0**53))        # 53-bit fractions, as numpy
    assert isinstance(rng.random(), float)
    v = rng.uniform(-0.5, 0.5, size=(3, 4))
    assert v.shape == (3, 4) and np.all((-0.5 <= v) & (v < 0.5))
    lo, hi = np.array([0.0, 10.0]), np.array([1.0, 10.5])
    w = rng.uniform(lo, hi)
    assert w.shape == (2,) and np.all((lo <= w) & (w < hi))
    assert isinstance(rng.uniform(0.0, 2.0), float)


def test_exponential_and_gumbel(rng):
    e = rng.standard_exponential(100_000)
    assert e.min() > 0
    assert stats.kstest(e, "expon").pvalue > 1e-4
    g = rng.gumbel(0.0, 2.0, size=100_000)
    assert stats.kstest(g / 2.0, "gumbel_r").pvalue > 1e-4
    assert isinstance(rng.standard_exponential(), float)
    assert rng.gumbel(np.zeros(3), 1.0).shape == (3,)


def test_permutation_is_uniform(rng):
    n, reps = 4, 24_000
    seen = {}
    for _ in range(reps):
        p = tuple(rng.permutation(n).tolist())
        seen[p] = seen.get(p, 0) + 1
    assert len(seen) == math.factorial(n)
    assert stats.chisquare(list(seen.values())).pvalue > 1e-4


def test_permutation_of_arrays_and_edge_cases(rng):
    big = rng.permutation(100_000)
    np.testing.assert_array_equal(np.sort(big), np.arange(100_000))
    assert rng.permutation(0).size == 0 and rng.permutation(1).tolist() == [0]
    a = np.arange(12).reshape(6, 2)
    pa = rng.permutation(a)
    assert sorted(map(tuple, pa.tolist())) == sorted(map(tuple, a.tolist()))


def test_fisher_yates_kernel_matches_reference():
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 257):
        j = np.array([rng.integers(0, n - k) for k in range(n - 1)], dtype=np.int64)
        np.testing.assert_array_equal(fisher_yates(j), fisher_yates_reference(j))


@pytest.mark.parametrize("name", ["normal", "laplace", "choice", "shuffle", "spawn", "poisson",
                                  "binomial", "exponential", "geometric", "bytes"])
def test_methods_not_implemented_refuse_instead_of_using_pcg(rng, name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(rng, name)(1)


def test_no_bit_generator_and_copies_stay_secure(rng):
    with pytest.raises(NotImplementedError):
        _ = rng.bit_generator
    for other in (pickle.loads(pickle.dumps(rng)), copy.deepcopy(rng), copy.copy(rng)):
        assert isinstance(other, SecureGenerator)
    assert repr(rng) == "SecureGenerator(os.urandom)"


def test_default_fit_reports_os_csprng():
    """A default fit is unseeded and says so; a seeded one says it is not fit for release."""
    import pandas as pd
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 3000)})
    df["y"] = 2 * df.x + rng.normal(0, 0.1, 3000)
    fit = dpstats.dp_lm("y ~ x", df, eps=5.0, delta=1e-5, method="adassp",
                        bounds={"x": (-1, 1), "y": (-4, 4)})
    assert fit.seeded is False
    facts = dict(fit.summary().facts)
    assert facts["Randomness:"] == "OS CSPRNG"
    seeded = dpstats.dp_lm("y ~ x", df, eps=5.0, delta=1e-5, method="adassp",
                           bounds={"x": (-1, 1), "y": (-4, 4)}, random_state=1)
    assert "NOT fit for release" in dict(seeded.summary().facts)["Randomness:"]


def _frame(n=20_000, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["y"] = 1.0 + 2 * df.x1 - df.x3 + rng.normal(0, 0.2, n)
    df["yb"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * df.x1))).astype(int)
    return df


BOUNDS = {"x": (-1, 1), "y": (-5, 7)}

CALLS = {
    "dp_lm tukey + kendall": lambda df: dpstats.dp_lm("y ~ . - yb", df, eps=3.0, k=2,
                                                      select="kendall"),
    "dp_lm tukey + sublasso": lambda df: dpstats.dp_lm("y ~ . - yb", df, eps=3.0, k=2,
                                                       select="sublasso"),
    "dp_lm adassp": lambda df: dpstats.dp_lm("y ~ . - yb", df, eps=3.0, method="adassp",
                                             select=None),
    "dp_lm bas": lambda df: dpstats.dp_lm("y ~ . - yb", df, eps=3.0, method="bas",
                                          select=None, bounds=BOUNDS),
    "dp_lm fw": lambda df: dpstats.dp_lm("y ~ . - yb", df, eps=3.0, method="fw", select=None,
                                         bounds=BOUNDS),
    "dp_glm fw": lambda df: dpstats.dp_glm("yb ~ . - y", df, eps=3.0, select=None),
    "dp_glm dpgd": lambda df: dpstats.dp_glm("yb ~ . - y", df, eps=3.0, method="dpgd",
                                             select=None),
    "select sis": lambda df: dpstats.select("y ~ . - yb", df, eps=3.0, method="sis", k=2),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_entry_point_runs_on_the_secure_generator(name):
    """The default path draws only through methods SecureGenerator implements."""
    out = CALLS[name](_frame())
    assert out.seeded is False
