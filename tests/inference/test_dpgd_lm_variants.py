"""benchmarks/dpgd_lm_variants.py measures dp_lm DP-GD's interval rules on recorded fits
(design-notes.md, "dp_lm DP-GD: the clip plug-in's error at eps 0.5"): what is checked is that
its ``gain`` variant is what it says, the covariance of the clip-corrected coefficients
``t - d(t)`` (wider than that of ``t`` when the label clip attenuates the slopes)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from benchmark_script import load_benchmark

from dpstats.estimators.inference.dpgd_label import label_clip_bias

lv = load_benchmark("dpgd_lm_variants.py")


def test_the_gain_covariance_is_that_of_the_corrected_coefficients():
    # about 10% of labels clipped: the plug-in divides the slopes by about 0.9, so their
    # error after it is about 1.1 times the coefficients'
    rng = np.random.default_rng(2)
    x = rng.normal(size=(200_000, 2))
    U = np.c_[x / 8.0, np.ones(len(x))] / np.sqrt(3.0)
    yc = np.clip(0.3 + x @ [0.25, -0.2] + 0.45 * rng.normal(size=len(x)), -1.0, 1.0)
    assert 0.07 < np.mean(np.abs(yc) == 1.0) < 0.15
    t = np.linalg.lstsq(U, yc, rcond=None)[0]
    C = (U.T @ U)[None]
    s2 = np.array([float(np.sum((yc - U @ t) ** 2) / (U.shape[0] - 3))])
    V = np.diag([4e-4, 4e-4, 1e-4])[None]
    design = SimpleNamespace(bounds=None)          # no released counts: the label clip only
    bias, cov = lv.gain_model(C, t, np.zeros((1, 3)), V, s2, design, [0, 1, 2])
    assert bias[0] == pytest.approx(label_clip_bias(C, t, s2, 2)[0])
    e = np.random.default_rng(0).multivariate_normal(np.zeros(3), V[0], size=20_000)
    tt = t + e
    est = tt - label_clip_bias(np.repeat(C, len(e), 0), tt, np.repeat(s2, len(e)), 2)
    var = est.var(axis=0)
    assert np.diag(cov[0]) == pytest.approx(var, rel=0.05)    # the corrected ones' spread
    assert (var[:2] / np.diag(V[0])[:2]).min() > 1.1          # wider than t's own


def test_the_library_default_is_the_gain_variant():
    """The library's clip model (design note 83: CLIP_GAIN on) is the benchmark's ``gain``; the
    rule before (CLIP_GAIN off) keeps the descent's covariance, which this fails on."""
    from dpstats.estimators.inference import dpgd_label as dl
    rng = np.random.default_rng(5)
    x = rng.normal(size=(100_000, 2))
    U = np.c_[x / 8.0, np.ones(len(x))] / np.sqrt(3.0)
    yc = np.clip(0.3 + x @ [0.25, -0.2] + 0.45 * rng.normal(size=len(x)), -1.0, 1.0)
    t = np.linalg.lstsq(U, yc, rcond=None)[0]
    C = (U.T @ U)[None]
    s2 = np.array([float(np.sum((yc - U @ t) ** 2) / (U.shape[0] - 3))])
    V = np.diag([4e-4, 4e-4, 1e-4])[None]
    design = SimpleNamespace(bounds=None)
    b_lib, c_lib = dl.clip_model(C, t, np.zeros((1, 3)), V, s2, design, [0, 1, 2])
    b_var, c_var = lv.gain_model(C, t, np.zeros((1, 3)), V, s2, design, [0, 1, 2])
    assert np.array_equal(b_lib, b_var) and np.allclose(c_lib, c_var, rtol=1e-12)
    assert not np.allclose(c_lib, V)
    _, c_old = dl.clip_model(C, t, np.zeros((1, 3)), V, s2, design, [0, 1, 2], gain=False)
    assert np.array_equal(c_old, V)
