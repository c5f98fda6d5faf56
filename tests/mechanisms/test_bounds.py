"""Tests for dpstats.mechanisms.bounds: the public grid, private quantiles, private and public
bounds."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dpstats.errors import DPStatsError, ValidationError
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.bounds import (
    GRID,
    parse_bounds,
    private_bounds,
    private_quantile,
    quantile_utility,
    to_unit,
)

HUGE = 1e7


def brute_cell_utility(values, q):
    """O(n * |GRID|) reference: -(distance of q n from [#{v < left end}, #{v <= right end}])."""
    v = np.asarray(values, dtype=float)
    edges = np.concatenate([[-np.inf], GRID, [np.inf]])
    out = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        a = sum(1 for x in v if x < lo)
        b = sum(1 for x in v if x <= hi)
        qn = q * v.size
        out.append(-(a - qn if qn < a else qn - b if qn > b else 0.0))
    return np.array(out)


def test_grid_is_public_log_grid():
    assert GRID.size == 259
    assert np.all(np.diff(GRID) > 0)
    assert 0.0 in GRID and 1.0 in GRID and -1.0 in GRID
    assert GRID[0] == -(2.0 ** 64) and GRID[-1] == 2.0 ** 64
    assert GRID[GRID > 0][0] == 2.0 ** -64
    with pytest.raises(ValueError):
        GRID[0] = 1.0


@pytest.mark.parametrize("q", [0.01, 0.3, 0.5, 0.99])
def test_utility_matches_brute_force(q):
    rng = np.random.default_rng(1)
    v = np.concatenate([rng.lognormal(0, 3, 60) * rng.choice([-1, 1], 60), [0.0, 0.0, 4.0, 4.0]])
    np.testing.assert_allclose(quantile_utility(np.sort(v), q), brute_cell_utility(v, q))


@pytest.mark.parametrize("q", [0.01, 0.25, 0.9])
def test_utility_sensitivity_under_add_remove_one_row(q):
    rng = np.random.default_rng(2)
    v = rng.normal(0, 10, 40)
    base = quantile_utility(np.sort(v), q)
    worst = 0.0
    for i in range(v.size):                                            # remove one row
        worst = max(worst, np.abs(quantile_utility(np.sort(np.delete(v, i)), q) - base).max())
    for extra in [-1e30, -3.0, 0.0, 0.7, 5.0, 1e30]:                    # add one row
        worst = max(worst, np.abs(quantile_utility(np.sort(np.append(v, extra)), q) - base).max())
    assert worst <= max(q, 1 - q) + 1e-12
    assert worst >= min(q, 1 - q) - 1e-12          # the check is not vacuous


@pytest.mark.parametrize(("q", "rounding", "expected"), [
    (0.5, "down", 256.0), (0.5, "up", 512.0), (0.1, "down", 64.0), (0.9, "up", 1024.0)])
def test_quantile_lands_on_right_grid_value_at_huge_eps(q, rounding, expected):
    v = np.arange(1000.0)                      # quantiles 99.9, 499.5, 899.1
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert private_quantile(v, q, HUGE, rng, rounding=rounding) == expected


def test_quantile_outside_range_and_negative():
    v = -np.geomspace(3.0, 5.0, 500)                       # all in [-5, -3]
    assert private_quantile(v, 0.01, HUGE, np.random.default_rng(0)) == -8.0
    assert private_quantile(v, 0.99, HUGE, np.random.default_rng(0), rounding="up") == -2.0


def test_quantile_of_labels_on_grid_points():
    y = np.repeat([-1.0, 1.0], [30, 70])
    rng = np.random.default_rng(0)
    assert {private_quantile(y, 0.1, HUGE, rng) for _ in range(40)} == {-2.0, -1.0}
    assert {private_quantile(y, 0.9, HUGE, rng, rounding="up") for _ in range(40)} == {1.0, 2.0}
    assert {private_quantile(y, 0.5, HUGE, rng, rounding="up") for _ in range(40)} == {1.0, 2.0}


def test_quantile_is_noisy_at_tiny_eps():
    v = np.arange(1000.0)
    rng = np.random.default_rng(3)
    out = {private_quantile(v, 0.5, 1e-6, rng) for _ in range(200)}
    assert len(out) > 50                        # close to uniform over 260 cells


def test_quantile_charges_once_with_stage():
    led = Ledger()
    private_quantile([1.0, 2.0, 3.0], 0.5, 0.7, np.random.default_rng(0), led,
                     stage="my stage", what="thing")
    (c,) = led.charges
    assert (c.mechanism, c.eps, c.delta, c.stage) == ("exponential", 0.7, 0.0, "my stage")
    assert "thing" in c.detail and "0.5" in c.detail


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"values": [1.0, np.nan]}, "values"), ({"values": [[1.0]]}, "values"),
    ({"q": 0.0}, "q"), ({"q": 1.0}, "q"), ({"q": True}, "q"), ({"eps": 0.0}, "eps"),
    ({"eps": np.inf}, "eps"), ({"rounding": "nearest"}, "rounding")])
