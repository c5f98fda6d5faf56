"""Private Frank-Wolfe and the private screening rule (001): kernels, utility at large eps,
accounting, sensitivities (checked empirically, with broken variants that must fail)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstats._kernels import frank_wolfe as K
from dpstats.errors import ValidationError
from dpstats.estimators import estimator_call
from dpstats.estimators.fw import estimate, frank_wolfe, fw_iteration_eps, score_sensitivity
from dpstats.estimators.screening import (
    ExactScreener,
    PrivateScreener,
    component_sensitivity,
    exact_rule,
    paper_iteration_budget,
    paper_sensitivity,
    screen_plan,
)
from dpstats.mechanisms import analytic_gaussian_sigma
from dpstats.mechanisms.accountant import Ledger, advanced_composition


def _unit_data(n, d, seed, loss="squared", coef=(0.6, -0.3, 0.0, 0.0)):
    """Intercept + d columns uniform in [-1, 1]; y in [-1, 1] (squared) or {0, 1}."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, size=(n, d))])
    b = np.zeros(d + 1)
    b[1:1 + len(coef)] = coef[:d]
    if loss == "squared":
        y = np.clip(X @ b + 0.1 * rng.normal(size=n), -1, 1)
    else:
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-3 * (X @ b)))).astype(float)
    return X, y


def _project_l1(v, radius):
    """Euclidean projection onto the L1 ball (Duchi et al. 2008)."""
    if np.abs(v).sum() <= radius:
        return v
    a = np.sort(np.abs(v))[::-1]
    cs = np.cumsum(a)
    k = np.nonzero(a * np.arange(1, len(a) + 1) > cs - radius)[0][-1]
    theta = (cs[k] - radius) / (k + 1)
    return np.sign(v) * np.maximum(np.abs(v) - theta, 0)


def _pgd(X, t, loss, radius, iters=20000):
    """L1-constrained optimum of the sum loss by projected gradient (the non-private answer)."""
    L = np.linalg.eigvalsh(X.T @ X).max() * (1.0 if loss == "squared" else 0.25)
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        g, _ = K.loss_gradient_reference(X, X @ w, t, loss)
        w = _project_l1(w - g / L, radius)
    return w


# -- kernels -------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_kernels_match_numpy_references(loss):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(257, 9))
    u = rng.normal(scale=30, size=257)               # large |u|: logistic must not overflow
    y = rng.uniform(-1, 1, 257) if loss == "squared" else rng.choice([-1.0, 1.0], 257)
    g, r = K.loss_gradient(np.ascontiguousarray(X.T), u, y, loss)
    g_ref, r_ref = K.loss_gradient_reference(X, u, y, loss)
    np.testing.assert_allclose(r, r_ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(K.vertex_scores(g, 2.5), K.vertex_scores_reference(g, 2.5))
    assert K.sum_loss(u, y, loss) == pytest.approx(K.sum_loss_reference(u, y, loss), rel=1e-12)
    assert np.isfinite(g).all()


# -- utility at very large eps ---------------------------------------------------------------

@pytest.mark.parametrize("loss,radius", [("squared", 1.0), ("squared", 0.5), ("logistic", 2.0)])
def test_large_eps_reaches_the_l1_constrained_optimum(loss, radius):
    X, y = _unit_data(400, 4, 1, loss)
    t = y if loss == "squared" else 2 * y - 1
    w_star = _pgd(X, t, loss, radius)
    est = estimate(X, y, eps=1e9, delta=1e-6, rng=np.random.default_rng(0), loss=loss,
                   radius=radius, T=3000, intercept_col=0, bounds=(-1.0, 1.0))
    assert est.released
    f_star = K.sum_loss_reference(X @ w_star, t, loss)
    f_fw = K.sum_loss_reference(X @ est.params, t, loss)
    assert f_star <= f_fw <= f_star + 0.01 * max(f_star, 1.0)
    np.testing.assert_allclose(est.params, w_star, atol=0.03)
    # non-private FW (argmin) on the same data agrees too
    w_np, _ = frank_wolfe(np.ascontiguousarray(X.T), t, loss=loss, radius=radius, T=3000,
                          choose=np.argmin)
    np.testing.assert_allclose(w_np, w_star, atol=0.03)


def test_coefficients_are_mapped_back_to_the_original_scale():
    X, y = _unit_data(300, 3, 2)
    Xo = X.copy()
    Xo[:, 1:] = 3.0 + 5.0 * X[:, 1:]                  # bounds (-2, 8) map back to X exactly
    yo = 10.0 + 4.0 * y                              # bounds (6, 14)
    kw = dict(eps=2.0, delta=1e-6, T=300, intercept_col=0)
    unit = estimate(X, y, rng=np.random.default_rng(5), bounds=(-1.0, 1.0), **kw)
    orig = estimate(Xo, yo, rng=np.random.default_rng(5),
                    bounds={"x": (-2.0, 8.0), "y": (6.0, 14.0)}, **kw)
    np.testing.assert_allclose(Xo @ orig.params, 10.0 + 4.0 * (X @ unit.params), atol=1e-9)


def test_without_intercept_the_map_is_linear():
    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(500, 2))
    y = X @ np.array([0.5, -0.25])
    est = estimate(X, y, eps=1e9, delta=1e-6, rng=rng, T=2000, bounds={"x": (-2, 2),
                   "y": (-1.5, 1.5)}, radius=1.0)
    np.testing.assert_allclose(est.params, [0.5, -0.25], atol=0.02)
    assert est.details["x_bounds"].tolist() == [[-2.0, 2.0], [-2.0, 2.0]]


