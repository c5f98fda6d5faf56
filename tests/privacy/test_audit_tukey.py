"""Audits of the Tukey mechanism's parts: the PTR test, the restricted exponential mechanism,
and the two composed (propose-test-release).

Neighbours: **swap one model**. The Tukey estimator gives each row a random group label; with
``m`` fixed, adding or removing one row changes exactly one group's model, and (with
intercept-only groups, whose model is the group's mean label) one extreme row can move that
model anywhere. So on models, add/remove one row is "replace one model by any value", the
relation that :func:`dpstats.mechanisms.ptr.ptr_parameters` calls ``"swap"`` (the default
accounting).
Models are 1-D (p = 1), ``m = 100`` (``t = 25``), and the Tukey stage has ``(eps, delta) =
(2, 0.01)``: ``eps_ptr = 0.6``, ``eps_em = 1.4``. The data-independent tie-breaking jitter
(:func:`dpstats.estimators.tukey.linear.jitter_sort`) is drawn once per batch of draws.

* PTR test (:func:`dpstats.mechanisms.ptr.ptr_check`): the released noisy distance ``M + Laplace(1 /
  eps_ptr)``, claimed eps_ptr-DP. Candidate pairs come from a search over swaps on three model
  sets for the largest change of the exact statistic ``M`` (never more than 1 here), then the
  pilot. Broken: Laplace scale ``eps_ptr`` instead of ``1 / eps_ptr`` (002's reference code).
* Restricted exponential mechanism (:func:`dpstats.mechanisms.tukey_em.restricted_tukey_em`),
  on pairs that are both safe (``M >= 1``: the only inputs on which it runs after a pass),
  claimed (eps_em, delta). Broken: score sensitivity 1/4.
* Composed: ``None`` (NaN) when the test fails, else the released point, claimed
  (eps, delta); safe pairs and unsafe ones (heavy-tailed models, where a swap removes part of
  the restricted region). Broken: PTR threshold zero, which lets unsafe inputs through.
* Partial models (issue 15): a group votes only on the coordinates its rows identify, with
  neutral votes for the rest (:func:`dpstats.mechanisms.tukey_em.sort_with_neutral_votes`);
  m = 200 one-coordinate models of which 100 identify it; one row changes one model's value
  *and* whether it identifies. The restricted mechanism on safe pairs, claimed (eps_em,
  delta). Broken: the depth among identifying models rescaled to the full count (each such
  vote counted m // m_j = 2 times), a natural wrong fix with sensitivity 2.
* The sampled depth (issue 14): the composed release on swaps that tie the two middle models.
  Broken: the depth released with the point (as ``Estimate.depth`` and the summary did).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import sensitivity_times, with_arg
from scipy.stats import norm

from dpstats._kernels.depth import (
    approx_tukey_depth,
    log_depth_volumes,
    log_exact_volumes,
    max_depth,
)
from dpstats.estimators.tukey.linear import _jitter as jitter_only
from dpstats.estimators.tukey.linear import jitter_sort
from dpstats.mechanisms import ptr as ptr_module
from dpstats.mechanisms import tukey_em
from dpstats.mechanisms.ptr import distance_to_unsafety, ptr_check, ptr_parameters

EPS, DELTA, M = 2.0, 0.01, 100
T = max_depth(M) // 2
PARAMS = ptr_parameters(EPS, DELTA)
RELATION = "swap one model (= add/remove one row)"

MODEL_SETS = {
    "uniform": np.linspace(-1.0, 1.0, M),
    "normal": norm.ppf((np.arange(M) + 0.5) / M),
    # ten-fold spacing: the outer depth regions dwarf the inner ones (unsafe)
    "heavy": np.concatenate([-10.0 ** np.arange(M // 2, 0, -1), 10.0 ** np.arange(1, M // 2 + 1)]),
}


def _volumes(models: np.ndarray, rng):
    S = jitter_sort(np.asarray(models, dtype=np.float64)[:, None], rng)
    logV = log_depth_volumes(S)
    return S, logV, log_exact_volumes(logV)


def distance(models: np.ndarray, params=PARAMS) -> int:
    """The exact (non-private) statistic M of the PTR test, without jitter."""
    S = np.sort(models)[:, None]
    logV = log_depth_volumes(S)
    return distance_to_unsafety(logV, log_exact_volumes(logV), T, params.multiplier,
                                log_delta_lemma=params.log_delta_lemma)


def swap(name: str, rank: int, value: float) -> Pair:
    base = MODEL_SETS[name]
    other = np.sort(base)
    other[rank] = value
    return Pair(f"{name}: model {rank} -> {value:g}", base, other)


def _swaps(name: str) -> list[Pair]:
    base = MODEL_SETS[name]
    lo, hi, mid = base.min(), base.max(), float(np.median(base))
    wide = 10 * (hi - lo)
    out = []
    for rank in (0, T - 1, T, M // 2 - 1, M // 2, M - T, M - 1):
        for value in (lo - wide, mid, hi + wide, base[max(rank - 3, 0)]):
            out.append(swap(name, rank, value))
    return out


def ptr_candidates(n_keep: int = 4) -> list[Pair]:
    """Swaps with the largest change of the exact statistic M, then two with none."""
    pairs = [p for name in MODEL_SETS for p in _swaps(name)]
    change = np.array([abs(distance(p.d1) - distance(p.d0)) for p in pairs])
    assert change.max() <= 1, "the PTR statistic changed by more than 1 under a swap"
    order = np.argsort(-change, kind="stable")
    return [pairs[i] for i in order[:n_keep]] + [pairs[i] for i in order[-2:]]


def _ptr_sampler(models, n, rng):
    _, logV, logW = _volumes(models, rng)
    return np.array([ptr_check(logV, logW, t=T, params=PARAMS, rng=rng).noisy_distance
                     for _ in range(n)])


@pytest.mark.parametrize("variant", ["real", "Laplace scale eps instead of 1/eps"])
def test_ptr_test(variant, monkeypatch):
    """PTR noisy distance, claimed eps_ptr-DP (sensitivity 1 under a swap)."""
    if variant != "real":
        monkeypatch.setattr(ptr_module, "laplace",
                            with_arg(ptr_module.laplace, "eps", lambda e: 1.0 / e))
    pairs = ptr_candidates()
    rep = audit(_ptr_sampler, pairs, eps=PARAMS.eps_ptr, n=draws(6_000), n_pilot=draws(800),
                seed=seed_for(f"ptr/{variant}"))
    record("PTR test (noisy distance)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


def safe_pairs() -> list[Pair]:
    """Swaps after which both inputs are safe (M >= 1) on the two light-tailed model sets."""
    pairs = [swap("uniform", M // 2, 5.0), swap("uniform", T - 1, 0.0),
             swap("normal", M // 2 - 1, -10.0), swap("uniform", M - 1, -1.0)]
    safe = [p for p in pairs if min(distance(p.d0), distance(p.d1)) >= 1]
    assert len(safe) >= 3
    return safe


def _em_sampler(models, n, rng):
    S, _, _ = _volumes(models, rng)
    out = np.full(n, np.nan)
    for i in range(n):
        point = tukey_em.restricted_tukey_em(S, T, PARAMS.eps_em, rng, delta=DELTA,
                                             monotone=PARAMS.monotone)
        if point is not None:
            out[i] = point[0]
    return out


@pytest.mark.parametrize("variant", ["real", "score sensitivity / 4"])
def test_restricted_exponential(variant, monkeypatch):
    """Restricted exponential mechanism on safe inputs, claimed (eps_em, delta)."""
    if variant != "real":
        monkeypatch.setattr(tukey_em, "exponential",
                            sensitivity_times(tukey_em.exponential, 0.25))
    rep = audit(_em_sampler, safe_pairs(), eps=PARAMS.eps_em, delta=DELTA, n=draws(5_000),
                n_pilot=draws(600), n_audit=1, seed=seed_for(f"tukey_em/{variant}"))
    record("Tukey restricted exponential", variant, RELATION + ", both safe", rep)
    assert rep.violated == (variant != "real"), str(rep)


def _composed_sampler(params, with_depth: bool = False):
    """PTR then the mechanism; ``with_depth`` also releases the sampled depth (the depth of
    the released point), as dpstats did before issue 14."""
    def sample(models, n, rng):
        S, logV, logW = _volumes(models, rng)
        out = np.full((n, 2) if with_depth else n, np.nan)
        for i in range(n):
            if ptr_check(logV, logW, t=T, params=params, rng=rng).passed:
                point = tukey_em.restricted_tukey_em(S, T, params.eps_em, rng, delta=DELTA,
                                                     monotone=params.monotone)
                if point is not None:
                    out[i] = (point[0], approx_tukey_depth(point, S)) if with_depth else point[0]
        return out
    return sample


COMPOSED = {"real": PARAMS, "PTR threshold zero": dataclasses.replace(PARAMS, threshold=0.0)}


@pytest.mark.parametrize("variant", list(COMPOSED))
def test_ptr_then_exponential(variant):
    """PTR test, then the mechanism if it passed: claimed (eps, delta) = (2, 0.01)."""
    pairs = [swap("uniform", M // 2, 5.0), swap("normal", T - 1, 0.0),
             swap("heavy", T - 1, 0.0), swap("heavy", M - T, 0.0), swap("heavy", T - 1, 1e60)]
    rep = audit(_composed_sampler(COMPOSED[variant]), pairs, eps=EPS, delta=DELTA,
                n=draws(5_000), n_pilot=draws(600), n_audit=1,
                seed=seed_for(f"tukey_ptr_em/{variant}"))
    record("Tukey PTR + restricted exponential", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


@pytest.mark.parametrize("variant", ["real", "sampled depth released"])
def test_sampled_depth_is_not_released(variant):
    """Issue 14, leak 4: the middle model swapped onto its neighbour closes the region of the
    largest depth (the two middle models tie up to jitter) while barely moving the point's
    law. The released point alone keeps (eps, delta) = (2, 0.01); the point together with
    its depth (what ``Estimate.depth`` and the summary released before) does not."""
    pairs = [swap("uniform", M // 2, MODEL_SETS["uniform"][M // 2 - 1]),
             swap("normal", M // 2, MODEL_SETS["normal"][M // 2 - 1])]
    assert min(distance(p.d0) for p in pairs) >= 1 and min(distance(p.d1) for p in pairs) >= 1
    rep = audit(_composed_sampler(PARAMS, with_depth=variant != "real"), pairs, eps=EPS,
                delta=DELTA, n=draws(5_000), n_pilot=draws(600), n_audit=1,
                seed=seed_for(f"tukey_depth/{variant}"))
    record("Tukey PTR + mechanism, depth", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# -- partial models (issue 15): a group votes only on the coefficients it identifies ---------------
M_PART, IDENT_PART = 200, 100
T_PART = max_depth(M_PART) // 2


def _partial_base():
    """100 of 200 one-coordinate models identify it (normal quantiles); the other 100 hold the
    minimum-norm gauge value 0 and vote neutrally (h = min(50, neutral_cap(50)) = 25)."""
    vals = np.zeros(M_PART)
    vals[:IDENT_PART] = norm.ppf((np.arange(IDENT_PART) + 0.5) / IDENT_PART)
    ident = np.arange(M_PART) < IDENT_PART
    return vals, ident


def partial_pairs() -> list[Pair]:
    """One row changes one group: its value and whether it identifies the coordinate."""
    vals, ident = _partial_base()
    mid = IDENT_PART // 2
    out = []
    for name, g, value, ok in [("median model moved far", mid, 50.0, True),
                               ("median model stops identifying", mid, 0.0, False),
                               ("a gauge model identifies at the median", IDENT_PART, vals[mid],
                                True)]:
        v1, i1 = vals.copy(), ident.copy()
        v1[g], i1[g] = value, ok
        out.append(Pair(f"partial: {name}", (vals, ident), (v1, i1)))
    return out


def _rescaled_sort(models, ident, t):
    """The deliberately broken fix: depth among the identifying models rescaled to the full
    count (each identifying vote counted m // m_j times, no neutral votes): sensitivity
    m // m_j (here 2), not 1."""
    m = models.shape[0]
    v = np.sort(models[ident[:, 0], 0])
    k = m // v.size
    col = np.concatenate((np.repeat(v, k), np.full(m - k * v.size, np.nan)))
    return col[:, None]


def partial_distance(data, sort=tukey_em.sort_with_neutral_votes) -> int:
    vals, ident = data
    logV = log_depth_volumes(sort(vals[:, None], ident[:, None], T_PART))
    return distance_to_unsafety(logV, log_exact_volumes(logV), T_PART, PARAMS.multiplier,
                                log_delta_lemma=PARAMS.log_delta_lemma)


def _partial_sampler(sort):
    def sample(data, n, rng):
        vals, ident = data
        S = sort(jitter_only(vals[:, None], rng), ident[:, None], T_PART)
        out = np.full(n, np.nan)
        for i in range(n):
            point = tukey_em.restricted_tukey_em(S, T_PART, PARAMS.eps_em, rng, delta=DELTA,
                                                 monotone=PARAMS.monotone)
            if point is not None:
                out[i] = point[0]
        return out
    return sample


PARTIAL = {"real": tukey_em.sort_with_neutral_votes,
           "depth rescaled to m / m_j": _rescaled_sort}


@pytest.mark.parametrize("variant", list(PARTIAL))
def test_partial_models(variant):
    """Issue 15: models vote only on the coordinates they identify, neutral votes for the
    rest (:func:`dpstats.mechanisms.tukey_em.sort_with_neutral_votes`). The restricted
    mechanism on inputs that are both safe, claimed (eps_em, delta) = (1.4, 0.01), when one
    row changes one model's value and whether it identifies the coordinate."""
    pairs = partial_pairs()
    assert min(partial_distance(d) for p in pairs for d in (p.d0, p.d1)) >= 1
    rep = audit(_partial_sampler(PARTIAL[variant]), pairs, eps=PARAMS.eps_em, delta=DELTA,
                n=draws(5_000), n_pilot=draws(600), n_audit=1,
                seed=seed_for(f"tukey_partial/{variant}"))
    record("Tukey partial models (restricted exponential)", variant,
           "change one model's value and identification (= add/remove one row), both safe", rep)
    assert rep.violated == (variant != "real"), str(rep)
