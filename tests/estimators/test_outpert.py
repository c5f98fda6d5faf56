"""Output perturbation for logistic regression (:mod:`dpstats.estimators.outpert`) and
dp_glm's automatic choice (:mod:`dpstats.estimators.glm_auto`).

Accuracy checks are seeded and measured on fresh rows of the same distribution; the
sensitivity check compares the exact minimisers of neighbouring data sets with the claimed
bound (the audit in tests/privacy/test_audit_outpert.py checks the release itself).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.estimators import get_estimator, glm_auto, outpert
from dpstats.mechanisms.accountant import Ledger


def _logistic(n, beta, rng, b0=0.0):
    X = np.c_[np.ones(n), rng.normal(size=(n, beta.size))]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(b0 + X[:, 1:] @ beta)))).astype(float)
    return X, y


def _acc(params, X, y):
    return float(np.mean(((X @ params) >= 0) == (y == 1)))


def test_registered_for_binomial():
    assert get_estimator("outpert", "binomial") is outpert.estimate
    assert get_estimator("auto", "binomial") is glm_auto.estimate


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minimiser_moves_at_most_one_over_lam(seed):
    """Adding one row of norm <= 1 moves the ridge minimiser by at most 1 / Lam."""
    rng = np.random.default_rng(seed)
    U = rng.uniform(-1, 1, size=(8, 3)) / np.sqrt(3)
    y = (rng.uniform(size=8) < 0.5).astype(float)
    lam = 0.7
    t0 = outpert.ridge_fit(U, y, lam)
    worst = 0.0
    for _ in range(50):
        u = rng.uniform(-1, 1, size=3)
        u /= max(np.linalg.norm(u), 1.0)
        t1 = outpert.ridge_fit(np.vstack([U, u]), np.append(y, rng.integers(0, 2)), lam)
        worst = max(worst, float(np.linalg.norm(t1 - t0)))
    assert 0.05 / lam < worst <= (1 + 2 * outpert.GRAD_TOL) / lam


def test_ridge_fit_reaches_tolerance():
    rng = np.random.default_rng(3)
    U = rng.uniform(-1, 1, size=(500, 4)) / 2.0
    y = (U[:, 0] > 0).astype(float)          # separable: only the ridge keeps it finite
    t = outpert.ridge_fit(U, y, 0.01)
    mu = 1 / (1 + np.exp(-(U @ t)))
    assert np.linalg.norm(U.T @ (mu - y) + 0.01 * t) <= outpert.GRAD_TOL


def test_close_to_nonprivate_on_rich_data():
    rng = np.random.default_rng(11)
    beta = np.array([1.0, -1.0, 0.5, 0.0])
    X, y = _logistic(20_000, beta, rng, b0=0.5)
    Xt, yt = _logistic(20_000, beta, rng, b0=0.5)
    est = outpert.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0)
    oracle = _acc(np.r_[0.5, beta], Xt, yt)
    assert est.released and _acc(est.params, Xt, yt) >= oracle - 0.03


def test_never_much_worse_than_majority_without_signal():
    """Pure-noise features and 80% ones: the threshold falls back to (or near) predicting 1."""
    rng = np.random.default_rng(4)
    accs = []
    for _ in range(5):
        X = np.c_[np.ones(3000), rng.normal(size=(3000, 5))]
        y = (rng.uniform(size=3000) < 0.8).astype(float)
        Xt = np.c_[np.ones(5000), rng.normal(size=(5000, 5))]
        yt = (rng.uniform(size=5000) < 0.8).astype(float)
        est = outpert.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0)
        accs.append(_acc(est.params, Xt, yt) - float(np.mean(yt == 1)))
    assert np.median(accs) >= -0.01


def test_intercept_only_release(monkeypatch):
    """When an intercept-only candidate wins (forced here: index 0 is "predict 1", index 1
    "predict 0"), every slope is 0 and the intercept is on the chosen side, near the
    prevalence's logit."""
    rng = np.random.default_rng(9)
    X = np.c_[np.ones(4000), rng.normal(size=(4000, 3))]
    y = (rng.uniform(size=4000) < 0.9).astype(float)
    for idx, sign in ((0, 1.0), (1, -1.0)):
        monkeypatch.setattr(outpert, "exponential", lambda *a, _i=idx, **k: _i)
        est = outpert.estimate(X, y, eps=2.0, delta=1e-5, rng=rng, intercept_col=0)
        assert est.details["intercept_only"] and np.all(est.params[1:] == 0)
        assert np.sign(est.params[0]) == sign
    monkeypatch.setattr(outpert, "exponential", lambda *a, **k: 0)
    est = outpert.estimate(X, y, eps=2.0, delta=1e-5, rng=rng, intercept_col=0)
    assert est.params[0] == pytest.approx(np.log(9.0), abs=0.2)


def test_ledger_adds_up_and_no_intercept():
    rng = np.random.default_rng(2)
    X, y = _logistic(2000, np.array([1.0, 1.0]), rng)
    led = Ledger(1.0, 1e-5)
    outpert.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0)
    assert sum(c.eps for c in led.charges) == pytest.approx(1.0)
    assert [c.mechanism for c in led.charges] == ["gaussian (GDP)", "exponential", "laplace"]
    led2 = Ledger(1.0, 1e-5)
    est = outpert.estimate(X[:, 1:], y, eps=1.0, delta=1e-5, rng=rng, ledger=led2)
    assert est.released and [c.mechanism for c in led2.charges] == ["gaussian (GDP)"]