def test_quantile_validation_charges_nothing(kwargs, name):
    args = {"values": [1.0, 2.0], "q": 0.5, "eps": 1.0} | kwargs
    led = Ledger()
    with pytest.raises(ValidationError, match=name):
        private_quantile(args["values"], args["q"], args["eps"], np.random.default_rng(0), led,
                         rounding=kwargs.get("rounding", "down"))
    assert len(led) == 0


def test_quantile_is_fast_for_large_n():
    v = np.random.default_rng(0).normal(size=2_000_000)
    t0 = time.perf_counter()
    private_quantile(v, 0.01, 1.0, np.random.default_rng(0))
    assert time.perf_counter() - t0 < 2.0       # one sort; O(n * grid) would take far longer


# ---- private_bounds -----------------------------------------------------------------------

def _data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform([-3.0, 0.0, 10.0][:d], [3.0, 1.0, 100.0][:d], size=(n, d))
    return X, X @ np.ones(d)


def test_column_mode_ledger_and_values_at_huge_eps():
    X, y = _data()
    led = Ledger()
    b = private_bounds(X, y, HUGE, np.random.default_rng(0), led, mode="column")
    assert b.source == "private" and b.mode == "column"
    assert len(led) == 2 * 3 + 2
    assert all(c.mechanism == "exponential" and c.stage == "bounds" for c in led.charges)
    assert all(c.eps == pytest.approx(HUGE / 8) for c in led.charges)
    assert led.spent[0] == pytest.approx(HUGE) and b.eps == pytest.approx(HUGE)
    assert b.x_lo.tolist() == [-4.0, 2.0 ** -7, 8.0]  # grid value below each 1% quantile
    assert b.x_hi.tolist() == [4.0, 1.0, 128.0]       # grid value above each 99% quantile
    qy = np.quantile(y, [0.01, 0.99])                 # y > 0 here
    assert b.y_lo <= qy[0] < 2 * b.y_lo and b.y_hi / 2 < qy[1] <= b.y_hi


def test_global_mode_one_bound_from_row_maxima():
    X, y = _data()
    led = Ledger()
    b = private_bounds(X, y, 3.0, np.random.default_rng(0), led, mode="global")
    assert len(led) == 3 and led.spent[0] == pytest.approx(3.0)
    assert all(c.eps == pytest.approx(1.0) for c in led.charges)
    assert np.all(b.x_lo == -b.x_hi) and np.unique(b.x_hi).size == 1 and b.x_hi[0] > 0
    b = private_bounds(X, y, HUGE, np.random.default_rng(0), mode="global")
    assert b.x_hi[0] == 128.0                       # 99% of row maxima lie in [10, 100]


def test_auto_mode_switches_on_d():
    rng = np.random.default_rng(0)
    for d, mode, n_charges in [(64, "column", 130), (65, "global", 3)]:
        led = Ledger()
        b = private_bounds(rng.normal(size=(50, d)), rng.normal(size=50), 1.0, rng, led)
        assert b.mode == mode and len(led) == n_charges
        assert led.spent[0] == pytest.approx(1.0)