# -- accounting ------------------------------------------------------------------------------

@pytest.mark.parametrize("screen,bounds", [(None, "auto"), (None, (-1.0, 1.0)),
                                           ("every", "auto"), (50, (-1.0, 1.0)),
                                           ("last", {"x": (-1, 1), "y": "auto"})])
def test_ledger_totals_equal_the_budget(screen, bounds):
    X, y = _unit_data(600, 3, 5)
    led = Ledger(1.5, 2e-5)
    est = estimate(X, y, eps=1.5, delta=2e-5, rng=np.random.default_rng(1), ledger=led,
                   T=200, screen=screen, bounds=bounds, intercept_col=0,
                   names=["Intercept", "a", "b", "c"])
    e, d = led.spent
    assert e == pytest.approx(1.5, rel=1e-9) and d == pytest.approx(2e-5, rel=1e-9)
    stages = set(led.to_frame()["stage"])
    assert ("regression: screening" in stages) == (screen is not None)
    assert ("regression: bounds" in stages) == (bounds != (-1.0, 1.0))
    if screen is not None:
        assert est.details["eps_screen"] == pytest.approx(est.details["eps_fw"])
        assert 0 not in est.details["screened"]           # the intercept is never screened
        assert est.details["n_screened"] == len(est.details["screened"])


def test_iteration_budget_composes_to_eps1():
    e, d = fw_iteration_eps(1.0, 1e-5, 1000)
    assert advanced_composition(e, 0.0, 1000, 1e-5)[0] == pytest.approx(1.0, rel=1e-9)
    assert e > 1.0 / 1000 and d == 1e-5
    assert fw_iteration_eps(1.0, 0.0, 1000) == (1e-3, 0.0)          # delta = 0: basic
    assert fw_iteration_eps(50.0, 1e-5, 10) == (5.0, 0.0)           # basic is better here


def test_accepts_the_api_call_and_logistic_as_dp_glm_makes_it():
    X, y = _unit_data(500, 3, 6, "logistic")
    est = estimator_call("fw", X, y, dict(
        eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=None, m=None, lemma="8.5",
        accounting="swap", intercept_col=0, names=None, bounds="auto", stage="regression",
        loss="logistic"), {"T": 100}, family="binomial")
    assert est.released and est.details["y_bounds"] is None and est.params.shape == (4,)


# -- sensitivities, checked empirically --------------------------------------------------------

def _in_ball(rng, d, radius):
    w = rng.uniform(-1, 1, d) * rng.exponential(size=d)
    return w * radius * rng.uniform(0.5, 1) / np.abs(w).sum()


