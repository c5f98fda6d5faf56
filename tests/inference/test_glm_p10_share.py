"""benchmarks/glm_p10_share.py (issue 16): its share wrapper spends the share it names, and its
zero-budget re-gate rebuilds the fit's own intervals from the recorded released inputs."""

from __future__ import annotations

import numpy as np
from benchmark_script import load_benchmark

from dpstats.estimators.inference import glm as G


def _fit(share):
    mod = load_benchmark("glm_p10_share.py")
    cell = dict(mod.gc.CELLS[0])
    df, beta = mod.gc.simulate(cell, "glm-auto", np.random.default_rng(1000))
    rec: list = []
    res = mod.fit(df, cell, 1000 * 1000, share, "auto", rec)
    return mod, res, rec


def test_share_wrapper_charges_the_share():
    _, res, rec = _fit(0.2)
    led = res.ledger
    inf = led[led["stage"] == "inference"]
    assert len(inf) == 1 and len(rec) == 1
    fit_eps = led["eps"].sum() - led[led["stage"] == "private n"]["eps"].sum()
    np.testing.assert_allclose(led["eps"].sum(), 1.0)
    np.testing.assert_allclose(inf["eps"].sum(), 0.2 * fit_eps)     # 0.10 by default


def test_regate_reproduces_the_fit_and_gates_above_one():
    mod, res, rec = _fit(G.OBJPERT_SHARE)
    ci = res.conf_int().to_numpy()
    assert res.released and np.isfinite(ci).all()
    lo, hi = mod.regate(rec[-1], G.PD_SHARE)
    est = res.params.to_numpy()
    np.testing.assert_allclose(est - hi, ci[:, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est - lo, ci[:, 1], rtol=1e-9, atol=1e-12)
    assert mod.regate(rec[-1], 1.01) is None
    assert G.PD_SHARE == 0.95               # restored
