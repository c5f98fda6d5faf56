"""Audit of the Tukey covariance release (:func:`dpstats.mechanisms.design_moments.design_moments`).

Neighbours: add/remove one row of the design; the centre, scales and bound are fixed (released
before or public). Claim: eps-DP at eps = 1, Laplace noise on ``(sum u, upper(sum u u'))`` with
L1 sensitivity ``k B + k (k + 1) / 2 B^2``. Pairs: add a row at the corner ``(B, B)`` (every
entry moves by its largest amount), add a row at one coordinate's bound. Broken variant: the
sensitivity of the first moments only (``k B``, as if the squares were free), which the corner
row exceeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import design_moments as dm

RELATION = "add/remove one row of the design (centre, scales, bound fixed)"
K = 2


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(12)
    X = rng.normal(size=(30, K))
    pairs = []
    for name, row in {"add corner (B, B)": np.full(K, 9.0),
                      "add one coordinate at B": np.r_[9.0, 0.0]}.items():
        pairs.append(Pair(name, X, np.vstack([X, row])))
    return pairs


def _sample(X, n, rng):
    out = []
    for _ in range(n):
        S1, S2 = dm.design_moments(X, np.zeros(K), np.ones(K), 1.0, rng)
        out.append(np.r_[S1, S2[np.triu_indices(K)]])
    return np.array(out)


@pytest.mark.parametrize("variant", ["real", "first moments only"])
def test_design_moments(variant, monkeypatch):
    """The noisy design moments, claimed eps = 1 (Laplace, L1 sensitivity k B + k(k+1)/2 B^2)."""
    if variant != "real":
        monkeypatch.setattr(dm, "moments_sensitivity", lambda k, bound=dm.MOMENT_BOUND:
                            float(k * bound))
    rep = audit(_sample, _pairs(), eps=1.0, delta=0.0, n=draws(600),
                n_pilot=draws(200), seed=seed_for(f"design-moments/{variant}"))
    record("inference: Tukey design moments", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