def test_only_x_or_only_y():
    X, y = _data(d=2)
    led = Ledger()
    b = private_bounds(X, None, 1.0, np.random.default_rng(0), led, mode="column")
    assert len(led) == 4 and b.y is None and b.x_lo.shape == (2,)
    led = Ledger()
    b = private_bounds(None, y, 1.0, np.random.default_rng(0), led)
    assert len(led) == 2 and b.x_lo is None and b.y[0] < b.y[1]


def test_intervals_always_valid_at_tiny_eps():
    X, y = _data(n=30)
    rng = np.random.default_rng(5)
    for mode in ("column", "global"):
        for _ in range(200):
            b = private_bounds(X, y, 1e-3, rng, mode=mode)
            assert np.all(b.x_lo < b.x_hi) and b.y_lo < b.y_hi
            assert np.all(np.isfinite(b.x_lo)) and np.all(np.isfinite(b.x_hi))


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"q": 0.5}, "q"), ({"q": -0.1}, "q"), ({"mode": "rows"}, "mode"), ({"eps": -1.0}, "eps"),
    ({"X": np.array([[np.inf]] * 5)}, "X"), ({"y": np.ones(4)}, "rows"),
    ({"X": np.ones((5, 0))}, "columns"), ({"X": None, "y": None}, "X or y")])
def test_private_bounds_validation_charges_nothing(kwargs, name):
    args = {"X": np.ones((5, 2)), "y": np.ones(5), "eps": 1.0} | kwargs
    led = Ledger()
    with pytest.raises(DPStatsError, match=name):
        private_bounds(args.pop("X"), args.pop("y"), args.pop("eps"), np.random.default_rng(0),
                       led, **args)
    assert len(led) == 0


# ---- public bounds and the map into [-1, 1] -----------------------------------------------

def test_parse_bounds_forms():
    b = parse_bounds((-2, 3), 3)
    assert b.x_lo.tolist() == [-2.0] * 3 and b.x_hi.tolist() == [3.0] * 3 and b.y == (-2, 3)
    assert b.source == "public" and b.eps == 0.0
    b = parse_bounds({"x": {0: (0, 1), "b": (-1, 1)}, "y": (0, 10)}, 2, columns=["a", "b"])
    assert b.x_lo.tolist() == [0.0, -1.0] and b.y == (0.0, 10.0)
    b = parse_bounds({"x": [[0, 1], [2, 3]], "y": "auto"}, 2)
    assert b.x_hi.tolist() == [1.0, 3.0] and b.y is None
    assert parse_bounds("auto", 4).source == "auto"
    assert parse_bounds({"x": "auto", "y": "auto"}, 4).x_lo is None


@pytest.mark.parametrize("bad", [
    (1, 1), (2, 1), (0, np.inf), (np.nan, 1), ("a", "b"), (True, 2), 5, "guess", (1, 2, 3),
    {"x": (0, 1)}, {"x": (0, 1), "y": (0, 1), "z": 1}, {"x": {0: (0, 1)}, "y": (0, 1)},
    {"x": {"zz": (0, 1), 1: (0, 1)}, "y": (0, 1)}, {"x": [[0, 1]], "y": (0, 1)},
    {"x": (0, 1), "y": (3, -3)}])
def test_parse_bounds_rejects_bad_input_naming_bounds(bad):
    with pytest.raises(ValidationError, match="bounds"):
        parse_bounds(bad, 2)


def test_to_unit_centres_scales_and_clips():
    v = np.array([[-10.0, 0.0], [0.0, 5.0], [2.0, 20.0]])
    out = to_unit(v, [-2.0, 0.0], [2.0, 10.0])
    np.testing.assert_allclose(out, [[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]])
    big = float(2.0 ** 65)
    assert np.isfinite(to_unit(np.array([1e300, -1e300]), -big, big)).all()