def test_threshold_grid_depends_on_radius_only():
    g = outpert.threshold_grid(2.0)
    assert g.size == outpert.N_THRESHOLDS and g[0] == -2.0 and g[-1] == 2.0 and 0.0 in g


# ------------------------------------------------------------------------- method="auto"
def test_rows_needed_shrinks_with_eps():
    r = glm_auto.rows_needed
    assert r(5, 0.5, 1e-5) > r(5, 1.0, 1e-5) > r(5, 4.0, 1e-5)
    assert r(5, 1.0, 1e-5) == pytest.approx(glm_auto.ROWS_CONSTANT / 0.2681, rel=0.01)


def test_auto_withholds_below_rows_needed_and_spends_nothing_more():
    rng = np.random.default_rng(0)
    X, y = _logistic(50, np.array([1.0, 1.0]), rng)
    led = Ledger(1.0, 1e-5)
    est = glm_auto.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0)
    assert not est.released and est.withheld.value == "too_few_rows"
    assert np.isnan(est.params).all()
    assert [c.mechanism for c in led.charges] == ["laplace"]          # the row count only
    need = glm_auto.rows_needed(3, 0.95, 1e-5)
    assert est.details["rows_needed"] == need
    assert f"is below the {need:,} rows a private logistic regression needs" \
        in est.details["why"]


def test_auto_choice_reads_only_released_and_public_values(monkeypatch):
    """With the row count given, the decision is the same whatever the true number of rows
    (it is never read), and changes exactly at rows_needed."""
    rng = np.random.default_rng(1)
    need = glm_auto.rows_needed(3, 1.0, 1e-5)
    X_small, y_small = _logistic(300, np.array([1.0, 1.0]), rng)
    X_big, y_big = _logistic(20_000, np.array([1.0, 1.0]), rng)
    for n_hat, expect in ((need - 1.0, False), (float(need), True)):
        for X, y in ((X_small, y_small), (X_big, y_big)):
            est = glm_auto.estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0),
                                    n_noisy=n_hat, intercept_col=0)
            assert est.released is expect
            assert est.details["method"] == ("outpert" if expect else None)
    rich = glm_auto.objpert_rows(3, 1.0, 1e-5)
    for n_hat, method in ((rich - 1.0, "outpert"), (float(rich), "objpert")):
        est = glm_auto.estimate(X_small, y_small, eps=1.0, delta=1e-5,
                                rng=np.random.default_rng(0), n_noisy=n_hat, intercept_col=0)
        assert est.details["method"] == method          # 300 true rows: never read
    calls = []
    monkeypatch.setattr(glm_auto, "choose", lambda *a: calls.append(a) or (None, "x"))
    glm_auto.estimate(X_big, y_big, eps=1.0, delta=1e-5, rng=rng, n_noisy=123.0,
                      intercept_col=0)
    assert calls == [(123.0, 3, 1.0, 1e-5)]


# ------------------------------------------------------------------- objective perturbation
def test_objpert_registered_and_close_on_rich_data():
    from dpstats.estimators import objpert
    assert get_estimator("objpert", "binomial") is objpert.estimate
    rng = np.random.default_rng(12)
    beta = np.array([1.0, -1.0, 0.5, 0.0])
    X, y = _logistic(20_000, beta, rng, b0=0.5)
    Xt, yt = _logistic(20_000, beta, rng, b0=0.5)
    led = Ledger(1.0, 1e-5)
    est = objpert.estimate(X, y, eps=1.0, delta=1e-5, rng=rng, ledger=led, intercept_col=0)
    assert est.released and _acc(est.params, Xt, yt) >= _acc(np.r_[0.5, beta], Xt, yt) - 0.03
    assert sum(c.eps for c in led.charges) == pytest.approx(1.0)
    assert sum(c.delta for c in led.charges) == pytest.approx(1e-5)
    assert "objective perturbation" in [c.mechanism for c in led.charges]


def test_objective_mechanism_accounting():
    """The split inside the mechanism: the objective's eps and the output noise's add up."""
    from dpstats.mechanisms import objective
    op = objective.ObjectivePerturbation(4, 1.0, 1e-5, np.random.default_rng(0))
    eps_j = objective.JACOBIAN_SHARE * (1.0 - 2 * objective.AMP_SHARE)
    assert op.ridge == pytest.approx(0.25 / np.expm1(eps_j))
    assert op.radius == pytest.approx(op.tol / op.ridge)
    with pytest.raises(Exception, match="already released"):
        op.release(np.zeros(4))
        op.release(np.zeros(4))


def test_ridge_fit_converges_on_large_n():
    """Near the minimum the solver takes pure Newton steps (a line search would stall on the
    objective's rounding) and reaches the tolerance the privacy proof needs."""
    rng = np.random.default_rng(5)
    U = rng.uniform(-1, 1, (50_000, 9)) / 3.0
    y = (rng.uniform(size=50_000) < 1 / (1 + np.exp(-U @ rng.normal(size=9) * 4))).astype(float)
    b = rng.normal(size=9) * 5
    t = outpert.ridge_fit(U, y, 2.4, tol=1e-8, linear=b)
    mu = 1 / (1 + np.exp(-(U @ t)))
    assert np.linalg.norm(U.T @ (mu - y) + 2.4 * t + b) <= 1e-8
