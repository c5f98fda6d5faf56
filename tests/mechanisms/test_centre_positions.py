"""The default grid's positions from the values' bits equal two binary searches (issue 15
speed), so the private centre's runs, scores and release are unchanged."""

import numpy as np

from dpstats.mechanisms import centre as mod


def _values():
    g = mod.centre_grid()
    rng = np.random.default_rng(0)
    return np.concatenate([
        g, np.nextafter(g, np.inf), np.nextafter(g, -np.inf), rng.normal(size=5000),
        np.ldexp(rng.random(20000) * 2 - 1, rng.integers(-1070, 1020, 20000)),
        [0.0, -0.0, 5e-324, -5e-324, 1.7e308, -1.7e308, 2.0**-65, -(2.0**65)]])


def _searches(u):
    g = mod.centre_grid()
    return np.searchsorted(g, u, "left"), np.searchsorted(g, u, "right")


def test_positions_from_bits_equal_binary_searches():
    u = _values()
    got, want = mod._default_positions(u), _searches(u)
    assert all((a == b).all() for a, b in zip(got, want, strict=True))
    u = np.unique(u)                          # the mechanism's path: sorted distinct values
    got = mod._grid_positions(mod.centre_grid(), u)
    assert all((a == b).all() for a, b in zip(got, _searches(u), strict=True))


def test_a_grid_point_counted_as_inside_is_caught(monkeypatch):
    """Broken variant: values on a grid point placed as if strictly inside a cell."""
    real = mod._default_positions

    def broken(u):
        left, right = real(u)
        return right.copy(), right
    u = _values()
    got = broken(u)
    assert not all((a == b).all() for a, b in zip(got, _searches(u), strict=True))


def test_same_release_through_either_position_path(monkeypatch):
    v = np.random.default_rng(2).normal(3.0, 1.0, 4000)
    want = [mod.private_centre_value(v, 0.3, np.random.default_rng(s)) for s in range(8)]
    monkeypatch.setattr(mod, "_default_positions", lambda u: _searches(u))
    got = [mod.private_centre_value(v, 0.3, np.random.default_rng(s)) for s in range(8)]
    assert got == want
