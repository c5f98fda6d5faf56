"""The bias plug-ins' spread calibrated one bootstrap level down
(dpstats.estimators.inference.glm_spread).

What is checked: for a noisy, ill-conditioned information (a known true ``C``, released many
times with fresh noise) the plug-ins' spread over the plausible informations read at the
released ``C_rel`` is wider than the realised spread of the plug-in ``b(C_rel)`` over releases
(the cause of eps 0.5's over-coverage), and the calibrated spread is close to the realised one;
a well-conditioned information is left alone (``rho`` near 1); the ratio never widens."""

from __future__ import annotations

import numpy as np

from dpstats.estimators.inference import glm as inf_glm
from dpstats.estimators.inference import glm_spread
from dpstats.estimators.inference.simulate import symmetric_noise

#: A 6 x 6 information like the glm benchmark's at eps 0.5 (n 20,000, p 5): the noise's
#: spectral norm is of the order of the smallest eigenvalue.
C_TRUE = np.diag([600.0, 120.0, 110.0, 100.0, 90.0, 70.0])
THETA, RIDGE, SIGMA = np.array([-0.3, 1.5, -1.3, 1.2, -1.0, 0.9]), 4.0, 12.0


def _iqr(b):
    q1, q3 = np.quantile(b, [0.25, 0.75], axis=0)
    return q3 - q1


def _spreads(releases=40):
    """Over releases ``C_rel = C + E`` that pass the fit's gate: the realised IQR of the
    plug-in ``b(C_rel)``, and the median plausible IQR at ``C_rel``, raw and calibrated."""
    p = C_TRUE.shape[0]
    E = symmetric_noise(np.random.default_rng(0).normal(size=(releases, p * (p + 1) // 2)), p)
    Crs = [Cr for Cr in C_TRUE[None] + SIGMA * E
           if inf_glm.plausible_curvatures(Cr, SIGMA, seed=1)[1] >= inf_glm.PD_SHARE]
    realised = _iqr(glm_spread._plugins(np.array(Crs), RIDGE, THETA))
    raw, cal = [], []
    for i, Cr in enumerate(Crs):
        Cs = inf_glm.plausible_curvatures(Cr, SIGMA, seed=100 + i)[0]
        s1 = _iqr(glm_spread._plugins(Cs, RIDGE, THETA))
        raw.append(s1)
        cal.append(s1 * glm_spread.spread_ratio(Cr, Cs, RIDGE, THETA, SIGMA, seed=200 + i))
    return realised, np.median(raw, axis=0), np.median(cal, axis=0)


def test_the_calibrated_spread_matches_the_realised_one_where_the_information_is_noisy():
    realised, raw, cal = _spreads()
    off_raw, off_cal = np.abs(np.log(raw / realised)), np.abs(np.log(cal / realised))
    assert np.median(raw / realised) > 1.2                  # the plausible spread is too wide
    assert np.median(off_cal) < 0.5 * np.median(off_raw)


def test_a_well_conditioned_information_is_left_alone():
    Cs = inf_glm.plausible_curvatures(C_TRUE * 10.0, SIGMA, seed=1)[0]
    rho = glm_spread.spread_ratio(C_TRUE * 10.0, Cs, RIDGE, THETA, SIGMA, seed=2)
    assert np.all(rho > 0.9) and np.all(rho <= 1.0)


def test_glm_inference_narrows_the_bias_spread_only_by_the_ratio(monkeypatch):
    """Through :func:`glm_inference`: a ratio below 1 narrows the interval, 1 leaves it."""
    kw = dict(C_rel=C_TRUE, sigma_c=SIGMA, theta=THETA, ridge=RIDGE,
              noise={"s": 1.0, "sigma_out": 0.0}, M=np.eye(6), icol=0, threshold=0.0,
              n_hat=20_000.0, eps=0.5, share=0.1, share_of="eps")
    se = {}
    for rho in (1.0, 0.5):
        monkeypatch.setattr(inf_glm, "spread_ratio", lambda *a, r=rho: np.full(6, r))
        se[rho] = np.sqrt(np.diag(inf_glm.glm_inference("objpert", **kw).cov))
    assert np.all(se[0.5] < se[1.0])
