"""Audit of the curvature release behind dp_glm's and DP-GD's standard errors
(:func:`dpstats.mechanisms.curvature.release_curvature`).

Neighbours: add/remove one row of ``(U, w)`` (rows of the fitted design, weights at the
released coefficients: both fixed functions of a row given the released fit). Claim:
``(1, 0.01)``-DP, analytic Gaussian on the upper triangle of ``sum_i w_i u_i u_i'`` with L2
sensitivity ``weight_bound = 1/4`` (rows clipped to norm 1, weights to ``[0, 1/4]``). Pairs: a
few rows, plus one row of norm 2 (clipped to 1 by the mechanism) with weight 1/4 or 1 (clipped
to 1/4), along an axis or a diagonal. Broken variant: rows clipped to norm 2 instead of 1
(one row then moves the matrix by up to 4 times the stated sensitivity).
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import curvature

RELATION = "add/remove one row (released coefficients fixed)"


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(3)
    U = rng.uniform(-0.5, 0.5, size=(4, 2))
    w = np.full(4, 0.2)
    pairs = []
    for name, (u, wt) in {"row (2, 0), w 1/4": ((2.0, 0.0), 0.25),
                          "row (1.4, 1.4), w 1": ((1.4, 1.4), 1.0),
                          "row (0, 2), w 1": ((0.0, 2.0), 1.0)}.items():
        pairs.append(Pair(f"add {name}", (U, w), (np.vstack([U, u]), np.append(w, wt))))
    return pairs


def _sample(data, n, rng):
    U, w = data
    return np.array([np.triu(curvature.release_curvature(U, w, 0.25, 1.0, 0.01, rng)[0])
                     [np.triu_indices(2)] for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "rows clipped to norm 2"])
def test_release_curvature(variant, monkeypatch):
    """The Fisher-information release, claimed (1, 0.01) with L2 sensitivity 1/4."""
    if variant != "real":
        monkeypatch.setattr(curvature, "ROW_NORM", 2.0)
    rep = audit(_sample, _pairs(), eps=1.0, delta=0.01, n=draws(6_000),
                n_pilot=draws(1_000), seed=seed_for(f"inference-curvature/{variant}"))
    record("inference: curvature", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
