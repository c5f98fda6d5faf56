"""Audits of output perturbation (:mod:`dpstats.estimators.outpert`, dp_glm's default method).

Neighbours: add/remove one row of ``(X, y)``. The estimator runs with public bounds
``(-1, 1)`` once on ``D`` and once on ``D`` plus one row at a corner of the box (label 0 or 1);
a recorder captures what it passes to each mechanism, and the audit replays exactly that
release many times through the same public mechanism.

* **Ridge minimiser** (the ``"theta"`` part of the Gaussian-DP plan, eps = 1 for the stage,
  so the plan is (0.85, 0.01) after the threshold's and the counts' shares): six rows, so
  that the data's own curvature is small beside ``Lam`` and one added row moves the
  minimiser by close to the claimed ``1 / Lam``. Broken: the fit uses ``Lam / 4`` while the
  noise is calibrated to ``1 / Lam`` (the regularisation the sensitivity relies on is not
  applied).
* **Threshold** (the exponential mechanism over the thresholds, monotone form, sensitivity 1,
  stage eps 4 so ``eps_t`` = 0.4): the released ``theta`` is fixed (adaptive composition
  conditions on it), so ``D`` and ``D'`` differ only in the counted rows. Broken: sensitivity
  divided by 4.
* **Objective perturbation** (:class:`dpstats.mechanisms.objective.ObjectivePerturbation`
  with the solver of :mod:`dpstats.estimators.objpert`, claimed (1, 0.01)): a fresh ``b`` and
  output noise per draw, five rows and two opposite corner rows. The worst-case analysis is
  loose for typical draws, so the broken variant is gross: ``b``'s noise divided by 10.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import recording, replay, sensitivity_times

from dpstats.estimators import objpert, outpert
from dpstats.mechanisms import objective

RELATION = "add/remove one row"


def _data(n: int = 6):
    rng = np.random.default_rng(5)
    x = rng.uniform(-0.5, 0.5, size=(n, 2))
    y = (x[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(float)
    return np.column_stack([np.ones(n), x]), y


def _rows():
    for s1 in (-1.0, 1.0):
        for s2 in (-1.0, 1.0):
            for lab in (0.0, 1.0):
                yield f"corner ({s1:+.0f}, {s2:+.0f}), y={lab:.0f}", np.array([1.0, s1, s2]), lab


class _PlanRecorder(outpert.GaussianGDP):
    made: list = []

    def __init__(self, eps, delta, plan, rng, ledger=None, **kw):
        super().__init__(eps, delta, plan, rng, ledger, **kw)
        self.args, self.calls = (eps, delta, dict(plan)), []
        _PlanRecorder.made.append(self)

    def release(self, part, value, sensitivity, **kw):
        self.calls.append((part, np.ravel(np.asarray(value, dtype=np.float64)),
                           float(sensitivity)))
        return super().release(part, value, sensitivity, **kw)


def _plan_replay(recorded, n, rng):
    (eps, delta, parts), calls = recorded
    plan = outpert.GaussianGDP(eps, delta, parts, rng)
    return np.hstack([plan.release(part, np.tile(v, (n, 1)), s) for part, v, s in calls])


def theta_pairs() -> list[Pair]:
    def rec(X, y):
        _PlanRecorder.made = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(outpert, "GaussianGDP", _PlanRecorder)
            outpert.estimate(X, y, eps=1.0, delta=0.01, rng=np.random.default_rng(0),
                             intercept_col=0, bounds=(-1.0, 1.0))
        (plan,) = _PlanRecorder.made
        return plan.args, plan.calls
    X, y = _data()
    base = rec(X, y)
    return [Pair(f"add {name}", base, rec(np.vstack([X, x]), np.append(y, lab)))
            for name, x, lab in _rows()]


@pytest.mark.parametrize("variant", ["real", "fit with Lam / 4"])
def test_outpert_theta(variant, monkeypatch):
    """The released ridge minimiser, claimed (0.85, 0.01) (the plan's share of (1, 0.01))."""
    if variant != "real":
        fit = outpert.ridge_fit
        monkeypatch.setattr(outpert, "ridge_fit", lambda U, y, lam, **kw: fit(U, y, lam / 4))
    pairs = theta_pairs()
    (eps, delta, _), _ = pairs[0].d0
    rep = audit(_plan_replay, pairs, eps=eps, delta=delta, n=draws(30_000),
                n_pilot=draws(3_000), seed=seed_for(f"outpert-theta/{variant}"))
    record("output perturbation (ridge minimiser)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


class _FixedTheta(outpert.GaussianGDP):
    """A plan whose ``theta`` release is fixed (the audit conditions on it)."""

    def release(self, part, value, sensitivity, **kw):
        if part == "theta":
            return np.array([0.0, 1.0, -0.5])
        return super().release(part, value, sensitivity, **kw)


def threshold_pairs() -> list[Pair]:
    def rec(X, y):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(outpert, "GaussianGDP", _FixedTheta)
            with recording(outpert, "exponential") as calls:
                outpert.estimate(X, y, eps=4.0, delta=0.01, rng=np.random.default_rng(0),
                                 intercept_col=0, bounds=(-1.0, 1.0))
        (call,) = calls
        return call
    X, y = _data(12)
    base = rec(X, y)
    return [Pair(f"add {name}", base, rec(np.vstack([X, x]), np.append(y, lab)))
            for name, x, lab in _rows()]


@pytest.mark.parametrize("variant", ["real", "sensitivity / 4"])
def test_outpert_threshold(variant, monkeypatch):
    """The threshold choice (monotone exponential mechanism), claimed eps_t = 0.4."""
    if variant != "real":
        monkeypatch.setattr(outpert, "exponential",
                            sensitivity_times(outpert.exponential, 0.25))
    pairs = threshold_pairs()
    eps_t = pairs[0].d0["eps"]
    rep = audit(replay(outpert, "exponential"), pairs, eps=eps_t, kind="discrete",
                n=draws(20_000), n_pilot=draws(2_000), seed=seed_for(f"outpert-thr/{variant}"))
    record("output perturbation (threshold)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------ objective perturbation
def _objective_sample(recorded, n, rng):
    """Draws of the released minimiser: a fresh ``b`` (and output noise) per draw."""
    U, y, eps, delta = recorded
    out = np.empty((n, U.shape[1]))
    for i in range(n):
        op = objective.ObjectivePerturbation(U.shape[1], eps, delta, rng, tol=objpert.GRAD_TOL)
        out[i] = op.release(outpert.ridge_fit(U, y, op.ridge, tol=objpert.GRAD_TOL,
                                              linear=op.b))
    return out


def objective_pairs() -> list[Pair]:
    X, y = _data(5)
    U = X / np.sqrt(3.0)                       # rows of norm <= 1, as objpert scales them
    base = (U, y, 1.0, 0.01)
    return [Pair(f"add {name}", base, (np.vstack([U, x / np.sqrt(3.0)]), np.append(y, lab),
                                       1.0, 0.01))
            for name, x, lab in _rows() if name in _OBJ_ROWS]


#: Two opposite corners with labels against the trend of the data (x0 > 0 means y = 1).
_OBJ_ROWS = ("corner (+1, +1), y=0", "corner (-1, -1), y=1")


@pytest.mark.parametrize("variant", ["real", "noise sd / 10"])
def test_objective_perturbation(variant, monkeypatch):
    """The released minimiser of the perturbed objective, claimed (1, 0.01). The worst-case
    analysis is loose for typical draws (the audit of the real mechanism finds about 0.3), so
    the broken variant is a gross one: b's noise divided by 10."""
    if variant != "real":
        sigma = objective.objective_sigma
        monkeypatch.setattr(objective, "objective_sigma", lambda *a: sigma(*a) / 10)
    rep = audit(_objective_sample, objective_pairs(), eps=1.0, delta=0.01, n=draws(3_000),
                seed=seed_for(f"objpert/{variant}"))
    record("objective perturbation (minimiser)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
