"""Audit of the Tukey inference release (:func:`dpstats.mechanisms.model_spread.window_counts`).

Neighbours: add/remove one row, which changes one group model of the Tukey mechanism (random
labels, m public), so one row of the deviations ``models - theta`` changes; the released point
and the windows are fixed (released before: adaptive composition). Claim: eps-DP at eps = 1,
Laplace noise with L1 sensitivity ``p`` (each of the p counts moves by at most 1). Pairs: one
model moved from inside every window to outside every window (all p counts change), one moved
in a single coordinate, one moved from far outside to the centre. Broken variant: the
sensitivity taken as 1 (as if one count changed), which a move in every coordinate exceeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import model_spread

RELATION = "add/remove one row = one group model changed (theta, windows fixed)"
P = 3


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(11)
    D = rng.normal(size=(40, P))
    w = np.full(P, 0.6745)
    pairs = []
    for name, new in {"inside -> outside, every coordinate": np.full(P, 5.0),
                      "outside -> centre": np.zeros(P),
                      "one coordinate": np.r_[5.0, D[0, 1:]]}.items():
        D0 = D.copy()
        D0[0] = 0.1 if name != "outside -> centre" else 9.0
        D1 = D0.copy()
        D1[0] = new
        pairs.append(Pair(name, (D0, w), (D1, w)))
    return pairs


def _sample(data, n, rng):
    D, w = data
    return np.array([model_spread.window_counts(D, w, 1.0, rng) for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "sensitivity 1"])
def test_window_counts(variant, monkeypatch):
    """The p window counts, claimed eps = 1 (Laplace, L1 sensitivity p)."""
    if variant != "real":
        monkeypatch.setattr(model_spread, "count_sensitivity", lambda p: 1.0)
    rep = audit(_sample, _pairs(), eps=1.0, delta=0.0, n=draws(3_000),
                n_pilot=draws(600), seed=seed_for(f"model-spread/{variant}"))
    record("inference: Tukey window counts", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
