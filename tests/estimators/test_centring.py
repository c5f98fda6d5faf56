"""Private centring for the Tukey mechanism:
private_centre_value (1-D Tukey depth on a fine grid, what centre="auto" now releases), the
centre= option of the Tukey estimator (public array, "auto", None) and its budget, a regression
on a feature far from zero, and the per-group kernel's handling of within-group constant
columns."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats._kernels.tukey import group_ols, group_ols_reference
from dpstats.errors import PrivacyParameterError, ValidationError
from dpstats.estimators.tukey.centre import CENTRE_SHARE, private_centre
from dpstats.estimators.tukey.linear import MIN_MODELS, estimate, jitter_sort
from dpstats.mechanisms import private_centre_value
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.centre import centre_grid

HUGE = 1e6


# ---- private_centre_value and private_centre (what centre="auto" releases) -----------------------

def test_centre_grid_is_fine_sorted_symmetric_with_zero():
    g = centre_grid()
    assert np.all(np.diff(g) > 0) and 0.0 in g
    np.testing.assert_array_equal(g, -g[::-1])
    pos = g[g > 0]
    assert np.max(pos[1:] / pos[:-1]) - 1 <= 1 / 1024 + 1e-12
    assert -120.0 in g and 2010.0 in g and 1.0 in g


@pytest.mark.parametrize(("loc", "scale"), [(-120.0, 2.0), (2010.0, 3.0), (0.0, 1.0),
                                            (3.0, 0.1)])
def test_huge_eps_centre_has_the_largest_one_dimensional_depth(loc, scale):
    v = np.random.default_rng(int(abs(loc))).normal(loc, scale, 4001)
    c = private_centre_value(v, HUGE, np.random.default_rng(0))
    g = centre_grid()
    assert c in g
    vs = np.sort(v)

    def depth(points):
        points = np.atleast_1d(points)
        return np.minimum(np.searchsorted(vs, points, side="right"),
                          v.size - np.searchsorted(vs, points, side="left"))

    inside = g[(g >= vs[0]) & (g <= vs[-1])]
    assert depth(c)[0] == depth(inside).max()          # the deepest public candidate
    assert abs(c - np.median(v)) <= max(abs(loc), 1.0) / 512 + scale / 50


def test_centre_of_a_mostly_constant_column_is_that_value():
    v = np.r_[np.zeros(900), np.ones(100)]
    assert {private_centre_value(v, 1.0, np.random.default_rng(s)) for s in range(20)} == {0.0}
    w = np.r_[np.full(700, 1.0), np.zeros(300)]
    assert private_centre_value(w, 5.0, np.random.default_rng(0)) == 1.0


def test_centre_sampler_matches_the_brute_force_exponential_mechanism():
    # on a small custom grid every candidate's probability is proportional to exp(eps * depth)
    v = np.array([-1.0, 0.0, 0.0, 0.5, 2.0, 2.0, 2.0, 3.5])
    # runs between data values hold 1-3 grid points; 0.5 and 3.5 are data values off the grid
    grid = np.array([-3.0, -1.0, -0.5, 0.0, 0.1, 0.3, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0])
    eps = 0.8
    depth = np.array([min(np.sum(v <= c), np.sum(v >= c)) for c in grid], dtype=float)
    p = np.exp(eps * depth)
    p /= p.sum()
    rng = np.random.default_rng(0)
    draws = np.array([private_centre_value(v, eps, rng, grid=grid) for _ in range(15000)])
    freq = np.array([np.mean(draws == c) for c in grid])
    assert freq.sum() == pytest.approx(1.0)
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / 15000) + 1e-3), (freq, p)


def test_centre_value_ledger_and_errors_charge_nothing():
    led = Ledger()
    private_centre_value(np.arange(10.0), 0.4, np.random.default_rng(0), led, stage="s",
                         what="centre of z")
    (c,) = led.charges
    assert c.mechanism == "exponential" and c.eps == 0.4 and c.delta == 0.0 and c.stage == "s"
    assert c.detail.startswith("centre of z (1-D Tukey depth)")
    assert c.detail.endswith("sensitivity 1, monotone")
    for values, eps, exc in (([1.0, np.nan], 1.0, ValidationError),
                             ([1.0, 2.0], 0.0, PrivacyParameterError),
                             ([1.0, 2.0], -1.0, PrivacyParameterError)):
        led = Ledger()
        with pytest.raises(exc):
            private_centre_value(values, eps, np.random.default_rng(0), led)
        assert len(led) == 0
    # no values (a fit whose rows were all dropped) is not an error: every point scores 0
    led = Ledger()
    c = private_centre_value([], 1.0, np.random.default_rng(0), led)
    assert np.isfinite(c) and c in set(centre_grid()) and len(led) == 1


def test_private_centre_splits_eps_over_non_intercept_columns():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(-120, 2, 3000), np.ones(3000), rng.normal(40, 1, 3000),
                         (rng.random(3000) < 0.2).astype(float)])
    led = Ledger()
    c = private_centre(X, 1, 0.6, np.random.default_rng(1), led, names=["a", "(I)", "b", "d"])
    assert c[1] == 0.0
    assert abs(c[0] + 120.0) < 1.0 and abs(c[2] - 40.0) < 0.5 and c[3] == 0.0
    assert [_name(ch) for ch in led.charges] == ["a", "b", "d"]
    assert all(ch.eps == pytest.approx(0.2) for ch in led.charges)
    assert all(ch.stage == "regression" for ch in led.charges)


# ---- the Tukey estimator's centre= option ------------------------------------------------------

def _name(charge):
    """Column name of a centring charge ("centre of NAME (1-D Tukey depth) ...")."""
    m = re.match(r"centre of (.+) \(1-D Tukey depth\)", charge.detail)
    return m.group(1) if m else None


def _centrings(ledger):
    return [c for c in ledger.charges if _name(c) is not None]


def _far_data(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(-120.0, 2.0, n), rng.normal(50.0, 5.0, n)])
    y = 3.0 + 2.0 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_public_centre_equals_fitting_centred_data_and_mapping_back(seed):
    # groups of ~30 rows are all full rank, where fitting on X - c and re-parametrising the
    # raw fits at c (what the estimator does) agree
    X, y = _far_data(seed=seed)
    X0 = X.copy()
    c = np.array([999.0, -118.0, 52.0])        # the intercept entry is ignored
    led_a, led_b = Ledger(), Ledger()
    a = estimate(X, y, eps=20.0, delta=1e-5, rng=np.random.default_rng(seed), ledger=led_a,
                 m=200, intercept_col=0, centre=c)
    c0 = np.array([0.0, -118.0, 52.0])
    b = estimate(X - c0, y, eps=20.0, delta=1e-5, rng=np.random.default_rng(seed),
                 ledger=led_b, m=200, intercept_col=0, centre=None)
    assert a.released and b.released
    by_hand = b.params.copy()
    by_hand[0] -= c0 @ by_hand                  # intercept -= c . slopes
    np.testing.assert_allclose(a.params, by_hand, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(a.details["centre"], c0)
    assert "centre" not in b.details
    assert [(ch.mechanism, ch.eps, ch.delta) for ch in led_a.charges] == \
        [(ch.mechanism, ch.eps, ch.delta) for ch in led_b.charges]
    assert _centrings(led_a) == []              # a public centre costs nothing
    assert led_a.spent == pytest.approx((20.0, 1e-5), rel=1e-12)
    np.testing.assert_array_equal(X, X0)        # the caller's data is not modified
    assert c[0] == 999.0                        # nor the caller's centre
    assert np.all(np.abs(a.params - [3.0, 2.0, -0.5]) <= [3.0, 0.03, 0.03]), a.params


def test_centre_reparametrises_each_raw_group_fit_at_c(monkeypatch):
    # even with rank-deficient groups (2 rows on average, p = 3) the models handed to the depth
    # computation are the raw fits with intercept + c . slopes, and nothing else changes
    import dpstats.estimators.tukey.linear as tukey
    seen = []

    def spy(models, rng, *args):
        seen.append(models.copy())
        return jitter_sort(models, rng, *args)

    monkeypatch.setattr(tukey, "jitter_sort", spy)
    X, y = _far_data(n=2000)
    c = np.array([0.0, -118.0, 52.0])
    for centre in (c, None):
        estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(3), m=1000,
                 intercept_col=0, centre=centre)
    centred, raw = seen
    expected = raw.copy()
    expected[:, 0] += raw @ c
    np.testing.assert_allclose(centred, expected, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(centred[:, 1:], raw[:, 1:])


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_auto_centre_charges_p_minus_one_centres_within_the_stage_eps(eps):
    X, y = _far_data()
    X = np.column_stack([X, np.random.default_rng(9).integers(0, 2, X.shape[0])])
    led = Ledger()
    est = estimate(X, y, eps=eps, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=600,
                   intercept_col=0, centre="auto", names=["Intercept", "u", "v", "d"],
                   stage="regression")
    cen = _centrings(led)
    assert len(cen) == X.shape[1] - 1 == 3
    assert [_name(c) for c in cen] == ["u", "v", "d"]
    assert math.fsum(c.eps for c in cen) == pytest.approx(CENTRE_SHARE * eps, rel=1e-12)
    assert all(c.eps == pytest.approx(CENTRE_SHARE * eps / 3, rel=1e-12) for c in cen)
    assert all(c.delta == 0.0 and c.stage == "regression" for c in cen)
    assert led.spent == pytest.approx((eps, 1e-5), rel=1e-12)
    assert led.charges[: len(cen)] == tuple(cen)       # centres first, then PTR and mechanism
    assert est.details["centre"][0] == 0.0 and np.all(est.details["centre"][1:3] != 0.0)


def test_auto_centre_budget_is_spent_even_when_ptr_fails():
    X, y = _far_data(n=400)
    led = Ledger()
    est = estimate(X, y, eps=0.05, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=100,
                   intercept_col=0, centre="auto")
    assert not est.released and est.withheld == "ptr_failed"
    assert len(_centrings(led)) == 2
    assert led.spent == pytest.approx((0.05, 1e-5), rel=1e-12)


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"intercept_col": None, "centre": "auto"}, "no intercept to absorb the shift"),
    ({"intercept_col": 0, "centre": None}, "centring switched off"),
])
def test_no_centring_charges_nothing_for_it(kwargs, why):
    X, y = _far_data()
    led = Ledger()
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led, m=600,
                   **kwargs)
    assert _centrings(led) == [], why
    assert "centre" not in est.details
    assert led.spent == pytest.approx((1.0, 1e-5), rel=1e-12)


def test_intercept_only_design_is_not_centred():
    n = 2000
    y = np.random.default_rng(0).normal(7.0, 1.0, n)
    led = Ledger()
    est = estimate(np.ones((n, 1)), y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0),
                   ledger=led, m=400, intercept_col=0, centre="auto",
                   inference_share=0.0)     # (this seed's PTR test needs the whole stage)
    assert _centrings(led) == [] and "centre" not in est.details
    assert est.released and abs(est.params[0] - 7.0) < 0.5


def test_too_few_models_charges_nothing_not_even_centres():
    X, y = _far_data(n=100)
    led = Ledger()
    est = estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=led,
                   m=MIN_MODELS - 1, intercept_col=0, centre="auto")
    assert not est.released and est.withheld == "too_few_models" and len(led) == 0


# ---- a feature far from zero ----------------------------------------------------------------

def _uncentred(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(-120.0, 2.0, n)
    return pd.DataFrame({"x": x, "y": 3.0 + 2.0 * x + rng.normal(size=n)})


@pytest.fixture(scope="module")
def far_frame():
    return _uncentred(40000, 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_dp_lm_on_a_far_feature_fits_well_on_the_original_scale(far_frame, seed):
    fit = dp.dp_lm("y ~ x", far_frame, eps=2.0, random_state=seed)
    assert fit.released
    test = _uncentred(5000, 100 + seed)
    assert fit.score(test) > 0.9
    a, b = fit.params["Intercept"], fit.params["x"]
    assert abs(b - 2.0) < 0.1
    assert abs(a - 3.0) < 15.0                         # not the centred-scale intercept (-237)
    assert abs(a + b * -120.0 - (3.0 + 2.0 * -120.0)) < 0.5
    led = fit.ledger
    cen = led[led.detail.str.startswith("centre of x (1-D Tukey depth)")]
    assert len(cen) == 1 and cen.stage.iloc[0] == "regression"
    assert cen.eps.iloc[0] == pytest.approx(CENTRE_SHARE * fit.split["regression"], rel=1e-12)
    # the regression budget holds the Tukey stage and its standard errors ("inference")
    assert led.loc[led.stage.isin(["regression", "inference"]), "eps"].sum() == pytest.approx(
        fit.split["regression"], rel=1e-12)
    assert fit.spent == pytest.approx((2.0, 1e-5), rel=1e-12)


def test_centring_is_what_makes_the_far_feature_fit_work(far_frame):
    # same estimator, same many small groups (as dp_lm's m), with and without centring; every
    # group votes on every coefficient (identify="off"): with identification-aware votes
    # (issue 15) the groups of 0-1 rows, which identify neither coefficient, no longer vote,
    # and that alone makes the uncentred fit work here (R^2 0.9414 against 0.78-0.92)
    X = np.column_stack([np.ones(len(far_frame)), far_frame.x.to_numpy()])
    y = far_frame.y.to_numpy()
    test = _uncentred(5000, 7)

    def r2(params):
        pred = params[0] + params[1] * test.x.to_numpy()
        resid = test.y.to_numpy() - pred
        return 1 - resid @ resid / np.sum((test.y - test.y.mean()) ** 2)

    scores = {"auto": [], None: []}
    for centre in scores:
        for s in range(3):
            est = estimate(X, y, eps=1.9, delta=1e-5, rng=np.random.default_rng(s), m=10000,
                           intercept_col=0, centre=centre, identify="off")
            assert est.released
            scores[centre].append(r2(est.params))
    assert min(scores["auto"]) > 0.93
    assert np.mean(scores[None]) < np.mean(scores["auto"]) - 0.03


# ---- the group kernel: a within-group constant dummy ---------------------------------------------

def _dummy_design(seed=0):
    rng = np.random.default_rng(seed)
    sizes = [40, 35, 50, 30, 45]
    labels = np.repeat(np.arange(5), sizes).astype(np.int64)
    n = labels.size
    x = rng.normal(10.0, 3.0, n)
    d = rng.integers(0, 2, n).astype(float)          # group 4: mixed
    d[labels == 0] = 1.0                             # constant 1
    d[labels == 1] = 0.0                             # constant 0
    d[labels == 2] = 1e-3                            # constant and small (would explode)
    d[labels == 3] = 1.0
    X = np.column_stack([np.ones(n), x, d])
    y = 4.0 - 1.5 * x + 2.0 * d + rng.normal(size=n)
    return X, y, labels


def test_within_group_constant_dummy_gets_zero_and_intercept_is_ols_without_it():
    X, y, labels = _dummy_design()
    got = group_ols(X, y, labels, 5)
    np.testing.assert_allclose(got, group_ols_reference(X, y, labels, 5), rtol=1e-9,
                               atol=1e-12)
    for g in range(4):
        rows = labels == g
        assert got[g, 2] == 0.0
        direct = np.linalg.lstsq(X[rows][:, :2], y[rows], rcond=None)[0]
        np.testing.assert_allclose(got[g, :2], direct, rtol=1e-9)
    rows = labels == 4                                # mixed dummy: ordinary OLS
    np.testing.assert_allclose(got[4], np.linalg.lstsq(X[rows], y[rows], rcond=None)[0],
                               rtol=1e-9)
    assert abs(got[4, 2] - 2.0) < 1.5


def test_constant_dummy_before_the_slope_column_and_two_constant_dummies():
    X, y, labels = _dummy_design(1)
    d2 = (labels % 2).astype(float)                   # constant in every group
    X2 = np.column_stack([X[:, 0], X[:, 2], d2, X[:, 1]])
    got = group_ols(X2, y, labels, 5)
    np.testing.assert_allclose(got, group_ols_reference(X2, y, labels, 5), rtol=1e-9,
                               atol=1e-12)
    assert np.all(got[:, 2] == 0.0)
    for g in range(4):
        rows = labels == g
        assert got[g, 1] == 0.0
        direct = np.linalg.lstsq(X2[rows][:, [0, 3]], y[rows], rcond=None)[0]
        np.testing.assert_allclose(got[g, [0, 3]], direct, rtol=1e-9)


def test_constant_dummy_does_not_blow_up_the_intercept_through_centring():
    # a dummy shifted by a centre near 1 is a small non-zero constant (1 - c) in a group where
    # it is constant; unscaled it would take intercept / (2 (1 - c)) and explode; the group's
    # intercept must still be its OLS intercept without that column
    X, y, labels = _dummy_design(2)
    c = np.array([0.0, 10.0, 0.999])
    got = group_ols(X - c, y, labels, 5)
    for g in (0, 3):
        rows = labels == g
        direct = np.linalg.lstsq((X - c)[rows][:, :2], y[rows], rcond=None)[0]
        assert got[g, 2] == 0.0
        np.testing.assert_allclose(got[g, :2], direct, rtol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_grid_positions_equal_searchsorted_for_few_and_many_values(seed):
    from dpstats.mechanisms.centre import _grid_positions
    rng = np.random.default_rng(seed)
    g = centre_grid()
    for size in (3, g.size // 4 + 1, 200_000):
        v = rng.standard_normal(size) * 10.0 ** rng.integers(-30, 30)
        v = np.r_[np.round(v, 2), g[rng.integers(0, g.size, 50)]]   # ties and grid points
        u = np.unique(v)
        left, right = _grid_positions(g, u)
        np.testing.assert_array_equal(left, np.searchsorted(g, u, side="left"))
        np.testing.assert_array_equal(right, np.searchsorted(g, u, side="right"))

