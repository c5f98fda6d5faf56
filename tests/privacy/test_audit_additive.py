"""Audits of the additive mechanisms: Laplace, Gaussian and the private row count.

Neighbours. :func:`~dpstats.mechanisms.laplace` and :func:`~dpstats.mechanisms.gaussian` take a
statistic and its sensitivity; neighbouring inputs are two values of the statistic whose
difference has L1 (Laplace) or L2 (Gaussian) norm at most the sensitivity. Several directions
and lengths are searched. :func:`~dpstats.mechanisms.private_count` is audited on row counts
``n`` and ``n +- 1`` (add/remove one row).

Broken variants: noise scale halved (the mechanism called with half the sensitivity).
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import sensitivity_times

from dpstats.mechanisms import additive, gaussian, laplace, private_count

_CHUNK = 500


def _vector_sampler(mech, *args):
    """``n`` independent releases of a vector value, ``_CHUNK`` per mechanism call.

    The grid Laplace adds a rounding surcharge proportional to the length of the released
    array; at 500 rows of 1-2 values it widens the noise by about 0.1%.
    """
    def sample(value, n, rng):
        v = np.atleast_1d(np.asarray(value, dtype=np.float64))
        out = [mech(np.tile(v, (min(_CHUNK, n - i), 1)), *args, rng=rng)
               for i in range(0, n, _CHUNK)]
        return np.concatenate(out)
    return sample


def _shifts(norm: str) -> list[Pair]:
    """Neighbouring values at distance 1 in ``norm`` (and one closer pair)."""
    c = np.sqrt(0.5)
    pairs = [Pair("0 vs 1", 0.0, 1.0), Pair("3 vs 2", 3.0, 2.0), Pair("0 vs 0.5", 0.0, 0.5),
             Pair("(0,0) vs (1,0)", (0.0, 0.0), (1.0, 0.0))]
    if norm == "l1":
        pairs += [Pair("(0,0) vs (.5,.5)", (0.0, 0.0), (0.5, 0.5)),
                  Pair("(0,0) vs (.5,-.5)", (0.0, 0.0), (0.5, -0.5))]
    else:
        pairs += [Pair("(0,0) vs (.6,.8)", (0.0, 0.0), (0.6, 0.8)),
                  Pair("(0,0) vs (c,-c)", (0.0, 0.0), (c, -c))]
    return pairs


LAPLACE = {"real": laplace, "noise scale halved": sensitivity_times(laplace, 0.5)}
GAUSSIAN = {"real": gaussian, "noise scale halved": sensitivity_times(gaussian, 0.5)}


@pytest.mark.parametrize("variant", list(LAPLACE))
def test_laplace(variant):
    """Laplace(1/eps) on a grid, eps = 1, L1 sensitivity 1."""
    sample = _vector_sampler(LAPLACE[variant], 1.0, 1.0)
    rep = audit(sample, _shifts("l1"), eps=1.0, n=draws(40_000), n_pilot=draws(6_000),
                seed=seed_for(f"laplace/{variant}"))
    record("laplace", variant, "|v - v'|_1 <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)


@pytest.mark.parametrize("variant", list(GAUSSIAN))
def test_gaussian(variant):
    """Analytic Gaussian, (eps, delta) = (1, 0.01), L2 sensitivity 1."""
    sample = _vector_sampler(GAUSSIAN[variant], 1.0, 1.0, 0.01)
    rep = audit(sample, _shifts("l2"), eps=1.0, delta=0.01, n=draws(40_000),
                n_pilot=draws(6_000), seed=seed_for(f"gaussian/{variant}"))
    record("gaussian", variant, "|v - v'|_2 <= 1", rep)
    assert rep.violated == (variant != "real"), str(rep)


def _count_sampler(n_rows, n, rng):
    return np.array([private_count(n_rows, 1.0, rng) for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "noise scale halved"])
def test_private_count(variant, monkeypatch):
    """Private row count (n + Laplace(1/eps) - shift), eps = 1, add/remove one row."""
    if variant != "real":
        monkeypatch.setattr(additive, "laplace", sensitivity_times(additive.laplace, 0.5))
    pairs = [Pair("n=50 vs 51 (add)", 50, 51), Pair("n=50 vs 49 (remove)", 50, 49),
             Pair("n=1 vs 0", 1, 0)]
    rep = audit(_count_sampler, pairs, eps=1.0, n=draws(12_000), n_pilot=draws(2_000),
                seed=seed_for(f"private_count/{variant}"))
    record("private_count", variant, "add/remove one row", rep)
    assert rep.violated == (variant != "real"), str(rep)
