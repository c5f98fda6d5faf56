"""Taint check of dp_glm's objective perturbation with intervals (the default from about
1,000 (p/6)^0.5 / mu released rows): with every mechanism replaced by a data-blind stub,
nothing in the
result (standard errors, the intervals' centre ``params - bias``, z, p-values, predictions'
intervals, the summary's notes) may differ between neighbouring data sets. The broken variant
centres the intervals at the exact (non-private) logistic fit of the rows, and is caught."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import taint
from test_taint import SEED, _binary_design, _caught, glm_frame, glm_neighbours

import dpstats as dp
from dpstats.estimators import objpert
from dpstats.estimators.outpert import ridge_fit

DATA = glm_frame(6_000, seed=4)
FORMULA, EPS = "z ~ x1 + x2", 5.0


def _check(label: str):
    def run(d):
        return dp.dp_glm(FORMULA, d, eps=EPS, method="objpert", select=None,
                         random_state=SEED)
    return taint.taint_check(label, run, DATA, glm_neighbours(DATA),
                             design_of=lambda d: _binary_design(FORMULA, d),
                             newdata=DATA.iloc[:8].drop(columns="z"))


def test_objpert_intervals_read_released_values_only():
    # a fit that releases intervals at this size and budget, so the check covers them
    res = dp.dp_glm(FORMULA, DATA, eps=EPS, method="objpert", select=None, random_state=SEED)
    assert np.isfinite(res.bse.to_numpy()).all() and res.inference.bias is not None
    _check("dp_glm objpert with intervals").check()


def test_broken_intervals_centred_at_the_exact_fit(monkeypatch):
    """The intervals' centre moved to the unpenalised fit on the rows (no mechanism)."""
    real = objpert._inference

    def leaky(rows, theta_k, *args, **kwargs):
        inf = real(rows, theta_k, *args, **kwargs)
        exact = ridge_fit(rows.U, rows.y, 1e-6)
        bias = np.zeros(inf.cov.shape[0]) if inf.bias is None else inf.bias
        return replace(inf, bias=bias + 1e-3 * float(exact.sum()))
    monkeypatch.setattr(objpert, "_inference", leaky)
    _caught(_check("broken: objpert centred at the exact fit"), "tidy")


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):
        yield