def _neighbours(rng, X, y, loss, w):
    """Remove-one neighbours and add-one neighbours with extreme rows."""
    for r in range(X.shape[0]):
        yield np.delete(X, r, 0), np.delete(y, r)
    for _ in range(20):
        x = rng.choice([-1.0, 1.0], X.shape[1])
        u = x @ w
        yy = -np.sign(u) if loss == "squared" else float(rng.choice([-1.0, 1.0]))
        yield np.vstack([X, x]), np.append(y, yy)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_vertex_score_sensitivity_holds_and_001s_constant_1_does_not(loss):
    rng = np.random.default_rng(7)
    radius, worst = 2.0, 0.0
    for _ in range(30):
        X = rng.uniform(-1, 1, size=(12, 4))
        y = rng.uniform(-1, 1, 12) if loss == "squared" else rng.choice([-1.0, 1.0], 12)
        w = _in_ball(rng, 4, radius)
        s0 = K.vertex_scores_reference(K.loss_gradient_reference(X, X @ w, y, loss)[0], radius)
        for Xn, yn in _neighbours(rng, X, y, loss, w):
            g = K.loss_gradient_reference(Xn, Xn @ w, yn, loss)[0]
            worst = max(worst, np.abs(K.vertex_scores_reference(g, radius) - s0).max())
    sens = score_sensitivity(loss, radius)
    assert worst <= sens * (1 + 1e-12)
    if loss == "squared":
        # "the loss is 1-Lipschitz" (radius * 1) is not a bound for the squared loss
        assert worst > radius * 1.0
        assert worst > 0.8 * sens                      # and the derived bound is nearly tight


def test_screening_component_sensitivity_holds():
    rng = np.random.default_rng(8)
    radius, d = 1.5, 4
    s = component_sensitivity("squared", radius, d, with_norms=True)
    worst = 0.0
    for _ in range(30):
        X = rng.uniform(-1, 1, size=(10, d))
        y = rng.uniform(-1, 1, 10)
        w = _in_ball(rng, d, radius)

        def comps(Xa, ya, w=w):
            u = Xa @ w
            r = u - ya
            return np.concatenate([Xa.T @ r, [u @ r, u @ u], (Xa ** 2).sum(0)])
        v0 = comps(X, y)
        for Xn, yn in _neighbours(rng, X, y, "squared", w):
            worst = max(worst, np.linalg.norm(comps(Xn, yn) - v0))
    assert worst <= s
    assert worst > 0.5 * s


def test_001_eq2_is_not_a_sensitivity_of_the_rule():
    """Near an optimum (gap 0) one added row moves R_i by O(sqrt(n)): 001's bound fails."""
    rng = np.random.default_rng(9)
    n, radius = 2000, 1.0
    X = rng.uniform(-1, 1, size=(n, 2))
    y = rng.uniform(-1, 1, n)
    y -= X @ np.linalg.lstsq(X, y, rcond=None)[0]     # X^T y = 0, so w = 0 is optimal
    y /= np.abs(y).max()
    R0 = exact_rule(np.ascontiguousarray(X.T), np.zeros(n), y, "squared", radius)
    X1, y1 = np.vstack([X, [1.0, 1.0]]), np.append(y, 1.0)
    R1 = exact_rule(np.ascontiguousarray(X1.T), np.zeros(n + 1), y1, "squared", radius)
    assert np.abs(R1 - R0).max() > 3 * paper_sensitivity("squared", radius, 2)


# -- screening: noise calibration and (non-private) safety ------------------------------------

