"""Tests for DP-SIS (dpstats.selection.sis; 004 Algorithm 1)."""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.errors import DPStatsError, ValidationError
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.bounds import parse_bounds, private_bounds
from dpstats.selection import Selection, run_selector
from dpstats.selection.sis import select, sis_scores

HUGE = 1e7


def _data(n=300, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-4.0, 4.0, size=(n, d))
    w = np.zeros(d)
    w[[2, 5, 7]] = [3.0, -2.0, 1.0]
    return X, X @ w + rng.uniform(-1.0, 1.0, size=n)


def _top_k(scores, k):
    return tuple(sorted(np.argsort(-scores, kind="stable")[:k].tolist()))


# ---- non-private reference at huge eps ------------------------------------------------------

@pytest.mark.parametrize("k", [1, 3, 6])
def test_huge_eps_public_bounds_is_exact_topk_on_scaled_data(k):
    X, y = _data()
    lo, hi = -4.0, 4.0
    ylo, yhi = -25.0, 25.0
    ref = np.abs((X / 4.0).T @ np.clip(y / 25.0, -1, 1))          # scaled by hand
    sel = select(X, y, k=k, eps=HUGE, rng=np.random.default_rng(1), ledger=None,
                 bounds={"x": (lo, hi), "y": (ylo, yhi)})
    assert isinstance(sel, Selection)
    assert sel.indices == _top_k(ref, k)
    assert sel.method == "sis" and not sel.ordered and sel.info["bounds"] == "public"


def test_huge_eps_asymmetric_bounds_centre_at_midpoint():
    rng = np.random.default_rng(3)
    X = rng.uniform(10.0, 20.0, size=(400, 8))
    y = X[:, 6] - X[:, 1] + rng.uniform(-0.5, 0.5, 400)
    b = {"x": (10.0, 20.0), "y": (-10.0, 10.0)}
    ref = np.abs(((X - 15.0) / 5.0).T @ (y / 10.0))
    sel = select(X, y, k=2, eps=HUGE, rng=rng, ledger=None, bounds=b)
    assert sel.indices == _top_k(ref, 2) == (1, 6)


def test_huge_eps_private_bounds_is_topk_under_the_released_bounds():
    X, y = _data(n=2000, d=10)
    for mode in ("column", "global"):
        sel = select(X, y, k=3, eps=HUGE, rng=np.random.default_rng(7), ledger=None,
                     bounds_mode=mode)
        b = private_bounds(X, y, HUGE * 0.5, np.random.default_rng(7), mode=mode)
        assert sel.indices == _top_k(sis_scores(X, y, b), 3)
        assert sel.info["bounds"] == "private" and sel.info["mode"] == mode


# ---- ledger ---------------------------------------------------------------------------------

def test_public_bounds_spend_exactly_eps_on_topk():
    X, y = _data()
    led = Ledger(eps=0.8)
    sel = select(X, y, k=3, eps=0.8, rng=np.random.default_rng(0), ledger=led, bounds=(-5, 5),
                 stage="sel")
    (c,) = led.charges
    assert (c.mechanism, c.eps, c.delta, c.stage) == ("canonical lipschitz top-k", 0.8, 0.0, "sel")
    assert sel.eps == 0.8 and sel.info["eps_bounds"] == 0.0


@pytest.mark.parametrize(("d", "n_bound_charges"), [(12, 2 * 12 + 2), (80, 3)])
def test_private_bounds_split_and_total(d, n_bound_charges):
    X, y = _data(d=d)
    led = Ledger(eps=2.0)
    sel = select(X, y, k=3, eps=2.0, rng=np.random.default_rng(0), ledger=led,
                 bounds_share=0.25)
    charges = led.charges
    assert len(charges) == n_bound_charges + 1
    assert all(c.mechanism == "exponential" for c in charges[:-1])
    assert charges[-1].mechanism == "canonical lipschitz top-k"
    assert sum(c.eps for c in charges[:-1]) == pytest.approx(0.5)
    assert charges[-1].eps == pytest.approx(1.5)
    assert led.spent[0] == pytest.approx(2.0) and sel.eps == pytest.approx(2.0)
    assert sel.info["eps_bounds"] == pytest.approx(0.5)


