"""AdaSSP/BAS give no interval to a coefficient whose released box is absurdly wide (a
spurious histogram cell near the grid's end, or such public bounds): the mapped-back
coefficient is ~1e-19 and its bootstrap spread a point, so an interval would be a false claim."""

from __future__ import annotations

import numpy as np
import pandas as pd

import dpstats as dp


def _frame(n=20_000, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2],
                         "y": 1 + X @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(n)})


def test_a_grid_edge_box_gets_no_interval():
    huge = 2.0 ** 62.5
    fit = dp.dp_lm("y ~ x1 + x2 + x3", _frame(), eps=4.0, method="bas", random_state=1,
                   bounds={"x": {"x1": (-5, 5), "x2": (-5, 5), "x3": (-huge, huge)},
                           "y": (-20, 20)})
    assert not np.isfinite(fit.bse["x3"])
    assert np.isfinite(fit.bse[["Intercept", "x1", "x2"]]).all()


def test_an_ordinary_box_keeps_its_interval():
    fit = dp.dp_lm("y ~ x1 + x2 + x3", _frame(), eps=4.0, method="bas", random_state=1,
                   bounds={"x": {"x1": (-5, 5), "x2": (-5, 5), "x3": (-5, 5)},
                           "y": (-20, 20)})
    assert np.isfinite(fit.bse).all()
