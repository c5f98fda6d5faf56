"""Private Frank-Wolfe in memory reads exact sums (dpstats.estimators.fw_sums): every gradient
and screening component is the same bits for any order of the rows; a float sum is not."""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.estimators import fw_loop, fw_sums
from dpstats.estimators.fw import frank_wolfe
from dpstats.estimators.screening import PrivateScreener, derivative_bound, screen_plan


def _data(n=30_000, d=6, seed=3):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, size=(n, d - 1))])
    y = np.clip(X @ np.linspace(0.5, -0.5, d) * 0.5 + 0.3 * rng.normal(size=n), -1, 1)
    return X, y


class _Recorder(PrivateScreener):
    """Records what the screener would release (no noise drawn)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def release(self, g, B, uu, c=None):
        self.seen.append((np.array(g), B, uu, None if c is None else np.array(c)))
        if c is not None:
            self._c = np.asarray(c)
        return -np.ones(len(g))          # screen nothing: the path does not change


def _run(X, y, order):
    Xt = np.ascontiguousarray(X[order].T)
    scores = []

    def choose(s):
        scores.append(np.array(s))
        return int(np.argmin(s))
    plan = screen_plan(1.0, 1e-5, 4, "squared", 2.0, X.shape[1])
    rec = _Recorder(Xt, "squared", 2.0, plan, np.random.default_rng(0), None)
    w, _ = frank_wolfe(Xt, y[order], loss="squared", radius=2.0, T=20, choose=choose,
                       screen_at=(5, 10, 15, 20), screener=rec, protect=0)
    return w, scores, rec.seen


def _same(a, b):
    wa, sa, ra = a
    wb, sb, rb = b
    same_scores = all(np.array_equal(x, y) for x, y in zip(sa, sb, strict=True))
    same_screens = all(np.array_equal(x[0], y[0]) and x[1] == y[1] and x[2] == y[2]
                       and (x[3] is None or np.array_equal(x[3], y[3]))
                       for x, y in zip(ra, rb, strict=True))
    return same_scores and same_screens and np.array_equal(wa, wb)


def test_in_memory_frank_wolfe_sums_are_the_same_bits_for_any_row_order():
    X, y = _data()
    n = len(y)
    perm = np.random.default_rng(1).permutation(n)
    a, b = _run(X, y, np.arange(n)), _run(X, y, perm)
    assert len(a[1]) == 20 and len(a[2]) == 4
    assert _same(a, b)
    assert a[2][0][3] is not None                      # column norms at the first screening


def test_a_float_gradient_is_caught(monkeypatch):
    """The broken variant: the gradient summed in floats (BLAS) depends on the row order."""
    X, y = _data()
    n = len(y)
    perm = np.random.default_rng(1).permutation(n)

    class _Float:
        def __init__(self, value):
            self.value = value

    def float_gradient(grid, r, M):
        q = grid.q if isinstance(grid, fw_sums.GridMatrix) else grid
        return _Float(np.asarray(q).T @ r)
    monkeypatch.setattr(fw_loop, "gradient_sum", float_gradient)     # where the loop reads it
    assert not _same(_run(X, y, np.arange(n)), _run(X, y, perm))


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_sums_match_floats_to_the_grid(loss):
    X, y = _data(5000, 4)
    rng = np.random.default_rng(2)
    r = rng.uniform(-1, 1, len(y)) * (3.0 if loss == "squared" else 0.85)   # within M
    u = rng.uniform(-2, 2, len(y))
    M = derivative_bound(loss, 2.0)
    g = fw_sums.gradient_sum(X, r, M).value
    np.testing.assert_allclose(g, X.T @ r, rtol=5e-6, atol=1e-3)   # the grid's shrink: ~1e-6
    s = fw_sums.screen_sums(u, r, 2.0, M)
    np.testing.assert_allclose([s["B"].value[0], s["uu"].value[0]], [u @ r, u @ u], rtol=1e-7)
    np.testing.assert_allclose(fw_sums.norm_sums(X).value, (X * X).sum(axis=0), rtol=1e-5)
