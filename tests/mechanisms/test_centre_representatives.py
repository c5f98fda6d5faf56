"""The private centre's O(n) stand-ins (one per grid cell) leave the exponential mechanism's
distribution over the grid unchanged: the counts below, on and above every grid point match
those of the raw values."""

import numpy as np
import pytest

from dpstats.mechanisms.centre import _cell_representatives, centre_grid


def _below_on_above(values, counts, g):
    """#{v < g_j}, #{v == g_j}, #{v > g_j} for every grid point (values sorted, weighted)."""
    cum = np.concatenate(([0], np.cumsum(counts)))
    lt = cum[np.searchsorted(values, g, side="left")]
    le = cum[np.searchsorted(values, g, side="right")]
    return lt, le - lt, cum[-1] - le


@pytest.mark.parametrize("case", ["normal", "ties", "wide", "edges"])
def test_cell_representatives_keep_every_grid_point_score(case):
    """The O(n) stand-ins leave #{below}, #{on}, #{above} unchanged at all 262,145 grid points,
    so the exponential mechanism's distribution over the grid is the same as with raw values."""
    rng = np.random.default_rng(5)
    g = centre_grid()
    if case == "normal":
        v = rng.normal(-120.0, 2.0, 20_000)
    elif case == "ties":
        v = np.r_[np.zeros(500), np.ones(300), rng.choice(g, 400), -rng.choice(g, 400)]
    elif case == "wide":
        v = rng.standard_cauchy(20_000) * 10.0 ** rng.integers(-30, 30, 20_000)
    else:
        v = np.r_[g[:3], g[-3:], np.nextafter(g[-1], np.inf), 2.0 ** 64, 2.0 ** 64 * 3,
                  -(2.0 ** 64), 2.0 ** -64, np.nextafter(2.0 ** -64, 0), 1e-300, -1e-300,
                  -0.0, 0.0, 5e-324, np.nextafter(g[-1], 0), 1.0, np.nextafter(1.0, 2)]
    u, cnt = _cell_representatives(v)
    assert (np.diff(u) > 0).all() and cnt.sum() == v.size
    raw = np.unique(v, return_counts=True)
    for got, want in zip(_below_on_above(u, cnt, g), _below_on_above(*raw, g), strict=True):
        np.testing.assert_array_equal(got, want)


def test_cell_representatives_catch_a_wrong_cell():
    """The check above fails for stand-ins that move a value across a grid point."""
    g = centre_grid()
    v = np.random.default_rng(6).normal(3.0, 1.0, 5000)
    u, cnt = _cell_representatives(v)
    shifted = np.unique(np.r_[u[:-1], u[-1] * 1.01])          # largest stand-in pushed out
    lt_bad = _below_on_above(shifted, np.r_[cnt[:-1], cnt[-1]], g)[0]
    assert not np.array_equal(lt_bad, _below_on_above(*np.unique(v, return_counts=True), g)[0])


def test_large_columns_take_the_stand_in_path_end_to_end(monkeypatch):
    """From 2**18 rows on, private_centre_value uses the stand-ins (spied on here) and still
    releases a grid point near the median at a large eps."""
    from dpstats.mechanisms import centre as mod
    calls = []
    real = mod._cell_representatives
    monkeypatch.setattr(mod, "_cell_representatives", lambda v: calls.append(v.size) or real(v))
    v = np.random.default_rng(7).normal(-40.0, 3.0, mod._REPRESENT_MIN_ROWS)
    got = mod.private_centre_value(v, 50.0, np.random.default_rng(8))
    assert calls == [v.size]
    assert got in set(centre_grid()) and abs(got + 40.0) < 0.1
    mod.private_centre_value(v[:1000], 50.0, np.random.default_rng(8))
    assert calls == [v.size]                                  # small columns: np.unique
