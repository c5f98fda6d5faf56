"""Audit of the inference release of AdaSSP and Boosted AdaSSP
(:func:`dpstats.estimators.inference.ssp.release_rss`).

Neighbours: add/remove one row of ``(X, y)`` on the mapped scale, with the released
coefficients ``theta`` fixed (the release comes after the fit and conditions on it: adaptive
composition). Claim: eps-DP (delta 0) at eps = 1, Laplace noise with L1 sensitivity
``RSS_SENSITIVITY = RESID_CLIP^2 = 1``. Pairs: rows with small residuals, plus one row whose
residual is at or far beyond the clip (and one inside it). Broken variant: residuals clipped at
3 while the sensitivity stays 1 (one row then moves the sum by up to 9).
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.estimators.inference import ssp

RELATION = "add/remove one row (released theta fixed)"


def _pairs() -> list[Pair]:
    rng = np.random.default_rng(5)
    X = np.c_[np.ones(20), rng.uniform(-1, 1, 20)]
    theta = np.array([0.1, 0.4])
    y = X @ theta + 0.05 * rng.normal(size=20)
    pairs = []
    for name, (x, yn) in {"residual 5": ([1.0, 1.0], 5.0), "residual -3": ([1.0, -1.0], -3.0),
                          "residual 1": ([1.0, 0.0], 1.1), "residual 0.5": ([1.0, 0.5], 0.8)
                          }.items():
        pairs.append(Pair(f"add {name}", (X, y, theta),
                          (np.vstack([X, x]), np.append(y, yn), theta)))
    return pairs


def _sample(data, n, rng):
    X, y, theta = data
    return np.array([ssp.release_rss(X, y, theta, 1.0, rng, None) for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "residuals clipped at 3"])
def test_release_rss(variant, monkeypatch):
    """The clipped residual sum of squares, claimed eps = 1 (Laplace, sensitivity 1)."""
    if variant != "real":
        monkeypatch.setattr(ssp, "RESID_CLIP", 3.0)
    rep = audit(_sample, _pairs(), eps=1.0, delta=0.0, n=draws(8_000),
                n_pilot=draws(1_000), seed=seed_for(f"inference-rss/{variant}"))
    record("inference: clipped RSS", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
