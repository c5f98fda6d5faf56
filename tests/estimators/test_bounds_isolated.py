"""An isolated far outer cell of the released log-histograms must clear a family-wise 1e-6
threshold before it widens a span (dpstats.estimators.bounds_release.drop_isolated).

What is checked: a noise-sized cell far from the data no longer widens the bounds (the rule
before, spans_from_histograms on the 1% threshold alone, is the broken variant: it widens them
more than 16-fold); a far cell of real data that clears the strict threshold still does; a
sparse cell next to the span and a 0/1 column's two cells are kept; nothing is charged beyond
the one release.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstats.estimators.bounds_release import (
    ISOLATED_ALPHA,
    drop_isolated,
    histogram_bounds,
)
from dpstats.mechanisms.gdp import (
    detection_threshold,
    grid_cells,
    log_grid_index,
    log_histograms,
    spans_from_histograms,
)

SIGMA = 40.0


def _release(extra: dict):
    """A release with zero noise plus ``extra`` {(row, cell): count}: a seeded stand-in for
    the Gaussian mechanism (the rule is post-processing; its input is what is tested)."""
    def release(counts, sensitivity):
        out = np.array(counts, dtype=np.float64).reshape(-1, grid_cells())
        for (row, cell), v in extra.items():
            out[row, cell] += v
        return out.ravel(), SIGMA
    return release


def _data(n=20_000, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 1))


def _far_cell(value=5_000.0):
    return int(log_grid_index(np.array([value]))[0])


def test_far_noise_cell_does_not_widen_the_span():
    X = _data()
    low = detection_threshold(SIGMA, grid_cells())
    extra = {(0, _far_cell()): low + 10.0}            # clears 1%, not 1e-6
    b = histogram_bounds(X, None, _release(extra))
    clean = histogram_bounds(X, None, _release({}))
    assert b.x_hi[0] == clean.x_hi[0] < 10.0
    # the broken variant: the 1% threshold alone widens the span many-fold
    noisy = log_histograms(X)
    noisy[0, _far_cell()] += low + 10.0
    lo, hi = spans_from_histograms(noisy, low)
    assert (hi[0] - lo[0]) > 16 * (clean.x_hi[0] - clean.x_lo[0])


def test_far_cell_clearing_the_strict_threshold_widens_the_span():
    X = _data()
    strict = detection_threshold(SIGMA, grid_cells(), ISOLATED_ALPHA)
    b = histogram_bounds(X, None, _release({(0, _far_cell()): strict + 1.0}))
    assert b.x_hi[0] > 5_000.0


@pytest.mark.parametrize("values", ["next", "binary"])
def test_near_or_two_cell_columns_are_kept(values):
    low = detection_threshold(SIGMA, grid_cells())
    if values == "binary":       # a 0/1 column: the cells {0} and [1, 1.19) are far apart
        X = (np.random.default_rng(1).uniform(size=(20_000, 1)) < 0.3).astype(float)
        b = histogram_bounds(X, None, _release({}))
        assert (b.x_lo[0], b.x_hi[0]) == (0.0, pytest.approx(2 ** 0.25))
        return
    X = _data()
    clean = histogram_bounds(X, None, _release({}))
    nxt = int(log_grid_index(np.array([clean.x_hi[0] * 1.5]))[0])   # one cell past a gap
    X0 = np.where(X > clean.x_hi[0], clean.x_hi[0] * 0.99, X)       # no rows beyond
    b = histogram_bounds(X0, None, _release({(0, nxt): low + 5.0}))
    assert b.x_hi[0] > clean.x_hi[0] * 1.5


def test_rule_on_counts_directly():
    v = np.zeros((2, grid_cells()))
    v[:, [773, 774, 775]] = 100.0
    v[0, 900] = 45.0           # far, below strict: dropped
    v[1, 900] = 70.0           # far, above strict: kept
    out = drop_isolated(v, 40.0, 60.0)
    assert out[0, 900] == 0.0 and out[1, 900] == 70.0
    assert math.isclose(out[:, 773:776].sum(), 600.0)
