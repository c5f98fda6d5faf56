"""Taint check of a Tukey fit that releases standard errors (the gate passes): with every
mechanism replaced by a data-blind stub, nothing in the result (standard errors, intervals,
the residual scale, the summary's notes) may differ between neighbouring data sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_taint import SEED, lm_check

import dpstats as dp


def _frame(n: int = 30_000) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    x1 = rng.normal(3.0, 2.0, n)
    return pd.DataFrame({"x1": x1, "y": 1.0 - 0.5 * x1 + rng.standard_t(4, n)})


def test_tukey_with_standard_errors():
    data = _frame()
    # the mechanism factor's fixed-seed simulation runs once per (m, p, eps) and process; run
    # it before recording so the tape holds the fit's releases only (the simulation reads no
    # data: its calls would otherwise be taped in the first run and not in the replays)
    dp.dp_lm("y ~ x1", data, eps=1.0, method="tukey", select=None, random_state=SEED)
    check = lm_check("dp_lm tukey with standard errors", formula="y ~ x1", data=data,
                     eps=1.0, method="tukey", select=None)
    check.check()