def test_screen_plan_follows_001_and_composes():
    eps2, delta2, k = 2.5, 1 / 6000, 1000
    e, dl = paper_iteration_budget(eps2, delta2, k)
    assert dl == pytest.approx(delta2 / (k + 1))
    assert e == pytest.approx(eps2 / (2 * math.sqrt(2 * k * math.log(1 / dl))))
    plan = screen_plan(eps2, delta2, k, "squared", 5.0, 601)
    assert plan.composition == "advanced (001)" and plan.eps_iter == pytest.approx(e)
    tot_e, tot_d = advanced_composition(plan.eps_iter, plan.delta_iter, k, plan.delta_iter)
    assert tot_e <= eps2 and tot_d == pytest.approx(delta2)
    s = plan.sensitivity
    assert s == pytest.approx(math.sqrt(36 * (601 + 25) + 625))
    classic = math.sqrt(2 * s ** 2 * math.log(1.25 / dl) / e ** 2)     # 001's sigma^2 formula
    assert plan.sigma_classic == pytest.approx(classic)
    assert plan.sigma == pytest.approx(analytic_gaussian_sigma(s, e, dl)) and plan.sigma < classic
    last = screen_plan(eps2, delta2, 1, "squared", 5.0, 601)        # one release: basic wins
    assert last.composition == "basic" and last.eps_iter == eps2


def test_private_screener_charges_each_release_at_the_planned_noise():
    X, y = _unit_data(200, 3, 10)
    Xt = np.ascontiguousarray(X.T)
    plan = screen_plan(1.0, 1e-5, 3, "squared", 1.0, 4)
    led = Ledger()
    scr = PrivateScreener(Xt, "squared", 1.0, plan, np.random.default_rng(0), led)
    g, r = K.loss_gradient(Xt, np.zeros(200), y, "squared")
    for _ in range(3):
        assert scr(np.zeros(200), g, r).shape == (4,)
    details = [c.detail for c in led.charges]
    assert f"sigma {plan.sigma_first:.4g}" in details[0]
    assert all(f"sigma {plan.sigma:.4g}" in dd for dd in details[1:])
    assert all(c.eps == plan.eps_iter and c.delta == plan.delta_iter for c in led.charges)


def test_exact_rule_is_safe_and_screens_something():
    rng = np.random.default_rng(11)
    n, d = 400, 8
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, size=(n, d))])
    y = np.clip(0.7 * X[:, 1] - 0.2 * X[:, 2] + 0.05 * rng.normal(size=n), -1, 1)
    radius = 0.6
    w_star = _pgd(X, y, "squared", radius)
    Xt = np.ascontiguousarray(X.T)
    w, mask = frank_wolfe(Xt, y, loss="squared", radius=radius, T=400, choose=np.argmin,
                          screen_at=range(1, 401), screener=ExactScreener(Xt, "squared", radius),
                          protect=0)
    assert mask.sum() >= d - 3                                  # most null features go
    assert not mask[np.abs(w_star) > 1e-6].any()                # never a true non-zero
    assert not mask[0]


# -- validation: errors before anything is charged ---------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(loss="poisson"), dict(radius=0.0), dict(radius=float("inf")), dict(T=0), dict(T=2.5),
    dict(screen="sometimes"), dict(screen=0), dict(screen=10_000), dict(screen_share=1.0),
    dict(bounds_share=0.0), dict(bounds="wide"), dict(bounds=(1.0, -1.0)),
    dict(bounds_mode="rows"), dict(q=0.7), dict(intercept_col=9), dict(delta=0.0, screen=5),
    dict(eps=-1.0), dict(delta=1.0), dict(loss="logistic"),
    dict(bounds={"x": {"a": (0, 1)}, "y": "auto"}),
])
def test_validation_errors_charge_nothing(kwargs):
    X, y = _unit_data(100, 3, 12)
    led = Ledger()
    args = dict(eps=1.0, delta=1e-5, T=100, intercept_col=0, names=["Intercept", "a", "b", "c"])
    args.update(kwargs)
    with pytest.raises(ValidationError):
        estimate(X, y, rng=np.random.default_rng(0), ledger=led, **args)
    assert len(led) == 0


def test_bad_data_is_refused_before_any_charge():
    led = Ledger()
    X, y = _unit_data(50, 2, 13)
    for Xb, yb in [(X[:, 0], y), (X, y[:-1]), (np.where(X > 0.9, np.nan, X), y)]:
        with pytest.raises(ValidationError):
            estimate(Xb, yb, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led)
    assert len(led) == 0
