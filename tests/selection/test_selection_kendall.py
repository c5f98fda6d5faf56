"""DPKendall (dpstats.selection.kendall; 003 Algorithm 1): picks, redundancy penalty, ledger,
validation, tie-breaking, and the add/remove-one-row sensitivity of its scores (with broken
variants that the sensitivity check must catch)."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest
from scipy import stats

from dpstats._kernels.kendall import (
    discordant_counts,
    kendall_scaled,
    stable_ranks,
    stable_ranks_reference,
)
from dpstats.errors import DPStatsError, PrivacyParameterError, ValidationError
from dpstats.mechanisms.accountant import Ledger
from dpstats.selection import Selection, get_selector
from dpstats.selection.kendall import SENS_FIRST, SENS_LATER, select, tie_free_ranks

HUGE = 1e6


def _signal(n=2000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = 3.0 * X[:, 4] + 1.5 * X[:, 1] - 0.7 * X[:, 6] + 0.5 * rng.standard_normal(n)
    return X, y


# ---- picks at large eps ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_huge_eps_picks_signal_columns_in_order_of_strength(seed):
    X, y = _signal(seed=seed)
    sel = select(X, y, k=3, eps=HUGE, rng=np.random.default_rng(seed + 10))
    assert isinstance(sel, Selection)
    assert sel.indices == (4, 1, 6)
    assert sel.method == "kendall" and sel.ordered and sel.eps == HUGE
    assert sel.info == {"rounds": 3}
    assert get_selector("kendall") is select


def test_huge_eps_k_equals_d_returns_a_permutation():
    X, y = _signal(n=300)
    sel = select(X, y, k=8, eps=HUGE, rng=np.random.default_rng(0))
    assert sorted(sel.indices) == list(range(8)) and sel.indices[:3] == (4, 1, 6)


def test_small_eps_is_noisy_but_valid():
    X, y = _signal(n=200)
    seen = set()
    for s in range(30):
        idx = select(X, y, k=3, eps=1e-3, rng=np.random.default_rng(s)).indices
        assert len(set(idx)) == 3 and all(0 <= i < 8 for i in idx)
        seen.add(idx)
    assert len(seen) > 10          # at tiny eps the choice is close to uniform


def _near_duplicate(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(n)
    x1 = x0 + 1e-3 * rng.standard_normal(n)   # near-duplicate of x0
    x2 = rng.standard_normal(n)               # independent, weaker signal
    y = 2.0 * x0 + x2 + 0.5 * rng.standard_normal(n)
    return np.column_stack([x0, x1, x2]), y


def test_redundancy_penalty_skips_a_near_duplicate():
    X, y = _near_duplicate()
    base = np.abs(kendall_scaled(X, y))
    # without the penalty the two near-duplicates would be the top two
    assert min(base[0], base[1]) > base[2] + 100
    for s in range(10):
        idx = select(X, y, k=2, eps=HUGE, rng=np.random.default_rng(s)).indices
        assert idx[0] in (0, 1) and idx[1] == 2, idx


def test_redundancy_penalty_at_round_three_uses_the_mean_over_picks():
    # x3 duplicates x2; round 3 scores |tau(x_j, y)| - mean_s |tau(x_j, x_s)| over the two
    # picks, so the unpicked twin of the first pick pays about n/4 and the twin of x2 about n/4
    # too; the independent x4 (weaker than both twins' raw scores) pays nothing and wins
    rng = np.random.default_rng(5)
    n = 3000
    X, _ = _near_duplicate(n, seed=5)
    x3 = X[:, 2] + 1e-3 * rng.standard_normal(n)
    x4 = rng.standard_normal(n)
    y = 2.0 * X[:, 0] + X[:, 2] + 0.8 * x4 + 0.5 * rng.standard_normal(n)
    X = np.column_stack([X, x3, x4])
    base = np.abs(kendall_scaled(X, y))
    assert base[4] < min(base[:4])
    for s in range(5):
        idx = select(X, y, k=3, eps=HUGE, rng=np.random.default_rng(s)).indices
        assert idx[0] in (0, 1) and idx[1] in (2, 3) and idx[2] == 4, idx


# ---- ledger ---------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 4])
def test_ledger_has_k_charges_of_eps_over_k(k):
    X, y = _signal(n=500)
    led = Ledger()
    eps = 0.8
    select(X, y, k=k, eps=eps, rng=np.random.default_rng(0), ledger=led)
    charges = led.charges
    assert len(charges) == k
    assert all(c.mechanism == "exponential" and c.stage == "selection" for c in charges)
    assert all(c.eps == pytest.approx(eps / k, rel=1e-15) and c.delta == 0.0 for c in charges)
    assert led.spent[0] == pytest.approx(eps, rel=1e-12)
    assert re.search(r"sensitivity 1\.5\b", charges[0].detail)
    for r, c in enumerate(charges[1:], start=2):
        assert re.search(r"sensitivity 3\b", c.detail), c.detail
        assert f"round {r} of {k}" in c.detail
    assert (SENS_FIRST, SENS_LATER) == (1.5, 3.0)


def test_ledger_stage_name_is_passed_through():
    X, y = _signal(n=300)
    led = Ledger()
    select(X, y, k=2, eps=1.0, rng=np.random.default_rng(0), ledger=led, stage="screen")
    assert {c.stage for c in led.charges} == {"screen"}


# ---- validation: errors before anything is charged -------------------------------------------

def _bad(kind):
    X, y = _signal(n=50)
    kw = {"k": 2, "eps": 1.0}
    if kind == "k>d":
        kw["k"] = 9
    elif kind == "k=0":
        kw["k"] = 0
    elif kind == "k=-1":
        kw["k"] = -1
    elif kind == "k=1.5":
        kw["k"] = 1.5
    elif kind == "k=True":
        kw["k"] = True
    elif kind == "nan X":
        X[3, 1] = np.nan
    elif kind == "inf y":
        y[0] = np.inf
    elif kind == "y length":
        y = y[:-1]
    elif kind == "y 2-D":
        y = y[:, None]
    elif kind == "X 1-D":
        X = X[:, 0]
    elif kind == "no columns":
        X = X[:, :0]
    elif kind == "eps=0":
        kw["eps"] = 0.0
    elif kind == "eps<0":
        kw["eps"] = -1.0
    elif kind == "eps=inf":
        kw["eps"] = np.inf
    return X, y, kw


@pytest.mark.parametrize("kind", ["k>d", "k=0", "k=-1", "k=1.5", "k=True", "nan X", "inf y",
                                  "y length", "y 2-D", "X 1-D", "no columns", "eps=0", "eps<0",
                                  "eps=inf"])
def test_bad_input_raises_and_charges_nothing(kind):
    X, y, kw = _bad(kind)
    led = Ledger()
    with pytest.raises(DPStatsError) as info:
        select(X, y, rng=np.random.default_rng(0), ledger=led, **kw)
    assert isinstance(info.value, ValidationError)
    if kind.startswith("eps"):
        assert isinstance(info.value, PrivacyParameterError)
    if kind.startswith("k"):
        assert "k must be" in str(info.value)
    assert len(led) == 0 and led.spent == (0.0, 0.0)


# ---- ties -----------------------------------------------------------------------------------

def _tied(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    const = np.full(n, 7.0)
    binary = rng.integers(0, 2, n).astype(float)            # independent of y, many ties
    weak = rng.standard_normal(n)
    y = 0.3 * weak + rng.standard_normal(n)
    return np.column_stack([const, binary, weak]), y


def test_untied_statistic_would_favour_a_constant_column():
    X, y = _tied()
    raw = kendall_scaled(X, y)
    assert raw[0] == X.shape[0] / 2            # "perfect correlation": why ties must be broken
    assert raw[0] > abs(raw[2]) > 100


def test_tie_breaking_makes_constant_and_independent_binary_columns_near_zero():
    X, y = _tied()
    n = X.shape[0]
    null_sd = n / 2 * np.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))   # sd of tau_hat under H0
    for s in range(5):
        R, ry = tie_free_ranks(X, y, np.random.default_rng(s))
        assert np.array_equal(np.sort(R, axis=0), np.tile(np.arange(n, dtype=float)[:, None],
                                                         (1, 3)))
        tau = np.abs(kendall_scaled(R, ry))
        assert tau[0] < 5 * null_sd and tau[1] < 5 * null_sd
        assert tau[2] > 10 * null_sd


def test_constant_column_is_never_selected_over_a_correlated_one():
    X, y = _tied()
    picks = [select(X, y, k=1, eps=200.0, rng=np.random.default_rng(s)).indices[0]
             for s in range(40)]
    assert picks == [2] * 40


def test_tie_free_ranks_preserve_untied_pair_orders():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = rng.integers(0, 3, size=60).astype(float)
    perm = np.random.default_rng(9).permutation(60)
    R, ry = tie_free_ranks(X, y, np.random.default_rng(9))
    Xp, yp = X[perm], y[perm]
    for j in range(3):
        a, r = Xp[:, j], R[:, j]
        assert np.all((r[:, None] < r[None, :])[a[:, None] < a[None, :]])
    assert np.all((ry[:, None] < ry[None, :])[yp[:, None] < yp[None, :]])


@pytest.mark.parametrize(("n", "d", "levels"), [(1, 1, 2), (7, 3, 2), (200, 6, 3),
                                                (1000, 4, 5), (50, 2, 1)])
def test_stable_ranks_match_reference_with_many_ties(n, d, levels):
    rng = np.random.default_rng(n + d + levels)
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    X[:, 0] *= -0.5                                  # negative values and zeros too
    got = stable_ranks(X)
    np.testing.assert_array_equal(got, stable_ranks_reference(X))
    np.testing.assert_array_equal(got, stable_ranks(np.asfortranarray(X)))
    assert np.array_equal(np.sort(got, axis=0),
                          np.tile(np.arange(n, dtype=float)[:, None], (1, d)))
    # ties go to the earlier row
    for j in range(d):
        for v in np.unique(X[:, j]):
            rows = np.flatnonzero(X[:, j] == v)
            assert np.all(np.diff(got[rows, j]) > 0)


def test_stable_ranks_reject_nan():
    with pytest.raises(ValueError):
        stable_ranks(np.array([[1.0], [np.nan]]))


# ---- sensitivity of the tie-broken scores (fixed tie-breaking permutation) --------------------

class _FixedPermutation:
    """Stands in for the Generator inside tie_free_ranks: returns a given permutation."""

    def __init__(self, perm):
        self.perm = np.asarray(perm)

    def permutation(self, n):
        assert n == self.perm.size
        return self.perm


def _drop_from_perm(perm, r):
    """The same order of the remaining rows after original row ``r`` is removed."""
    return np.array([v - (v > r) for v in perm if v != r], dtype=np.int64)


def _round_scores(X, y, perm, picked=()):
    """DPKendall's round score for a fixed tie-breaking order and fixed earlier picks."""
    R, ry = tie_free_ranks(X, y, _FixedPermutation(perm))
    score = np.abs(kendall_scaled(R, ry))
    if picked:
        red = sum(np.abs(kendall_scaled(R, R[:, s])) for s in picked)
        score = score - red / len(picked)
    return score


