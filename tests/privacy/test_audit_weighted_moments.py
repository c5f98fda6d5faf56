"""Audit of the logistic Tukey intervals' information release
(:func:`dpstats.mechanisms.weighted_moments.weighted_moments`).

Neighbours: add/remove one row of the design (with its weight); the centre, scales and bound are
fixed (released before or public). Claim: eps-DP at eps = 1, Laplace noise on
``(sum w, sum w u, upper(sum w u u'))`` with L1 sensitivity ``(1 + k B + k (k + 1) / 2 B^2) / 4``.
Pairs: add a row at the corner ``(B, B)`` with the largest weight (every entry moves by its
largest amount), and one whose weight exceeds 1/4 (the mechanism must clip it). Broken variant:
the moments of unclipped rows (the corner row at 3 x the bound the noise is set for). A halved
noise scale spreads its excess over the 6 released entries (no single entry's change exceeds
a quarter of the L1 sensitivity), beyond this audit's power at CI draws: it is caught by the
noise-scale check in tests/mechanisms/test_weighted_moments.py instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import weighted_moments as wm

RELATION = "add/remove one row of the design and its weight (centre, scales, bound fixed)"
K = 2


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(13)
    X = np.c_[rng.normal(size=(30, K)), rng.uniform(0.0, 0.25, size=30)]
    return [Pair("add corner (B, B), weight 1/4", X, np.vstack([X, np.r_[np.full(K, 9.0),
                                                                          0.25]])),
            Pair("add corner, weight 3 (clipped to 1/4)", X, np.vstack([X, np.r_[9.0, 9.0,
                                                                                3.0]]))]


def _sampler(bound: float):
    def sample(Xw, n, rng):
        out = []
        for _ in range(n):
            S0, S1, S2 = wm.weighted_moments(Xw[:, :K], Xw[:, K], np.zeros(K), np.ones(K), 1.0,
                                             rng, bound=bound)
            out.append(np.r_[S0, S1, S2[np.triu_indices(K)]])
        return np.array(out)
    return sample


@pytest.mark.parametrize("variant", ["real", "unclipped rows"])
def test_weighted_moments(variant, monkeypatch):
    """The noisy weighted moments, claimed eps = 1."""
    bound = wm.MOMENT_BOUND
    if variant == "unclipped rows":    # the rows reach 9 = 3 x the bound the noise is set for
        real = wm.weighted_sensitivity
        monkeypatch.setattr(wm, "weighted_sensitivity",
                            lambda k, bound=wm.MOMENT_BOUND: real(k, wm.MOMENT_BOUND))
        bound = 9.0
    rep = audit(_sampler(bound), _pairs(), eps=1.0, delta=0.0, n=draws(600),
                n_pilot=draws(200), seed=seed_for(f"weighted-moments/{variant}"))
    record("inference: logistic Tukey weighted moments", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
