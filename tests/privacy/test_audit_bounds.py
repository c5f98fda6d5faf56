"""Audits of the private bounds and the private centre.

Neighbours: add/remove one row (one value per row and column). A pair is always "``D`` and
``D`` plus one value" (read both ways by the audit, so it covers removal too).

* :func:`dpstats.mechanisms.bounds.private_bounds` on one label column (its q- and (1-q)-quantiles,
two
  exponential-mechanism releases at eps/2 each), end to end, q = 0.1, eps = 2; the output is
  the released pair ``(lo, hi)``. Candidates add a value beyond the data, inside it, or in
  an empty grid cell between its values. Broken: utility sensitivity ``q`` instead of
  ``max(q, 1 - q)``.
* Histogram bounds (:func:`dpstats.estimators.bounds_release.histogram_bounds`, used by AdaSSP,
  BAS, Frank-Wolfe and DP-GD): one Gaussian release of the log-scale histograms of 8 columns
  and a label, L2 sensitivity ``sqrt(9) = 3``, claimed (1, 0.01). A row changes one count per
  column;
  the coordinates that do not differ between ``D`` and ``D'`` get identical, independent noise
  and cannot help to tell them apart, so only the 9 counts that differ are drawn. Broken:
  the release calibrated for sensitivity 1 (one count per row).
* :func:`dpstats.mechanisms.private_centre_value` (the 1-D Tukey median on a public grid,
  monotone exponential mechanism), eps = 1; the output is the released grid value. Broken:
  score sensitivity 1/4.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import sensitivity_times

from dpstats.estimators import bounds_release
from dpstats.mechanisms import bounds, centre

RELATION = "add/remove one row"
Q = 0.1


def _add_value_pairs(values: np.ndarray, extra: dict) -> list[Pair]:
    return [Pair(f"add {name}", values, np.append(values, v)) for name, v in extra.items()]


# ------------------------------------------------------------------------------ quantiles
def quantile_pairs() -> list[Pair]:
    """Two small values and many large ones, with empty grid cells between: the lower
    quantile's rank falls in the gap, where many cells tie and one row breaks the tie."""
    values = np.r_[0.1, 0.12, np.linspace(40.0, 60.0, 18)]
    return _add_value_pairs(values, {"-1e9": -1e9, "1e9": 1e9, "0.1": 0.1, "3": 3.0,
                                     "50": 50.0})


def _bounds_sampler(values, n, rng):
    out = np.empty((n, 2))
    for i in range(n):
        b = bounds.private_bounds(None, values, 2.0, rng, q=Q)
        out[i] = b.y
    return out


@pytest.mark.parametrize("variant", ["real", "utility sensitivity q, not max(q, 1-q)"])
def test_private_bounds(variant, monkeypatch):
    """Private (q, 1-q)-quantile bounds of one column, claimed eps = 2."""
    if variant != "real":
        monkeypatch.setattr(bounds, "exponential",
                            sensitivity_times(bounds.exponential, Q / (1 - Q)))
    rep = audit(_bounds_sampler, quantile_pairs(), eps=2.0, n=draws(4_000),
                n_pilot=draws(400), seed=seed_for(f"private_bounds/{variant}"))
    record("private bounds (quantiles)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ histograms
def histogram_pairs() -> list[Pair]:
    """``(changed counts, sensitivity)`` for D and D' = D + one row, through
    :func:`~dpstats.estimators.bounds_release.histogram_bounds`."""
    rng = np.random.default_rng(21)
    X = rng.lognormal(size=(50, 8)) * rng.choice([-1.0, 1.0], size=(50, 8))
    y = rng.normal(size=50)

    def counts(Xa, ya):
        seen = []

        def release(v, s):
            seen.append((np.array(v), float(s)))
            return np.asarray(v, dtype=np.float64), 1.0

        bounds_release.histogram_bounds(Xa, ya, release)
        return seen[0]

    base, s = counts(X, y)
    rows = {"row in empty cells": (np.full(8, 1e6), -1e6), "row at 0": (np.zeros(8), 0.0),
            "copy of row 0": (X[0], y[0])}
    pairs = []
    for name, (x, yn) in rows.items():
        other, s1 = counts(np.vstack([X, x]), np.append(y, yn))
        keep = np.flatnonzero(other != base)
        pairs.append(Pair(f"add {name}", (base[keep], s), (other[keep], s1)))
    return pairs


def _histogram_sampler(sens_factor: float):
    def sample(data, n, rng):
        v, s = data
        return np.concatenate([
            bounds_release.gaussian(np.tile(v, (min(500, n - i), 1)), s * sens_factor, 1.0, 0.01,
                                    rng)
            for i in range(0, n, 500)])
    return sample


@pytest.mark.parametrize("variant", ["real", "sensitivity 1, not sqrt(columns)"])
def test_histogram_bounds(variant):
    """Gaussian release of 9 log-scale histograms, claimed (1, 0.01)."""
    pairs = histogram_pairs()
    assert all(p.d0[0].size == 9 and p.d0[1] == 3.0 for p in pairs)
    sample = _histogram_sampler(1.0 if variant == "real" else 1.0 / 3.0)
    rep = audit(sample, pairs, eps=1.0, delta=0.01, n=draws(20_000), n_pilot=draws(3_000),
                seed=seed_for(f"histogram_bounds/{variant}"))
    record("histogram bounds (Gaussian)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ centre
def centre_pairs() -> list[Pair]:
    values = np.round(np.random.default_rng(23).normal(-120.0, 2.0, 15), 3)
    med = float(np.median(values))
    return _add_value_pairs(values, {"1e6": 1e6, "-1e6": -1e6, "median": med,
                                     "median + 1": med + 1.0, "min - 1": values.min() - 1.0})


def _centre_sampler(values, n, rng):
    return np.array([centre.private_centre_value(values, 1.0, rng) for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "score sensitivity / 4"])
def test_private_centre(variant, monkeypatch):
    """Private centre (1-D Tukey depth, monotone exponential mechanism), claimed eps = 1."""
    if variant != "real":
        monkeypatch.setattr(centre, "exponential", sensitivity_times(centre.exponential, 0.25))
    rep = audit(_centre_sampler, centre_pairs(), eps=1.0, n=draws(6_000), n_pilot=draws(500),
                seed=seed_for(f"centre/{variant}"))
    record("private centre", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
