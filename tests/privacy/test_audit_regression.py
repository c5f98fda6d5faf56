"""Audits of the private regression estimators' releases: AdaSSP, Boosted AdaSSP, DP-GD,
Frank-Wolfe's vertex choice and the private screening rule.

Neighbours: add/remove one row of ``(X, y)``. Every estimator runs with public bounds (so every
release is of the regression itself) once on ``D`` and once on ``D`` plus one row, with a
recorder on the mechanism it calls (:mod:`hooks`); the recorded releases (statistic,
sensitivity, budget) are then drawn many times through the same public mechanism. The
coefficients are post-processing of these releases and a much weaker signal.

* AdaSSP (:func:`dpstats.estimators.adassp.estimate`, eps = 3, delta = 0.03): the three
  Gaussian releases (smallest eigenvalue, upper triangle of ``X'X``, ``X'y``) together, claimed
  (eps, delta) as the ledger says. Data with two nearly collinear columns, so that a row
  across them moves the smallest eigenvalue too. Broken: ``B_x`` halved.
* Boosted AdaSSP (:func:`dpstats.estimators.bas.estimate`, T = 1, eps = 1, delta = 0.01): the
  Gram matrix, eigenvalue and boosting-round releases of the GDP plan (with ``T = 1`` the round
  at ``theta = 0`` does not depend on earlier noise, so all releases are drawn independently).
  The Gram matrix is released through the plan as its upper triangle with i.i.d. noise, the
  distribution of ``symmetric=True``. Broken: rows not divided by ``sqrt(p)`` (norm up to
  ``sqrt(p)`` where 1 is assumed).
* DP-GD (:func:`dpstats.estimators.dpgd.estimate`, one epoch, clip 0.5, a released row count
  passed in, eps = 1, delta = 0.01): the release of the clipped gradient sum at ``theta = 0``,
  through the same plan recorder. Broken: per-row gradients not clipped.
* Frank-Wolfe (:func:`dpstats.estimators.fw.estimate`, squared loss, radius 2, T = 2,
  eps = 2, delta = 0): the second vertex choice, with the first fixed at ``+2 e_1`` (adaptive
  composition conditions on it), claimed eps/T = 1. Eight rows near 0, so that no vertex
  dominates and an added row (a corner of the box) changes common outcomes. Broken: the
  squared loss taken as 1-Lipschitz (score sensitivity ``radius``, not ``radius (radius + 1)``).
* Screening rule (:mod:`dpstats.estimators.screening`, via ``fw.estimate(screen="last")``,
  T = 1, eps = 2, delta = 0.02): the Gaussian release of the rule's components after the first
  step (fixed at ``+2 e_1``), claimed (eps2, delta2) = (1, 0.01). Broken: the component
  sensitivity without the terms of ``u^T g`` and ``||u||^2``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import recording, replay

from dpstats.estimators import adassp, bas, dpgd, fw, screening

RELATION = "add/remove one row"
_CHUNK = 500


def _pairs(X, y, rows, record_call) -> list[Pair]:
    base = record_call(X, y)
    return [Pair(f"add {name}", base, record_call(np.vstack([X, x]), np.append(y, yn)))
            for name, (x, yn) in rows]


def _corners(d: int, scale: float = 1.0):
    """Rows ``(1, x)`` and labels at every corner of ``[-scale, scale]^(d + 1)``."""
    for signs in itertools.product((-1.0, 1.0), repeat=d + 1):
        name = "corner " + "".join("+" if s > 0 else "-" for s in signs)
        yield name, (np.r_[1.0, scale * np.array(signs[:-1])], scale * signs[-1])


def _gaussian_replay(module):
    """Draw recorded ``gaussian`` releases (a list of calls) side by side, vectorised."""
    def sample(calls, n, rng):
        out = []
        for call in calls:
            v = np.ravel(call["value"])
            out.append(np.concatenate([
                module.gaussian(np.tile(v, (min(_CHUNK, n - i), 1)), call["sensitivity"],
                                call["eps"], call["delta"], rng).reshape(-1, v.size)
                for i in range(0, n, _CHUNK)]))
        return np.hstack(out)
    return sample


def _regression_data(n: int = 30, collinear: bool = False, scale: float = 1.0):
    rng = np.random.default_rng(17)
    x1 = rng.uniform(-scale, scale, n)
    x2 = (np.clip(x1 + 0.02 * rng.normal(size=n), -1, 1) if collinear
          else rng.uniform(-scale, scale, n))
    y = np.clip(0.5 * x1 - 0.3 * x2 + 0.2 * scale * rng.normal(size=n), -1, 1)
    return np.column_stack([np.ones(n), x1, x2]), y


# ------------------------------------------------------------------------------ AdaSSP
def adassp_pairs() -> list[Pair]:
    def rec(X, y):
        with recording(adassp, "gaussian") as calls:
            adassp.estimate(X, y, eps=3.0, delta=0.03, rng=np.random.default_rng(0),
                            intercept_col=0, bounds=(-1.0, 1.0))
        return calls
    pairs = []
    for collinear in (True, False):
        X, y = _regression_data(collinear=collinear)
        rows = [(f"{n}{' (collinear)' if collinear else ''}", r) for n, r in _corners(2)]
        pairs += _pairs(X, y, rows, rec)
    return pairs


@pytest.mark.parametrize("variant", ["real", "B_x halved"])
def test_adassp(variant, monkeypatch):
    """AdaSSP's three Gaussian releases, claimed (3, 0.03) by basic composition."""
    if variant != "real":
        monkeypatch.setattr(adassp, "row_norm_bound", lambda p: np.sqrt(p) / 2)
    rep = audit(_gaussian_replay(adassp), adassp_pairs(), eps=3.0, delta=0.03,
                n=draws(30_000), n_pilot=draws(3_000), seed=seed_for(f"adassp/{variant}"))
    record("AdaSSP releases", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ BAS
class _PlanRecorder(bas.GaussianGDP):
    """GaussianGDP that remembers how it was made and what it released."""

    made: list = []

    def __init__(self, eps, delta, plan, rng, ledger=None, **kw):
        super().__init__(eps, delta, plan, rng, ledger, **kw)
        self.args, self.calls = (eps, delta, dict(plan)), []
        _PlanRecorder.made.append(self)

    def release(self, part, value, sensitivity, *, symmetric=False):
        v = np.asarray(value, dtype=np.float64)
        self.calls.append((part, v[np.triu_indices(v.shape[0])] if symmetric else v.ravel(),
                           float(sensitivity)))
        return super().release(part, value, sensitivity, symmetric=symmetric)


def _plan_replay(recorded, n, rng):
    (eps, delta, parts), calls = recorded
    plan = bas.GaussianGDP(eps, delta, parts, rng)
    return np.hstack([plan.release(part, np.tile(v, (n, 1)), s) for part, v, s in calls])


def _plan_pairs(module, run, X, y, rows) -> list[Pair]:
    """Pairs of (plan arguments, recorded releases) of the GaussianGDP plan ``run(X, y)``
    makes in ``module``."""
    def rec(Xa, ya):
        _PlanRecorder.made = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module, "GaussianGDP", _PlanRecorder)
            run(Xa, ya)
        (plan,) = _PlanRecorder.made
        return plan.args, plan.calls
    return _pairs(X, y, rows, rec)


