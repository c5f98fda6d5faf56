"""benchmarks/glm_bias_variants.py measures the rules for the released bias's mean of dp_glm's
default intervals (design-notes.md, "the released bias's mean"): what is checked is that its
variants are what they say on a synthetic released input (``plain/mean`` releases the plug-in
at the released information, ``debias/quantile`` is the code before glm_box, its switches off)
and that the code's functions are restored after each."""

from __future__ import annotations

import numpy as np
from benchmark_script import load_benchmark

from dpstats.estimators.inference import glm as inf_glm
from dpstats.estimators.inference import glm_box

bv = load_benchmark("glm_bias_variants.py")


def _kw():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 3))
    E = np.triu(rng.normal(scale=3.0, size=(3, 3)))
    C_rel = A @ A.T + 40.0 * np.eye(3) + E + np.triu(E, 1).T
    return dict(C_rel=C_rel, sigma_c=3.0, theta=np.array([2.0, -1.0, 0.5]), ridge=4.0,
                noise={"s": 3.0, "sigma_out": 0.0}, M=np.eye(3), icol=None, threshold=0.0,
                n_hat=20_000.0, eps=1.0, share=0.1, share_of="eps")


def _bias(variant: str) -> np.ndarray:
    kw = _kw()
    with bv.variant_of(variant, kw["C_rel"]) as glm_inference:
        return np.asarray(glm_inference("objpert", **kw).bias)


def test_variants_set_the_released_bias():
    kw = _kw()
    real = inf_glm._ridge_model, inf_glm.exact_covariance
    plain = -kw["ridge"] * np.linalg.solve((kw["C_rel"] + kw["C_rel"].T) / 2, kw["theta"])
    assert np.allclose(_bias("plain/mean"), plain, rtol=1e-9, atol=1e-12)
    old = glm_box.STRENGTH, glm_box.BOX
    try:                                    # the code before glm_box (its switches off)
        glm_box.STRENGTH, glm_box.BOX = "debias", False
        code = np.asarray(inf_glm.glm_inference("objpert", **kw).bias)
    finally:
        glm_box.STRENGTH, glm_box.BOX = old
    assert np.array_equal(_bias(bv.OLD), code)
    assert (glm_box.STRENGTH, glm_box.BOX) == old                 # restored
    assert not np.allclose(_bias("debias/mean"), code)           # the centre moved
    assert np.all(np.abs(_bias("debias/mean")) < np.abs(plain))  # the correction shrinks it
    assert np.all(np.abs(_bias("mixture/mean")) > np.abs(plain))  # the convex mixture's mean
    assert (inf_glm._ridge_model, inf_glm.exact_covariance) == real  # restored
