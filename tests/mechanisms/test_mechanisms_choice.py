"""Tests for dpstats.mechanisms.choice: the exponential mechanism and one-shot Gumbel top-k.

Statistical checks use fixed seeds and tolerances of many standard errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpstats.errors import PrivacyParameterError
from dpstats.mechanisms import exponential, peel_topk
from dpstats.mechanisms.accountant import Ledger


def softmax(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    w = np.exp(x - x[np.isfinite(x)].max())
    return w / w.sum()


def chi2_p(counts, probs) -> float:
    counts = np.asarray(counts, dtype=np.float64)
    probs = np.asarray(probs, dtype=np.float64)
    return float(stats.chisquare(counts, probs / probs.sum() * counts.sum()).pvalue)


# --------------------------------------------------------------------------------------------
# exponential mechanism
# --------------------------------------------------------------------------------------------

EM_SCORES = np.array([0.0, 1.0, 3.0, 2.0, -1.0])


def em_counts(scores, eps, draws, seed, **kw) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = [exponential(scores, 1.0, eps, rng, **kw) for _ in range(draws)]
    return np.bincount(picks, minlength=len(scores))


def test_exponential_non_monotone_matches_softmax_half():
    eps = 1.0
    counts = em_counts(EM_SCORES, eps, 60_000, seed=10)
    assert chi2_p(counts, softmax(eps * EM_SCORES / 2)) > 1e-3
    assert chi2_p(counts, softmax(eps * EM_SCORES)) < 1e-10  # the monotone law is rejected


def test_exponential_monotone_matches_softmax():
    eps = 0.8
    counts = em_counts(EM_SCORES, eps, 40_000, seed=11, monotone=True)
    assert chi2_p(counts, softmax(eps * EM_SCORES)) > 1e-3
    assert chi2_p(counts, softmax(eps * EM_SCORES / 2)) < 1e-10


def test_exponential_log_base_shifts_probabilities():
    scores = np.array([0.0, 0.0, 1.0, 0.0])
    base = np.array([1.0, 2.0, 3.0, 4.0])
    eps = 2.0
    counts = em_counts(scores, eps, 20_000, seed=12, log_base=np.log(base))
    expected = base * np.exp(eps * scores / 2)
    assert chi2_p(counts, expected) > 1e-3
    assert chi2_p(counts, np.exp(eps * scores / 2)) < 1e-10  # ignoring the base is rejected


def test_exponential_neg_inf_never_chosen():
    rng = np.random.default_rng(13)
    scores = [0.0, 100.0, 0.0, -np.inf]
    base = [0.0, -np.inf, 0.0, 0.0]
    picks = {exponential(scores, 1.0, 5.0, rng, log_base=base) for _ in range(2000)}
    assert picks == {0, 2}
    assert exponential([-np.inf, 0.0], 1.0, 1.0, rng) == 1


@pytest.mark.parametrize("scores, kw", [
    ([0.0, np.nan, 1.0], {}),
    ([0.0, np.inf], {}),
    ([], {}),
    ([[0.0, 1.0]], {}),
    ([-np.inf, -np.inf], {}),
    ([0.0, 1.0], {"log_base": [-np.inf, -np.inf]}),
    ([0.0, 1.0], {"log_base": [0.0, 0.0, 0.0]}),
    ([0.0, 1.0], {"sensitivity": 0.0}),
    ([0.0, 1.0], {"sensitivity": math.nan}),
])
def test_exponential_bad_input_raises_and_charges_nothing(scores, kw):
    led = Ledger()
    sens = kw.pop("sensitivity", 1.0)
    with pytest.raises(ValueError):
        exponential(scores, sens, 1.0, np.random.default_rng(0), led, **kw)
    assert len(led) == 0


def test_exponential_bad_eps_charges_nothing():
    led = Ledger()
    with pytest.raises(PrivacyParameterError):
        exponential([0.0, 1.0], 1.0, 0.0, np.random.default_rng(0), led)
    assert len(led) == 0


def test_exponential_charges_once():
    led = Ledger(20.0, 0.0)
    idx = exponential([0.0, 100.0, 0.0], 1.0, 10.0, np.random.default_rng(0), led,
                      monotone=True, stage="selection", what="feature")
    assert idx == 1
    (c,) = led.charges
    assert (c.stage, c.mechanism, c.eps, c.delta) == ("selection", "exponential", 10.0, 0.0)
    assert "feature" in c.detail and "sensitivity 1" in c.detail and "monotone" in c.detail


# --------------------------------------------------------------------------------------------
# peel top-k
# --------------------------------------------------------------------------------------------


def peeling_probabilities(scores, k: int, sens: float, eps: float) -> dict[tuple, float]:
    """Exact law of k rounds of the exponential mechanism at eps/k each (non-monotone).

    Round r picks i among the remaining with probability proportional to
    exp((eps / k) * s_i / (2 sens)).
    """
    w = np.exp((eps / k) * np.asarray(scores, dtype=np.float64) / (2 * sens))
    out = {}
    for seq in itertools.permutations(range(len(w)), k):
        p, left = 1.0, set(range(len(w)))
        for i in seq:
            p *= w[i] / sum(w[j] for j in left)
            left.remove(i)
        out[seq] = p
    return out


def test_peel_topk_huge_eps_is_exact_topk_in_order():
    scores = [3.0, 9.0, 1.0, 7.0, 5.0, -2.0]
    rng = np.random.default_rng(14)
    for k, expected in [(1, [1]), (3, [1, 3, 4]), (6, [1, 3, 4, 0, 2, 5])]:
        out = peel_topk(scores, k, 1.0, 1e9, rng)
        assert out.tolist() == expected


def test_peel_topk_matches_sequential_peeling():
    scores = np.array([0.0, 1.0, 2.5, 1.5])
    k, sens, eps = 2, 1.0, 3.0
    probs = peeling_probabilities(scores, k, sens, eps)
    assert math.isclose(sum(probs.values()), 1.0)
    rng = np.random.default_rng(15)
    draws = 40_000
    seen: dict[tuple, int] = dict.fromkeys(probs, 0)
    for _ in range(draws):
        out = peel_topk(scores, k, sens, eps, rng)
        seen[tuple(out.tolist())] += 1
    keys = list(probs)
    counts = [seen[s] for s in keys]
    assert chi2_p(counts, [probs[s] for s in keys]) > 1e-3
    # the same data reject a law with the wrong scale (eps per round instead of eps/k)
    wrong = peeling_probabilities(scores, k, sens, eps * k)
    assert chi2_p(counts, [wrong[s] for s in keys]) < 1e-10


def test_peel_topk_distinct_indices_and_charge():
    led = Ledger(2.0, 0.0)
    out = peel_topk(np.zeros(10), 4, 1.0, 0.5, np.random.default_rng(16), led,
                    stage="selection", what="features")
    assert out.dtype.kind == "i" and len(set(out.tolist())) == 4
    assert all(0 <= i < 10 for i in out)
    (c,) = led.charges
    assert (c.stage, c.mechanism, c.eps, c.delta) == ("selection", "gumbel top-k", 0.5, 0.0)
    assert "k=4" in c.detail and "sensitivity 1" in c.detail


@pytest.mark.parametrize("k", [0, -1, 5, 100])
def test_peel_topk_k_out_of_range_raises_and_charges_nothing(k):
    led = Ledger()
    with pytest.raises(ValueError, match="k must be"):
        peel_topk([1.0, 2.0, 3.0, 4.0], k, 1.0, 1.0, np.random.default_rng(0), led)
    assert len(led) == 0


@pytest.mark.parametrize("sens", [0.0, -1.0, math.nan, math.inf])
def test_peel_topk_bad_sensitivity_raises_and_charges_nothing(sens):
    led = Ledger()
    with pytest.raises(ValueError, match="sensitivity"):
        peel_topk([1.0, 2.0, 3.0], 2, sens, 1.0, np.random.default_rng(0), led)
    assert len(led) == 0


def test_peel_topk_bad_scores_and_eps_charge_nothing():
    led = Ledger()
    with pytest.raises(ValueError):
        peel_topk([1.0, np.nan, 3.0], 2, 1.0, 1.0, np.random.default_rng(0), led)
    with pytest.raises(PrivacyParameterError):
        peel_topk([1.0, 2.0, 3.0], 2, 1.0, -1.0, np.random.default_rng(0), led)
    assert len(led) == 0
