"""Audit of the sandwich meat release (:func:`dpstats.mechanisms.meat.release_meat`), behind
``cov_type="HC1"`` of AdaSSP and Boosted AdaSSP.

Neighbours: add/remove one row of ``(X, r)`` (``r`` the residuals of an already released fit;
the clipping bound is public or released, so fixed across the pair). Claim: (eps, delta)-DP at
eps = 1, delta = 1e-5: Gaussian noise on the upper triangle with L2 sensitivity ``bound``
(each row's term ``x x' min(r^2, bound/||x||^2)`` has Frobenius norm at most ``bound``).
Pairs: a row at the corner of the box with a residual far beyond the bound, one with a
negative residual, one on an axis, one whose term is inside the bound. Broken variant: the
rows' terms are not clipped (``min(r^2, 1)`` only) while the noise is still calibrated to the
bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import meat

RELATION = "add/remove one row (released theta and bound fixed)"
BOUND = 0.1


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(7)
    X = np.c_[np.full(20, 0.5), rng.uniform(-0.5, 0.5, 20)]
    r = 0.05 * rng.normal(size=20)
    rows = {"corner, residual 1": ([0.5, 0.5], 1.0), "corner, residual -1": ([0.5, -0.5], -1.0),
            "axis, residual 1": ([0.7, 0.0], 1.0), "inside the bound": ([0.5, 0.1], 0.3)}
    return [Pair(f"add {name}", (X, r), (np.vstack([X, x]), np.append(r, rr)))
            for name, (x, rr) in rows.items()]


def _sample(data, n, rng):
    X, r = data
    return np.array([meat.release_meat(X, r, BOUND, 1.0, 1e-5, rng)[np.triu_indices(2)]
                     for _ in range(n)])


def unclipped_normal(X, r, bound):
    q = np.minimum(np.asarray(r) ** 2, 1.0)
    return (X * q[:, None]).T @ X


@pytest.mark.parametrize("variant", ["real", "rows' terms not clipped"])
def test_release_meat(variant, monkeypatch):
    """The clipped meat, claimed (1, 1e-5)-DP (Gaussian, L2 sensitivity ``bound``)."""
    if variant != "real":
        monkeypatch.setattr(meat, "clipped_meat", unclipped_normal)
    rep = audit(_sample, _pairs(), eps=1.0, delta=1e-5, n=draws(3_000),
                n_pilot=draws(500), seed=seed_for(f"inference-meat/{variant}"))
    record("inference: sandwich meat", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
