"""Neighbouring inputs share the output support (Mironov 2012): naive float noise vs the grid.

A naive sampler releases ``fl(value + eta)`` where ``eta`` is a float computed from a 53-bit
uniform. Its set of possible outputs depends on ``value`` in the low-order bits, so an observed
output is often impossible under a neighbouring input: the attacker learns the input exactly.
The tests below implement two such naive samplers (inverse-CDF Laplace and Gaussian), an exact
"could this output come from that input?" oracle for them, and show that most of their outputs
rule out the neighbour, while the grid samplers' outputs never do.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from dpstats.mechanisms import noise as _noise

TWO53 = 2.0**53

# --------------------------------------------------------------------------------------------
# naive samplers and their exact support oracles
# --------------------------------------------------------------------------------------------


def _laplace_eta(k, b):
    u = k / TWO53
    return np.where(u < 0.5, b * np.log(2 * u), -b * np.log(2 - 2 * u))


def _gauss_eta(k, b):
    return b * special.ndtri(k / TWO53)


def naive(value, kind: str, b: float, n: int, rng) -> np.ndarray:
    """``value + eta`` in float64, ``eta`` by inverse CDF from U = k / 2^53, k in 1..2^53-1."""
    k = rng.integers(1, 2**53, size=n).astype(np.float64)
    eta = _laplace_eta(k, b) if kind == "laplace" else _gauss_eta(k, b)
    return value + eta


def naive_possible(x, value, kind: str, b: float, window: int = 4) -> np.ndarray:
    """True where the naive sampler can output ``x`` from ``value`` (searches k near the
    inverse of the noise CDF at ``x - value``)."""
    x = np.asarray(x, dtype=np.float64)
    y = x - value
    if kind == "laplace":
        cands = [np.exp(np.minimum(y, 0) / b) / 2 * TWO53,
                 TWO53 - np.exp(-np.maximum(y, 0) / b) * TWO53 / 2]
        eta_of = _laplace_eta
    else:
        cands = [special.ndtr(y / b) * TWO53, TWO53 - special.ndtr(-y / b) * TWO53]
        eta_of = _gauss_eta
    out = np.zeros(x.shape, dtype=bool)
    for centre in cands:
        for off in range(-window, window + 1):
            k = np.clip(np.round(centre) + off, 1, TWO53 - 1)
            out |= (value + eta_of(k, b)) == x
    return out


def grid_release(value, kind: str, n: int, rng):
    """``n`` releases of ``value`` by the package's grid samplers (sensitivity 1)."""
    v = np.full(n, value)
    if kind == "laplace":
        return _noise.grid_laplace(v, 1.0, 1.0, rng), _noise.granularity_for(1.0)
    return _noise.grid_gaussian(v, 1.0, 1.0, rng), _noise.gaussian_granularity(1.0)


def grid_possible(x, g: float) -> np.ndarray:
    """The grid samplers can output ``x`` from any input iff ``x`` is on ``g Z`` (the integer
    noise has full support, checked against its pmf in test_noise_discrete)."""
    q = np.asarray(x) / g
    return np.isfinite(q) & (q == np.round(q))


PAIRS = [(0.0, 1.0), (0.1, 0.1 + 1e-9)]

# --------------------------------------------------------------------------------------------
# the attack works on naive samplers ...
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("a, b", PAIRS)
def test_naive_float_noise_rules_out_the_neighbour(kind, a, b):
    rng = np.random.default_rng(0)
    x = naive(a, kind, 1.0, 50_000, rng)
    assert naive_possible(x, a, kind, 1.0).all()        # the oracle is sound on its own input
    impossible = ~naive_possible(x, b, kind, 1.0)
    # Mironov's signature: a large share of releases is impossible under the neighbour
    assert impossible.mean() > 0.5
    # and the oracle cannot be fooled the other way round
    y = naive(b, kind, 1.0, 20_000, rng)
    assert (~naive_possible(y, a, kind, 1.0)).mean() > 0.5


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_naive_low_bits_identify_the_input(kind):
    """Any float noise: fl(1 + eta) in [1/4, 1/2) is a multiple of 2^-53, fl(0 + eta) need not be.

    An odd multiple of 2^-54 in [1/4, 1/2) is therefore impossible from input 1."""
    rng = np.random.default_rng(1)
    odd = {}
    for value in (0.0, 1.0):
        x = naive(value, kind, 1.0, 200_000, rng)
        x = x[(x >= 0.25) & (x < 0.5)]
        odd[value] = np.mod(x * 2.0**54, 2.0) == 1.0
    assert odd[0.0].mean() > 0.3
    assert not odd[1.0].any()


# --------------------------------------------------------------------------------------------
# ... and fails on the grid samplers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("a, b", PAIRS)
def test_grid_noise_never_rules_out_the_neighbour(kind, a, b):
    rng = np.random.default_rng(2)
    xa, g = grid_release(a, kind, 50_000, rng)
    xb, _ = grid_release(b, kind, 50_000, rng)
    assert grid_possible(xa, g).all() and grid_possible(xb, g).all()
    # the low-order grid digits carry no trace of the input: residues mod 64 uniform for both
    for x in (xa, xb):
        r = np.mod(np.round(x / g), 64).astype(int)
        assert stats.chisquare(np.bincount(r, minlength=64)).pvalue > 1e-4
    # the releases are spread over many grid points (not a degenerate lattice)
    assert len(np.unique(xa)) > 49_000


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_grid_low_bits_do_not_identify_the_input(kind):
    """The low-bit test that exposes naive noise sees the same picture from 0 and from 1."""
    rng = np.random.default_rng(3)
    share = {}
    for value in (0.0, 1.0):
        x, g = grid_release(value, kind, 200_000, rng)
        x = x[(x >= 0.25) & (x < 0.5)]
        share[value] = np.mean(np.mod(x / g, 2.0) == 1.0)       # odd grid multiples
    assert abs(share[0.0] - share[1.0]) < 0.03
    assert 0.4 < share[0.0] < 0.6
