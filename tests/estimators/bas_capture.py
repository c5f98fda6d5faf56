"""The released inputs of one Boosted AdaSSP fit's inference step, captured by a spy on
:func:`~dpstats.estimators.inference.ssp.ssp_inference` (for the tests of its seeds)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from dpstats.estimators import bas
from dpstats.estimators.inference import ssp

#: Columns of the captured fits' design (an intercept and five predictors).
P = 6


def captured_inference(seed: int, hetero: bool = False, **fit_kw) -> tuple[str, dict]:
    """``(kind, kwargs)`` of the first ``ssp_inference`` call of a BAS fit on 20,000 rows
    (Gaussian predictors, errors with sd ``0.5 + |x1|`` when ``hetero``)."""
    rng = np.random.default_rng(seed)
    n = 20_000
    X = np.c_[np.ones(n), rng.normal(size=(n, P - 1))]
    noise = rng.normal(size=n)
    y = X @ np.r_[1.0, 1.0, -0.5, 1 / 3, -0.25, 0.2] + (
        noise * (0.5 + np.abs(X[:, 1])) if hetero else noise)
    seen = []
    real = ssp.ssp_inference

    def spy(kind, **kw):
        seen.append((kind, copy.deepcopy(kw)))
        return real(kind, **kw)
    mp = pytest.MonkeyPatch()
    mp.setattr(ssp, "ssp_inference", spy)
    try:
        bas.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0, **fit_kw)
    finally:
        mp.undo()
    return seen[0]
