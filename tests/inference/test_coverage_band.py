"""benchmarks/coverage_band.py: a miss far outside the band is significant, one at the edge's
Monte Carlo error is not, a row inside the band is not tested, and Holm's adjustment is the
step-down one."""

from __future__ import annotations

import numpy as np
import pandas as pd
from benchmark_script import load_benchmark

cb = load_benchmark("coverage_band.py")


def _table():
    rows = [("far", 500, 1.0, 0.95, 0.80, 0.97),      # 400 of 500: far below 0.93
            ("edge", 500, 1.0, 0.95, 0.924, 0.97),    # 462 of 500: within MC error of 0.93
            ("inside", 500, 1.0, 0.955, 0.94, 0.97),
            ("high", 1000, 0.5, 0.97, 0.95, 0.992),   # 496 of 500 at 0.98: p about 0.03
            ("withheld", 500, 0.0, np.nan, np.nan, np.nan)]
    return pd.DataFrame([{"family": "lm", "cell": c, "method": "bas", "reps": r,
                          "with_interval": w, "coverage": cov, "coverage_min": lo,
                          "coverage_max": hi} for c, r, w, cov, lo, hi in rows])


def test_misses_flags_what_monte_carlo_error_does_not_explain():
    res = cb.misses(_table()).set_index("cell")
    assert set(res.index) == {"far", "edge", "high"}
    assert res.loc["far", "p_holm"] < 1e-10
    assert res.loc["edge", "p"] > 0.2
    assert res.loc["high", "side"] == "high" and res.loc["high", "m"] == 500
    assert 0.01 < res.loc["high", "p"] < 0.05


def test_holm_is_step_down_and_monotone():
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert np.allclose(cb.holm(p), [0.04, 0.09, 0.09, 0.5])
