"""SubLasso (dpstats.selection.sublasso; 003 Algorithm 2, Kifer's two-stage): group counts,
picks at large eps, the l_inf sensitivity 1 of the votes, the ledger, and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstats._kernels.lasso import lasso_topk_support, support_votes
from dpstats.errors import DPStatsError, PrivacyParameterError, ValidationError
from dpstats.mechanisms.accountant import Ledger
from dpstats.selection import Selection, get_selector
from dpstats.selection.sublasso import n_groups, select

HUGE = 1e6
SUPPORT = [2, 5, 8]


def _data(n=4000, d=10, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.01, 100.0, d)   # scale-free selection
    w = np.zeros(d)
    w[SUPPORT] = [3.0, -2.0, 1.5]
    y = (X / X.std(axis=0)) @ w + noise * rng.standard_normal(n)
    return X, y


# ---- number of groups -----------------------------------------------------------------------

@pytest.mark.parametrize(("n_noisy", "p", "expected"), [
    (1000.0, 10, 100), (1009.9, 10, 100), (999.99, 10, 99), (12.0, 13, 1), (0.5, 3, 1),
    (-40.0, 3, 1), (48_000.0, 10, 4800), (7.0, 7, 1), (14.0, 7, 2),
])
def test_auto_groups_is_floor_of_n_hat_over_p(n_noisy, p, expected):
    assert n_groups("auto", n_noisy, p) == expected == max(1, math.floor(max(n_noisy, 1) / p))


@pytest.mark.parametrize(("n_noisy", "expected"), [
    (1000.0, 31), (1024.0, 32), (1023.9, 31), (3.0, 1), (0.0, 1), (-5.0, 1), (1e6, 1000),
])
def test_sqrt_groups_is_floor_of_sqrt_n_hat(n_noisy, expected):
    assert n_groups("sqrt", n_noisy, 10) == expected


@pytest.mark.parametrize("groups", [1, 7, 5000, np.int64(3)])
def test_integer_groups_are_used_as_given(groups):
    assert n_groups(groups, None, 10) == int(groups)
    assert n_groups(groups, 1e9, 10) == int(groups)      # n_noisy is then ignored


@pytest.mark.parametrize(("groups", "n_noisy", "needle"), [
    (0, 100.0, "groups"), (-3, 100.0, "groups"), (True, 100.0, "groups"),
    (2.5, 100.0, "groups"), ("bogus", 100.0, "groups"), (None, 100.0, "groups"),
    ("auto", None, "n_noisy"), ("sqrt", None, "n_noisy"), ("auto", math.nan, "n_noisy"),
    ("auto", math.inf, "n_noisy"),
])
def test_bad_groups_raise_validation_error(groups, n_noisy, needle):
    with pytest.raises(ValidationError, match=needle):
        n_groups(groups, n_noisy, 10)


# ---- picks at large eps ---------------------------------------------------------------------

@pytest.mark.parametrize(("groups", "n_noisy"), [("auto", 4000.0), ("sqrt", 4000.0), (40, None)])
def test_huge_eps_picks_the_true_support(groups, n_noisy):
    X, y = _data()
    sel = select(X, y, k=3, eps=HUGE, rng=np.random.default_rng(1), n_noisy=n_noisy,
                 groups=groups)
    assert isinstance(sel, Selection)
    assert sorted(sel.indices) == SUPPORT and len(sel.indices) == 3
    assert sel.method == "sublasso" and sel.ordered and sel.eps == HUGE
    assert sel.info["groups"] == n_groups(groups, n_noisy, X.shape[1] + 1)
    assert get_selector("sublasso") is select


def test_huge_eps_k1_picks_the_strongest_feature():
    # k=1: each group votes for its single strongest feature; the strongest overall wins
    X, y = _data(n=3000, seed=4, noise=2.0)
    sel = select(X, y, k=1, eps=HUGE, rng=np.random.default_rng(0), groups=150)
    assert sel.indices == (2,)


def test_noise_free_votes_reproduce_the_selection_at_huge_eps():
    X, y = _data(n=1200, seed=2, noise=3.0)
    k, m = 4, 60
    rng = np.random.default_rng(7)
    sel = select(X, y, k=k, eps=HUGE, rng=rng, groups=m)
    labels = np.random.default_rng(7).integers(0, m, size=X.shape[0], dtype=np.int64)
    votes = support_votes(lasso_topk_support(X, y, labels, m, k), X.shape[1])
    top = np.argsort(-votes, kind="stable")
    assert votes[list(sel.indices)].tolist() == sorted(votes[list(sel.indices)], reverse=True)
    assert sorted(votes[list(sel.indices)]) == sorted(votes[top[:k]])


def test_small_eps_picks_vary_but_are_distinct():
    X, y = _data(n=500)
    seen = set()
    for s in range(20):
        idx = select(X, y, k=3, eps=1e-3, rng=np.random.default_rng(s), groups=10).indices
        assert len(set(idx)) == 3 and all(0 <= i < X.shape[1] for i in idx)
        seen.add(idx)
    assert len(seen) > 5


# ---- sensitivity of the votes ---------------------------------------------------------------

def _weak_data(n=600, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = 0.5 * X[:, 0] + 0.3 * X[:, 1] + 0.2 * X[:, 2] + rng.standard_normal(n)
    return X, y


def _votes(X, y, labels, m, k):
    return support_votes(lasso_topk_support(X, y, labels, m, k), X.shape[1])


def _worst_vote_change(X, y, labels_full, labels_without, m, k, rows):
    full = _votes(X, y, labels_full, m, k)
    assert full.sum() > 0 and len(set(full.tolist())) > 2     # votes are not all alike
    worst = 0
    for r in rows:
        keep = np.arange(X.shape[0]) != r
        sub = _votes(X[keep], y[keep], labels_without(r), m, k)
        worst = max(worst, int(np.abs(full - sub).max()))
    return worst


@pytest.mark.parametrize(("m", "k"), [(60, 2), (200, 3)])
def test_removing_one_row_moves_each_vote_count_by_at_most_one(m, k):
    X, y = _weak_data()
    labels = np.random.default_rng(3).integers(0, m, size=X.shape[0], dtype=np.int64)
    rows = np.random.default_rng(4).choice(X.shape[0], size=150, replace=False)
    worst = _worst_vote_change(X, y, labels, lambda r: np.delete(labels, r), m, k, rows)
    assert worst <= 1
    assert worst == 1          # some removal does change a group's vote


def test_vote_sensitivity_check_catches_shuffle_and_cut_groups():
    # broken partition: consecutive blocks of 10 rows; removing a row shifts every later block
    X, y = _weak_data()
    m, k = 60, 2
    rows = np.random.default_rng(4).choice(X.shape[0] // 2, size=40, replace=False)
    cut = np.arange(X.shape[0]) // 10
    worst = _worst_vote_change(X, y, cut, lambda r: np.arange(X.shape[0] - 1) // 10, m, k, rows)
    assert worst > 1


# ---- ledger ---------------------------------------------------------------------------------

def test_single_gumbel_topk_charge_of_eps():
    X, y = _data(n=800)
    led = Ledger()
    sel = select(X, y, k=3, eps=0.7, rng=np.random.default_rng(0), ledger=led, n_noisy=800.0)
    (c,) = led.charges
    assert c.mechanism == "gumbel top-k" and c.stage == "selection"
    assert c.eps == 0.7 and c.delta == 0.0
    assert "sensitivity 1" in c.detail and "k=3" in c.detail
    assert f"{sel.info['groups']} groups" in c.detail
    assert sel.info["groups"] == 800 // 11


def test_stage_name_is_passed_through():
    X, y = _data(n=300)
    led = Ledger()
    select(X, y, k=2, eps=1.0, rng=np.random.default_rng(0), ledger=led, groups=5, stage="pre")
    assert [c.stage for c in led.charges] == ["pre"]


# ---- validation: errors before anything is charged -------------------------------------------

BAD = [
    ({"k": 11}, "k must be"),
    ({"k": 0}, "k must be"),
    ({"k": True}, "k must be"),
    ({"eps": 0.0}, "eps"),
    ({"eps": -2.0}, "eps"),
    ({"eps": math.nan}, "eps"),
    ({"groups": 0}, "groups"),
    ({"groups": "bogus"}, "groups"),
    ({"groups": 1.5}, "groups"),
    ({"n_noisy": None}, "n_noisy"),
    ({"groups": "sqrt", "n_noisy": math.nan}, "n_noisy"),
    ({"nan_x": True}, "finite"),
    ({"short_y": True}, "y must be"),
]


@pytest.mark.parametrize(("override", "needle"), BAD)
def test_bad_input_raises_and_charges_nothing(override, needle):
    X, y = _data(n=200)
    kw = {"k": 3, "eps": 1.0, "n_noisy": 200.0, "groups": "auto"}
    if override.pop("nan_x", False):
        X[5, 3] = np.nan
    if override.pop("short_y", False):
        y = y[:-2]
    kw.update(override)
    led = Ledger()
    with pytest.raises(DPStatsError, match=needle) as info:
        select(X, y, rng=np.random.default_rng(0), ledger=led, **kw)
    assert isinstance(info.value, ValidationError)
    if needle == "eps":
        assert isinstance(info.value, PrivacyParameterError)
    assert len(led) == 0 and led.spent == (0.0, 0.0)
