"""dp_glm objective perturbation's intervals without fixed-seed draws (issue 16):
exact quantiles of the error mixture (dpstats.estimators.inference.mixture), plausible
informations seeded by the released values (glm.fit_seed), and the sampling and privacy
covariance taken at the released information (glm._ridge_model's ``at``).

What is checked: the mixture's quantiles solve their equation and reduce to the normal's for
one component; ``glm_inference``'s standard error is the exact one where 2,000 fixed draws were
2-5% off (the old draws are the broken variant); two fits with different released values get
different plausible informations, the same values the same; one near-singular plausible
information no longer widens every interval (the old per-information covariance is the broken
variant); the seeds read released values only."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import norm

from dpstats.estimators.inference import glm as inf_glm
from dpstats.estimators.inference.mixture import exact_covariance, mixture_quantile
from dpstats.estimators.inference.ssp import _covariance

Z = 1.959963984540054
KW = dict(ridge=1e-9, M=np.eye(2), icol=0, threshold=0.0, n_hat=20_000.0, eps=1.0,
          share=0.1, share_of="eps")


def test_mixture_quantiles_solve_their_equation():
    B = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.0]])
    sd = np.array([[1.0, 0.5], [0.3, 2.0], [1.5, 1.0]])
    lo, hi = mixture_quantile(B, sd, 0.025), mixture_quantile(B, sd, 0.975)
    assert np.allclose(ndtr((lo - B) / sd).mean(axis=0), 0.025, atol=1e-12)
    assert np.allclose(ndtr((hi - B) / sd).mean(axis=0), 0.975, atol=1e-12)
    one = mixture_quantile(B[:1], sd[:1], 0.9)
    assert np.allclose(one, B[0] + sd[0] * norm.ppf(0.9))


def _inference(C_rel, sigma_c=1e-3, s=0.0):
    return inf_glm.glm_inference("objpert", C_rel=C_rel, sigma_c=sigma_c,
                                 theta=np.array([0.2, 0.4]), noise={"s": s, "sigma_out": 0.0},
                                 **KW)


def _old_draws(monkeypatch):
    """The construction before: 2,000 error draws from a fixed public seed."""
    def draws(bias, cov, M, shift, centred):
        D = inf_glm.error_draws(bias, cov, M, shift)
        return inf_glm.centred_covariance(D) if centred else (_covariance(D), None)
    monkeypatch.setattr(inf_glm, "exact_covariance", draws)


@pytest.mark.parametrize("broken", [False, True])
def test_standard_errors_are_exact(broken, monkeypatch):
    """A nearly noise-free information and no ridge: the error is N(0, C^-1), so the standard
    errors are sqrt(diag C^-1). The fixed draws' quantiles missed them by 2-5% per column (the
    same miss in every fit)."""
    if broken:
        _old_draws(monkeypatch)
    C = np.array([[400.0, 60.0], [60.0, 300.0]])
    se = np.sqrt(np.diag(_inference(C).cov))
    rel = se / np.sqrt(np.diag(np.linalg.inv(C)))
    assert (np.abs(rel - 1.0).max() < 2e-3) != broken


def test_plausible_informations_are_seeded_by_released_values(monkeypatch):
    seen = []
    real = inf_glm.plausible_curvatures

    def spy(C, s, draws=inf_glm.CURVATURE_DRAWS, seed=inf_glm.SEED):
        seen.append(seed)
        return real(C, s, draws, seed)
    monkeypatch.setattr(inf_glm, "plausible_curvatures", spy)
    C = np.array([[400.0, 60.0], [60.0, 300.0]])
    for c in (C, C, C + 0.5):
        _inference(c, sigma_c=5.0)
    assert seen[0] == seen[2] != seen[4]          # two calls per fit (gate, model)
    assert inf_glm.fit_seed(C, 5.0, np.ones(2), 0.0) == inf_glm.fit_seed(C.copy(), 5.0,
                                                                         np.ones(2), 0.0)


@pytest.mark.parametrize("broken", [False, True])
def test_a_near_singular_plausible_information_does_not_widen(broken, monkeypatch):
    """With no ridge (no bias), the error given the true information is N(0, V(C)); the
    plausible informations say how well the bias is known, not how wide the error is. One
    near-singular one among 200 inflated every standard error of the old per-information
    mixture (eps 0.5: sd z 0.68-0.82, coverage up to 0.988)."""
    C = np.array([[400.0, 60.0], [60.0, 300.0]])
    Cs = np.repeat(C[None], inf_glm.CURVATURE_DRAWS, axis=0)
    Cs[0] = C / 400.0
    monkeypatch.setattr(inf_glm, "plausible_curvatures", lambda C_, s, seed=0: (Cs, 1.0))
    if broken:
        monkeypatch.setattr(inf_glm, "AT_RELEASED", False)
    se = np.sqrt(np.diag(_inference(C).cov))
    assert (np.abs(se / np.sqrt(np.diag(np.linalg.inv(C))) - 1.0).max() < 2e-3) != broken


def test_a_cut_tails_fit_keeps_the_per_information_spread(monkeypatch):
    """Where a cut tail's move enters, the symmetric interval keeps the per-information
    covariances: that width held the move's unmodelled error (skewed intercept 0.943 -> 0.928
    without it)."""
    C = np.array([[400.0, 60.0], [60.0, 300.0]])
    Cs = np.repeat(C[None], inf_glm.CURVATURE_DRAWS, axis=0)
    Cs[0] = C / 400.0
    monkeypatch.setattr(inf_glm, "plausible_curvatures", lambda C_, s, seed=0: (Cs, 1.0))
    inf = inf_glm.glm_inference("objpert", C_rel=C, sigma_c=1e-3, theta=np.array([0.2, 0.4]),
                                noise={"s": 0.0, "sigma_out": 0.0},
                                tail=np.zeros((inf_glm.CURVATURE_DRAWS, 2)), **KW)
    assert inf.bias is None
    assert (np.sqrt(np.diag(inf.cov)) / np.sqrt(np.diag(np.linalg.inv(C))) > 1.005).all()


def test_exact_covariance_symmetric_holds_the_bias():
    cov, centre = exact_covariance(np.array([[1.0]]), np.array([[[1e-12]]]), np.eye(1),
                                   np.zeros(1), centred=False)
    assert centre is None and np.isclose(np.sqrt(cov[0, 0]) * Z, 1.0)