def test_mixed_bounds_estimate_only_the_auto_part():
    X, y = _data(d=8)
    led = Ledger()
    sel = select(X, y, k=2, eps=1.0, rng=np.random.default_rng(0), ledger=led,
                 bounds={"x": (-4, 4), "y": "auto"})
    assert len(led) == 3 and sel.info["bounds"] == "public x, private y"
    assert led.spent[0] == pytest.approx(1.0) and sel.info["mode"] is None


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"k": 13}, "k"), ({"k": 0}, "k"), ({"k": 2.0}, "k"), ({"eps": 0.0}, "eps"),
    ({"eps": float("nan")}, "eps"), ({"bounds": (3, 3)}, "bounds"),
    ({"bounds": {"x": (0, 1)}}, "bounds"), ({"bounds_share": 1.0}, "bounds_share"),
    ({"bounds_share": 0}, "bounds_share"), ({"bounds_mode": "rows"}, "bounds_mode"),
    ({"q": 0.7}, "q"), ({"X": np.full((300, 12), np.nan)}, "finite"),
    ({"y": np.ones(7)}, "y"), ({"rng": 0}, "rng")])
def test_validation_before_any_charge(kwargs, name):
    X, y = _data()
    args = {"X": X, "y": y, "k": 3, "eps": 1.0, "rng": np.random.default_rng(0)} | kwargs
    led = Ledger()
    with pytest.raises(ValidationError, match=name):
        select(args.pop("X"), args.pop("y"), ledger=led, **args)
    assert len(led) == 0


def test_registry_and_ignored_options():
    X, y = _data()
    sel = run_selector("sis", X, y, k=2, eps=HUGE, rng=np.random.default_rng(0), ledger=None,
                       bounds=(-5, 5), groups="sqrt", n_noisy=300)
    assert len(sel.indices) == 2 and sel.indices == tuple(sorted(sel.indices))


def test_budget_cap_is_respected():
    X, y = _data()
    with pytest.raises(DPStatsError):
        select(X, y, k=2, eps=1.0, rng=np.random.default_rng(0), ledger=Ledger(eps=0.5),
               bounds=(-5, 5))


# ---- privacy-relevant behaviour -------------------------------------------------------------

def test_tiny_eps_is_roughly_uniform():
    X, y = _data(d=10)
    rng = np.random.default_rng(11)
    counts = np.zeros(10)
    runs = 1500
    for _ in range(runs):
        sel = select(X, y, k=2, eps=1e-6, rng=rng, ledger=None, bounds=(-4, 4))
        counts[list(sel.indices)] += 1
    freq = counts / runs
    assert np.all(np.abs(freq - 0.2) < 0.05), freq


def _neighbours(X, y, extra_rows):
    for i in range(X.shape[0]):
        yield np.delete(X, i, axis=0), np.delete(y, i)
    for xr, yr in extra_rows:
        yield np.vstack([X, xr]), np.append(y, yr)


def max_score_change(score_fn, X, y, seed=0):
    """Largest |score_j(D) - score_j(D')| over add/remove-one-row neighbours D' of D."""
    rng = np.random.default_rng(seed)
    d = X.shape[1]
    extra = [(rng.uniform(-50, 50, d), rng.uniform(-50, 50)) for _ in range(10)]
    extra += [(np.full(d, 1e6), 1e6), (np.full(d, -1e6), 1e6), (np.zeros(d), 0.0)]
    base = score_fn(X, y)
    return max(np.abs(score_fn(Xn, yn) - base).max() for Xn, yn in _neighbours(X, y, extra))


BOUNDS = parse_bounds({"x": (-2.0, 6.0), "y": (-3.0, 1.0)}, 4)


def correct_scores(X, y):
    return sis_scores(X, y, BOUNDS)


def broken_no_clip(X, y):
    """Scaled and centred by the bounds but not clipped: one outlying row moves a score a lot."""
    xs = (X - BOUNDS.x_lo / 2 - BOUNDS.x_hi / 2) / (BOUNDS.x_hi / 2 - BOUNDS.x_lo / 2)
    ys = (y - (BOUNDS.y_lo + BOUNDS.y_hi) / 2) / ((BOUNDS.y_hi - BOUNDS.y_lo) / 2)
    return np.abs(xs.T @ ys)


def broken_data_max(X, y):
    """Scaled by the data's own max-abs (the non-private preprocessing of 004)."""
    return np.abs((X / np.abs(X).max(axis=0)).T @ (y / np.abs(y).max()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sensitivity_of_scores_is_at_most_one(seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10.0, 10.0, size=(25, 4))        # wider than the bounds: clipping matters
    y = rng.uniform(-10.0, 10.0, size=25)
    change = max_score_change(correct_scores, X, y, seed)
    assert 0.99 <= change <= 1.0 + 1e-9          # attained, never exceeded


@pytest.mark.parametrize("broken", [broken_no_clip, broken_data_max])
def test_sensitivity_check_catches_broken_variants(broken):
    rng = np.random.default_rng(0)
    X = rng.uniform(-10.0, 10.0, size=(25, 4))
    y = rng.uniform(-10.0, 10.0, size=25)
    assert max_score_change(broken, X, y) > 1.0