def bas_pairs() -> list[Pair]:
    X, y = _regression_data()
    return _plan_pairs(bas, lambda Xa, ya: bas.estimate(
        Xa, ya, eps=1.0, delta=0.01, rng=np.random.default_rng(0), T=1, intercept_col=0,
        bounds=(-1.0, 1.0)), X, y, list(_corners(2)))


@pytest.mark.parametrize("variant", ["real", "rows not scaled to norm 1"])
def test_bas(variant, monkeypatch):
    """Boosted AdaSSP with T = 1: every Gaussian release of its plan, claimed (1, 0.01)."""
    if variant != "real":
        monkeypatch.setattr(bas, "row_norm_bound", lambda p: 1.0)
    rep = audit(_plan_replay, bas_pairs(), eps=1.0, delta=0.01, n=draws(30_000),
                n_pilot=draws(3_000), seed=seed_for(f"bas/{variant}"))
    record("Boosted AdaSSP releases (T=1)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ DP-GD
def dpgd_pairs() -> list[Pair]:
    X, y = _regression_data()
    return _plan_pairs(dpgd, lambda Xa, ya: dpgd.estimate(
        Xa, ya, eps=1.0, delta=0.01, rng=np.random.default_rng(0), epochs=1, clip=0.5,
        n_noisy=30.0, intercept_col=0, bounds=(-1.0, 1.0)), X, y, list(_corners(2)))


def _unclipped_gradient_sum(U, y, theta, loss, clip):
    eta = U @ theta
    r = eta - y if loss == "squared" else 1.0 / (1.0 + np.exp(-eta)) - y
    return U.T @ r


@pytest.mark.parametrize("variant", ["real", "gradients not clipped"])
def test_dpgd(variant, monkeypatch):
    """DP-GD's gradient release (epochs = 1, clip 0.5, released n given), claimed (1, 0.01)."""
    if variant != "real":
        monkeypatch.setattr(dpgd, "_gradient_sum", _unclipped_gradient_sum)
    rep = audit(_plan_replay, dpgd_pairs(), eps=1.0, delta=0.01, n=draws(30_000),
                n_pilot=draws(3_000), seed=seed_for(f"dpgd/{variant}"))
    record("DP-GD gradient release", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ Frank-Wolfe
#: First vertex fixed at +radius e_1 (index 1 of the 2 p scores).
_FIRST = 1


def _fw_run(X, y, **kw):
    return fw.estimate(X, y, rng=np.random.default_rng(0), intercept_col=0, loss="squared",
                       radius=2.0, bounds=(-1.0, 1.0), **kw)


def fw_pairs() -> list[Pair]:
    def rec(X, y):
        with recording(fw, "exponential", respond=lambda i, _: _FIRST if i == 0 else None) \
                as calls:
            _fw_run(X, y, eps=2.0, delta=0.0, T=2)
        call = dict(calls[1])
        call["scores"] = np.array(call["scores"], dtype=np.float64)
        return call
    # few rows near 0: no vertex dominates, so one row's change shows in common outcomes
    X, y = _regression_data(8, scale=0.2)
    return _pairs(X, y, list(_corners(2)), rec)


@pytest.mark.parametrize("variant", ["real", "squared loss taken as 1-Lipschitz"])
def test_frank_wolfe_vertex(variant, monkeypatch):
    """Second Frank-Wolfe vertex choice (first fixed), claimed eps / T = 1."""
    if variant != "real":
        monkeypatch.setattr(fw, "score_sensitivity", lambda loss, radius: radius)
    rep = audit(replay(fw, "exponential"), fw_pairs(), eps=1.0, kind="discrete",
                n=draws(12_000), n_pilot=draws(1_000), seed=seed_for(f"fw/{variant}"))
    record("Frank-Wolfe vertex choice", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ screening
def screening_pairs() -> list[Pair]:
    def rec(X, y):
        with recording(fw, "exponential", respond=lambda i, _: _FIRST), \
                recording(screening, "gaussian") as calls:
            _fw_run(X, y, eps=2.0, delta=0.02, T=1, screen="last")
        return calls
    X, y = _regression_data(20)
    return _pairs(X, y, list(_corners(2)), rec)


def _gradient_terms_only(loss, radius, d, *, with_norms):
    return np.sqrt(screening.derivative_bound(loss, radius) ** 2 * d + (d if with_norms else 0))


@pytest.mark.parametrize("variant", ["real", "sensitivity without the u'g, u'u terms"])
def test_screening_rule(variant, monkeypatch):
    """Private screening components after the first step, claimed (eps2, delta2) = (1, 0.01)."""
    if variant != "real":
        monkeypatch.setattr(screening, "component_sensitivity", _gradient_terms_only)
    rep = audit(_gaussian_replay(screening), screening_pairs(), eps=1.0, delta=0.01,
                n=draws(30_000), n_pilot=draws(3_000), seed=seed_for(f"screening/{variant}"))
    record("screening rule (components)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