def _tie_heavy_datasets(count, seed):
    """Small data sets on 2-4 levels with skewed level frequencies (many ties)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(3, 13))
        levels = int(rng.integers(2, 5))
        freq = rng.dirichlet(np.full(levels, 0.7))
        X = rng.choice(levels, size=(n, 3), p=freq).astype(float)
        y = rng.choice(levels, size=n, p=freq).astype(float)
        yield X, y, rng.permutation(n)


#: data sets searched for the worst neighbour by the sensitivity tests: 20 in the default run
#: (the round-one search reaches 1.5, the later rounds 2.2), 60 under ``DPSTATS_FULL=1``
SEARCHED = 60 if os.environ.get("DPSTATS_FULL", "") not in ("", "0") else 20


def _worst_neighbour_gap(score_fn, count=60, seed=0):
    worst = 0.0
    for X, y, perm in _tie_heavy_datasets(count, seed):
        full = score_fn(X, y, perm)
        for r in range(X.shape[0]):
            keep = np.arange(X.shape[0]) != r
            sub = score_fn(X[keep], y[keep], _drop_from_perm(perm, r))
            gap = np.abs(full - sub)
            gap = gap[np.isfinite(gap)]
            if gap.size:
                worst = max(worst, float(gap.max()))
    return worst


def test_round_one_score_sensitivity_is_at_most_three_halves():
    worst = _worst_neighbour_gap(lambda X, y, p: _round_scores(X, y, p), SEARCHED)
    assert worst <= SENS_FIRST + 1e-9
    assert worst >= 1.0          # the search reaches the interesting regime (bound is tight)


def test_later_round_score_sensitivity_is_at_most_three():
    worst = _worst_neighbour_gap(lambda X, y, p: _round_scores(X, y, p, picked=(0,)), SEARCHED)
    worst2 = _worst_neighbour_gap(lambda X, y, p: _round_scores(X, y, p, picked=(0, 2)),
                                  SEARCHED)
    assert max(worst, worst2) <= SENS_LATER + 1e-9
    assert worst > SENS_FIRST    # the later rounds really need the larger sensitivity


def _tau_b_scores(X, y, perm):
    """Broken: tau-b normalisation on the tied data (the tie-corrected denominator)."""
    n = y.size
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = [stats.kendalltau(X[:, j], y, variant="b").statistic for j in range(X.shape[1])]
    return np.abs(np.array(tau)) * n / 2


def _unhalved_scores(X, y, perm):
    """Broken: n * tau_a instead of (n/2) * tau_a (the scaling the 3/2 bound is proved for)."""
    R, ry = tie_free_ranks(X, y, _FixedPermutation(perm))
    n = y.size
    if n < 2:
        return np.full(X.shape[1], float(n))
    return np.abs(n - 4.0 * discordant_counts(R, ry) / (n - 1))


# tau-b's excess shows only in the full 60 data sets (1.33 in the first 20; it is fast);
# the unhalved statistic's shows in the default run's 20 (3.0)
@pytest.mark.parametrize(("broken", "count"), [(_tau_b_scores, 60), (_unhalved_scores, SEARCHED)])
def test_sensitivity_check_catches_broken_statistics(broken, count):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # scipy warns on constant inputs (tau-b NaN)
        worst = _worst_neighbour_gap(broken, count)
    assert worst > SENS_FIRST + 0.25       # the true statistic never exceeds 1.5 (above)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tiebroken_kernel_equals_the_rank_construction(seed):
    from dpstats._kernels.kendall import kendall_scaled, kendall_scaled_tiebroken
    from dpstats.selection.kendall import permuted_rows
    g = np.random.default_rng(seed)
    X = g.integers(0, 4, (300, 5)).astype(float)
    y = g.integers(0, 3, 300).astype(float)
    R, ry = tie_free_ranks(X, y, np.random.default_rng(seed + 10))
    Xp, yp = permuted_rows(X, y, np.random.default_rng(seed + 10))
    np.testing.assert_allclose(kendall_scaled_tiebroken(Xp, yp), kendall_scaled(R, ry))
    np.testing.assert_allclose(kendall_scaled_tiebroken(Xp, Xp[:, 2]),
                               kendall_scaled(R, R[:, 2]))
