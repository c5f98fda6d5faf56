"""glm_box: the correction's strength read one level down, the box's cut of Gaussian-like
columns, the covariance's convexity ratio (dpstats.estimators.inference.glm_box)."""

import numpy as np
import statsmodels.api as sm

from dpstats.estimators.inference import glm as G
from dpstats.estimators.inference import glm_box


def _clipped_logit(c: float, n: int = 200_000, seed: int = 3):
    rng = np.random.default_rng(seed)
    slopes = np.array([1.0, -0.5])
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(1.0 + X @ slopes)))).astype(float)
    full = sm.Logit(y, sm.add_constant(X)).fit(disp=0).params
    Xc = np.clip(X, -c, c)
    clip = sm.Logit(y, sm.add_constant(Xc)).fit(disp=0).params
    U = np.c_[Xc / c, np.ones(n)]                        # box units, intercept last
    s = 1.0 / (1.0 + np.exp(-(clip[0] + Xc @ clip[1:])))
    C = (U * (s * (1.0 - s))[:, None]).T @ U
    theta = np.r_[clip[1:] * c, clip[0]]                 # the fit on the box-unit rows
    return full, clip, C, theta, n


def test_box_bias_recovers_the_unclipped_slopes():
    c = 1.8
    full, clip, C, theta, n = _clipped_logit(c)
    cut = (np.array([1e4, 1e4, np.nan]), np.array([10.0, 10.0, np.nan]))
    shift = glm_box.box_bias(C[None], theta, cut, 2, float(n))[0]
    model = (theta - shift)[:2] / c
    moved = np.abs(clip[1:] - full[1:])
    assert np.all(moved > 0.02)                         # the box steepened both slopes
    assert np.all(np.abs(model - full[1:]) < 0.25 * moved)
    assert abs((theta - shift)[2] - full[0]) < 0.01     # the intercept barely moves


def test_box_bias_leaves_a_column_without_counts_past_the_box():
    _, _, C, theta, n = _clipped_logit(1.8, n=20_000)
    cut = (np.array([0.0, np.nan, np.nan]), np.array([10.0, np.nan, np.nan]))
    shift = glm_box.box_bias(C[None], theta, cut, 2, float(n))[0]
    assert np.all(shift == 0.0)


def _plausible(p: int = 3, sigma: float = 40.0):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(p, p))
    C = 300.0 * np.eye(p) + 20.0 * (A + A.T)
    Cs = G.plausible_curvatures(C, sigma, seed=7)[0]
    return C, Cs, np.array([1.0, -0.5, 0.3])


def test_calibrated_mean_lies_between_the_plain_plugin_and_its_full_correction():
    C, Cs, theta = _plausible()
    ridge = 5.0
    raw = -ridge * np.linalg.solve(Cs, np.broadcast_to(theta, (len(Cs), 3))[..., None])[..., 0]
    b_rel = -ridge * np.linalg.solve(C, theta)
    full = 2.0 * b_rel - raw.mean(axis=0)               # the excess one level down removed
    cal = glm_box.calibrated(raw, Cs, ridge, theta, C, 40.0, 11)
    lo, hi = np.minimum(b_rel, full), np.maximum(b_rel, full)
    m = cal.mean(axis=0)
    assert np.all((m >= lo - 1e-12) & (m <= hi + 1e-12))
    assert np.allclose(cal - m, raw - raw.mean(axis=0))  # the spread is kept


def test_switches_off_leave_the_draws_unchanged():
    C, Cs, theta = _plausible()
    b = np.random.default_rng(2).normal(size=(len(Cs), 3))
    old = glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH
    try:
        glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH = "debias", False, 0.0
        assert np.array_equal(glm_box.move(b, Cs, C, 5.0, theta, 40.0, 3, None, 1e4), b)
        V = np.linalg.inv(Cs)
        assert np.array_equal(glm_box.narrow(V[0], V), V[0])
        glm_box.WIDTH = 1.0
        r = np.sqrt(np.diag(glm_box.narrow(V[0], V)) / np.diag(V[0]))
        assert np.allclose(r, glm_box.width_ratio(V[0], V))
    finally:
        glm_box.STRENGTH, glm_box.BOX, glm_box.WIDTH = old


def _centres(draws: int = 60):
    """glm_inference's released bias (fitted scale, M = I) over noisy releases of one
    information, against the ridge's true bias ``-r C^-1 theta``."""
    from dpstats.estimators.inference.simulate import symmetric_noise
    C = np.array([[120.0, 30.0], [30.0, 60.0]])
    theta, ridge, sigma = np.array([1.0, -0.8]), 6.0, 14.0
    tri = np.random.default_rng(4).normal(size=(draws, 3))
    out = []
    for E in sigma * symmetric_noise(tri, 2):
        inf = G.glm_inference("objpert", C_rel=C + E, sigma_c=sigma, theta=theta, ridge=ridge,
                              noise={"s": 0.1, "sigma_out": 0.0}, M=np.eye(2), icol=None,
                              threshold=0.0, n_hat=1e4, eps=1.0, share=0.1, share_of="eps")
        if inf.bias is not None:
            out.append(np.asarray(inf.bias))
    return np.array(out), -ridge * np.linalg.solve(C, theta)


def test_the_default_centre_holds_less_of_the_ridges_bias_than_the_bootstrap_correction():
    """The bootstrap's correction (the rule before: STRENGTH "debias") over-corrects the
    convexity excess; the calibrated strength, the default, lands nearer the true bias."""
    assert glm_box.STRENGTH == "calib" and glm_box.BOX and not glm_box.CALIB_TAIL
    new, truth = _centres()
    old = glm_box.STRENGTH
    try:
        glm_box.STRENGTH = "debias"
        before, _ = _centres()
    finally:
        glm_box.STRENGTH = old
    err_new, err_old = np.abs(new.mean(axis=0) - truth), np.abs(before.mean(axis=0) - truth)
    assert np.all(err_new < err_old)
