"""Audits of the choice mechanisms: exponential (Gumbel-max), one-shot Gumbel top-k and the
canonical Lipschitz top-k.

Neighbours. These mechanisms take a score vector whose entries each change by at most
``sensitivity`` when one row is added or removed (l_inf). The audited pairs are score vectors
at l_inf distance 1 (sensitivity 1): every score moved the same way, one score against the
rest, random sign patterns, and a rarely chosen candidate overtaking. For the monotone form
of the exponential mechanism only pairs whose scores all move up are neighbours (adding a row
never lowers a monotone score). Outputs are discrete: an index, an ordered k-tuple (peeling),
or a k-set (Lipschitz).

Broken variants: the monotone (no factor 2) form used on non-monotone scores; half the
sensitivity for the monotone form; peeling noise ``2 sens / eps`` instead of ``2 k sens / eps``;
a quarter of the sensitivity for the Lipschitz mechanism.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import sensitivity_times, with_arg

from dpstats.mechanisms import exponential, lipschitz_topk, peel_topk

D = 6
K = 3


def _score_pairs(monotone: bool = False) -> list[Pair]:
    """Score vectors at l_inf distance 1 (only upward moves when ``monotone``)."""
    rng = np.random.default_rng(12345)
    z = np.zeros(D)
    one = np.eye(D)[0]
    if monotone:
        pairs = [Pair("one score +1", z, one), Pair("all but one +1", z, 1.0 - one),
                 Pair("rare one +1", np.r_[0.0, np.full(D - 1, 3.0)],
                      np.r_[1.0, np.full(D - 1, 3.0)])]
        for i in range(2):
            base = rng.uniform(0, 4, D)
            pairs.append(Pair(f"random +0/1 #{i}", base, base + rng.integers(0, 2, D)))
        return pairs
    half = np.r_[np.ones(D // 2), -np.ones(D - D // 2)]
    rare = np.r_[0.0, np.full(D - 1, 2.0)]
    pairs = [Pair("one +1, rest -1", z, 2 * one - 1), Pair("half +1, half -1", z, half),
             Pair("half +1, half -1 (one was rare)", rare, rare + half),
             Pair("rare one overtakes", rare, rare + 2 * one - 1),
             Pair("(0,1,..,1) vs (1,0,..,0)", 1.0 - one, one)]
    base = rng.uniform(0, 4, D)
    pairs.append(Pair("random signs", base, base + rng.choice([-1.0, 1.0], D)))
    return pairs


def _loop(fn):
    def sample(scores, n, rng):
        return np.array([fn(scores, rng) for _ in range(n)])
    return sample


EXPONENTIAL = {
    "real": exponential,
    "monotone form on non-monotone scores": with_arg(exponential, "monotone", lambda _: True),
}


@pytest.mark.parametrize("variant", list(EXPONENTIAL))
def test_exponential(variant):
    """Exponential mechanism (factor 2), eps = 1, score sensitivity 1, 6 candidates."""
    mech = EXPONENTIAL[variant]
    sample = _loop(lambda s, rng: mech(s, 1.0, 1.0, rng))
    rep = audit(sample, _score_pairs(), eps=1.0, kind="discrete", n=draws(24_000),
                n_pilot=draws(1_500), seed=seed_for(f"exponential/{variant}"))
    record("exponential (Gumbel-max)", variant, "scores l_inf <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)


MONOTONE = {"real": exponential, "sensitivity halved": sensitivity_times(exponential, 0.5)}


@pytest.mark.parametrize("variant", list(MONOTONE))
def test_exponential_monotone(variant):
    """Monotone form (no factor 2), eps = 1: neighbours only raise scores, by at most 1."""
    mech = MONOTONE[variant]
    sample = _loop(lambda s, rng: mech(s, 1.0, 1.0, rng, monotone=True))
    rep = audit(sample, _score_pairs(monotone=True), eps=1.0, kind="discrete",
                n=draws(24_000), n_pilot=draws(1_500),
                seed=seed_for(f"exponential_monotone/{variant}"))
    record("exponential, monotone form", variant, "scores rise by <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)


PEEL = {"real": peel_topk, "noise 2 sens/eps (no factor k)": sensitivity_times(peel_topk, 1 / K)}


@pytest.mark.parametrize("variant", list(PEEL))
def test_peel_topk(variant):
    """One-shot Gumbel top-3 of 6 (ordered output), eps = 1, l_inf sensitivity 1."""
    mech = PEEL[variant]
    sample = _loop(lambda s, rng: mech(s, K, 1.0, 1.0, rng))
    rep = audit(sample, _score_pairs(), eps=1.0, kind="discrete", n=draws(24_000),
                n_pilot=draws(1_500), seed=seed_for(f"peel_topk/{variant}"))
    record("one-shot Gumbel top-k", variant, "scores l_inf <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)


LIPSCHITZ = {"real": lipschitz_topk,
             "sensitivity / 4": sensitivity_times(lipschitz_topk, 1 / 4)}


@pytest.mark.parametrize("variant", list(LIPSCHITZ))
def test_lipschitz_topk(variant):
    """Canonical Lipschitz top-3 of 6 (a set), eps = 1, l_inf sensitivity 1."""
    mech = LIPSCHITZ[variant]
    sample = _loop(lambda s, rng: mech(s, K, 1.0, 1.0, rng))
    rep = audit(sample, _score_pairs(), eps=1.0, kind="discrete", n=draws(6_000),
                n_pilot=draws(800), seed=seed_for(f"lipschitz_topk/{variant}"))
    record("canonical Lipschitz top-k", variant, "scores l_inf <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)
