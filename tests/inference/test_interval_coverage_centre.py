"""benchmarks/interval_coverage.py scores an interval at its released centre (issue 16).

dp_glm's default (objective perturbation) releases a bias with its intervals: ``conf_int`` is
centred at ``params - bias``. The script scored ``params +- 1.96 se`` instead, which put the
logistic centre cell's intercept at coverage 0.495 (design note 73): its ``z`` must be the
centre's."""

from __future__ import annotations

import numpy as np
from benchmark_script import load_benchmark

import dpstats


def _load():
    return load_benchmark("interval_coverage.py")


def test_logistic_default_z_is_centred_at_params_minus_bias(monkeypatch):
    mod = _load()
    fits = []
    real = dpstats.dp_glm

    def capture(*args, **kwargs):
        fits.append(real(*args, **kwargs))
        return fits[-1]

    monkeypatch.setattr(dpstats, "dp_glm", capture)
    cell = dict(mod.CENTRE)
    out = mod.one_rep((cell, "default", 0, True))
    fit = fits[0]
    se = fit.bse.to_numpy()
    assert fit.released and np.isfinite(se).all()
    beta = mod.truth(cell["p"])
    centre = fit.params_bias_corrected.to_numpy()
    assert np.max(np.abs(fit.params.to_numpy() - centre) / se) > 0.1      # a bias released
    np.testing.assert_allclose(out["z"], (centre - beta) / se)
    ci = fit.conf_int().to_numpy()
    np.testing.assert_array_equal(out["hit"], (ci[:, 0] <= beta) & (beta <= ci[:, 1]))
