"""Rank-based Kendall kernels against the numpy references and the pair-comparison kernel."""

import numpy as np
import pytest

from dpstats._kernels.kendall import (
    discordant_counts,
    kendall_scaled_tiebroken,
    stable_ranks_reference,
)
from dpstats._kernels.kendall_ranks import (
    _inversions,
    discordant_ranked,
    permuted_ranks,
)
from dpstats.mechanisms import exponential
from dpstats.selection.kendall import SENS_FIRST, SENS_LATER, permuted_rows, select

#: Sizes around the former switch from numpy's mergesort to the radix sort (now radix at every n).
_RADIX_MIN_ROWS = 4096


def _data(kind, n, d, rng):
    if kind == "continuous":
        return rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, d)
    if kind == "ties":
        return rng.integers(-2, 3, (n, d)).astype(float)
    if kind == "signed zeros":
        return rng.choice([-0.0, 0.0, -1.5, 2.0], (n, d))
    big = np.finfo(float).max
    return rng.choice([big, -big, 5e-324, -5e-324, 0.0, 1.0], (n, d))   # extreme keys


@pytest.mark.parametrize("n", [1, 2, 9, _RADIX_MIN_ROWS - 1, _RADIX_MIN_ROWS + 7])
@pytest.mark.parametrize("kind", ["continuous", "ties", "signed zeros", "extremes"])
def test_permuted_ranks_equal_stable_ranks_of_the_permuted_rows(n, kind):
    rng = np.random.default_rng(n)
    X = _data(kind, n, 3, rng)
    perm = rng.permutation(n)
    R = permuted_ranks(X, perm)
    assert R.dtype == np.int32 and R.shape == (3, n)
    np.testing.assert_array_equal(R, stable_ranks_reference(X[perm]).T)
    np.testing.assert_array_equal(permuted_ranks(np.asfortranarray(X), perm), R)
    np.testing.assert_array_equal(permuted_ranks(X[:, ::-1], perm), R[::-1])   # strided view


def test_identity_order_and_empty_input():
    X = np.array([[2.0], [1.0], [2.0]])
    assert permuted_ranks(X).tolist() == [[1, 0, 2]]
    assert permuted_ranks(np.empty((0, 2))).shape == (2, 0)


@pytest.mark.parametrize("n", [2, 3, 50, 1000, _RADIX_MIN_ROWS + 100])
@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_discordant_ranked_equals_pair_comparison_kernel(n, kind):
    rng = np.random.default_rng(100 + n)
    X = _data(kind, n, 4, rng)
    y = rng.integers(0, 3, n).astype(float)
    perm = rng.permutation(n)
    R = permuted_ranks(X, perm)
    ry = permuted_ranks(y[:, None], perm)[0]
    D = discordant_ranked(R, ry)
    np.testing.assert_array_equal(n / 2 - 2 * D / (n - 1),
                                  kendall_scaled_tiebroken(X[perm], y[perm]))
    for j in range(4):
        cols = np.array([3, 0, j])
        np.testing.assert_array_equal(discordant_ranked(R, R[j], cols),
                                      discordant_counts(R.T[:, cols], R[j]))
        assert discordant_ranked(R, R[j], [j]).tolist() == [0]


@pytest.mark.parametrize("n", [0, 1, 2, 7, 63, 64, 65, 127, 128, 129, 500, 4099])
def test_inversion_counter_equals_brute_force(n):
    """The bitset + word-level Fenwick counter, around word edges (63, 64, 65 rows, ...)."""
    rng = np.random.default_rng(n)
    nw = (n + 63) // 64
    for a in (rng.permutation(n), np.arange(n)[::-1], np.arange(n)):
        a = np.ascontiguousarray(a, dtype=np.int32)
        brute = int(np.count_nonzero(np.triu(a[:, None] > a[None, :], k=1)))
        words = np.full(nw, 2**64 - 1, np.uint64)           # dirty scratch must not matter
        tree = np.full(nw + 1, 7, np.int32)
        assert _inversions(a, words, tree) == brute
        assert _inversions(a, words, tree) == brute         # reused scratch


def test_inversions_large_against_merge_counter():
    """At 3e5 rows (many tree levels) against the merge-sort counter of kendall.py."""
    from dpstats._kernels.kendall import _count_inversions
    n = 300_000
    a = np.random.default_rng(1).permutation(n).astype(np.int32)
    nw = (n + 63) // 64
    got = _inversions(a, np.empty(nw, np.uint64), np.empty(nw + 1, np.int32))
    ref = _count_inversions(a.astype(np.float64), np.empty(n, np.float64))
    assert got == ref


def test_discordant_ranked_counts_a_reversal():
    n = 257
    R = np.arange(n, dtype=np.int32)[None, :]
    assert discordant_ranked(R, R[0][::-1].copy()).tolist() == [n * (n - 1) // 2]


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="NaN"):
        permuted_ranks([[1.0], [np.nan]])
    with pytest.raises(ValueError, match="permutation"):
        permuted_ranks([[1.0], [2.0]], [0])
    with pytest.raises(ValueError, match="2-D"):
        permuted_ranks([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        discordant_ranked(np.zeros((2, 3), np.int32), np.zeros(4, np.int32))


def _select_by_pair_comparison(X, y, k, eps, rng):
    """DPKendall as written before ranking once: re-sorts (value, position) pairs per pivot."""
    Xp, yp = permuted_rows(X, y, rng)
    base = np.abs(kendall_scaled_tiebroken(Xp, yp))
    redundancy = np.zeros(X.shape[1])
    picked = []
    for r in range(k):
        score = base.copy() if r == 0 else base - redundancy / r
        score[picked] = -np.inf
        picked.append(exponential(score, SENS_FIRST if r == 0 else SENS_LATER, eps / k, rng))
        if r < k - 1:
            pivot = np.ascontiguousarray(Xp[:, picked[-1]])
            redundancy += np.abs(kendall_scaled_tiebroken(Xp, pivot))
    return tuple(picked)


@pytest.mark.parametrize("seed", range(6))
def test_select_picks_exactly_what_the_pair_comparison_version_picks(seed):
    rng = np.random.default_rng(seed)
    n, d = (300, 12) if seed % 2 else (_RADIX_MIN_ROWS + 50, 8)
    X = rng.integers(0, 4, (n, d)).astype(float) if seed < 3 else rng.standard_normal((n, d))
    y = X[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.integers(0, 2, n)
    got = select(X, y, k=4, eps=3.0, rng=np.random.default_rng(seed + 50)).indices
    assert got == _select_by_pair_comparison(X, y, 4, 3.0, np.random.default_rng(seed + 50))
