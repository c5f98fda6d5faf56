"""The logistic Tukey intervals on designs with 0/1 columns and factors
(estimators/inference/tukey_glm.py): a column whose released scale is 0 takes the dummy's
public scale for the weighted moments, a declared factor's fit releases every interval, groups
count only where they identify, and the gate's reason quotes the logistic groups' floor."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.estimators.inference import tukey as tinf
from dpstats.estimators.inference import tukey_glm as tg
from dpstats.estimators.tukey.glm import fit_logistic_models
from dpstats.mechanisms.accountant import Ledger

BETA = np.array([-0.5, 0.6, -0.6, 0.5, 0.4])


def _frame(n: int, kind: str, seed: int = 0) -> pd.DataFrame:
    """Four covariates, logistic label: ``binary`` all numeric 0/1 (rate 0.3), ``factor``
    Gaussian with the last a declared two-level factor (30% ``b``)."""
    g = np.random.default_rng(seed)
    X = (g.uniform(size=(n, 4)) < 0.3).astype(float) if kind == "binary" else \
        g.normal(size=(n, 4))
    if kind == "factor":
        X[:, 3] = g.uniform(size=n) < 0.3
    eta = BETA[0] + X @ BETA[1:]
    df = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    if kind == "factor":
        df["x3"] = pd.Categorical(np.where(X[:, 3] > 0.5, "b", "a"), categories=["a", "b"])
    df["y"] = (g.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


def _spy_spread(monkeypatch) -> dict:
    """Record the models, the point and the windows the window counts see."""
    seen = {}
    real = tg.model_spread

    def spy(B, theta, w, eps, rng, ledger, ident=None):
        seen.update(B=np.array(B), theta=np.array(theta), w=np.array(w), ident=ident)
        return real(B, theta, w, eps, rng, ledger, ident)
    monkeypatch.setattr(tg, "model_spread", spy)
    return seen


def test_zero_scale_columns_take_the_dummy_scale(monkeypatch):
    """0/1 columns (rate 0.3, centre 0): their released median |x - c| is 0; the weighted
    moments then scale them by the dummy's public scale (a one reaches 2.97 of the clip 3),
    not by 1 (a one at 1: a ninth of the signal, under the moments' noise at eps 1)."""
    got = {}
    real = tg.weighted_moments

    def spy(X, w, centre, scale, eps, rng, ledger, **kw):
        got["scale"] = np.array(scale)
        return real(X, w, centre, scale, eps, rng, ledger, **kw)
    monkeypatch.setattr(tg, "weighted_moments", spy)
    g = np.random.default_rng(1)
    n, m = 20_000, 200
    X = np.c_[np.ones(n), (g.uniform(size=(n, 2)) < 0.3)]
    point = np.array([-0.5, 0.6, -0.6])
    V = tg._group_covariance(X, point, np.zeros(3), np.array([1.0, 0.0, 0.0]), 0, float(n), m,
                             1e9, g, None)
    assert got["scale"] == pytest.approx([tinf.DUMMY_SCALE] * 2)
    w = 1 / (1 + np.exp(-X @ point))
    w *= 1 - w                                   # noise-free: the group fits' covariance
    exact = np.linalg.inv((X * w[:, None]).T @ X / n) * m / n
    # the moments are exact sums on a grid of 2^-20 of the bound (dpstats._kernels.row_sums):
    # a few distinct values round the same way, and the inverse amplifies it
    assert V == pytest.approx(exact, rel=1e-4)


def test_binary_columns_windows_hold_the_models(monkeypatch):
    """All-0/1 covariates at n = 1e5, eps = 1: every window holds 20-80% of the group fits and
    every coefficient gets an interval (before: windows of 2.6-2.8 against model deviations
    of 0.4 for two slopes, 97-100% of the models inside, no interval for them or the
    intercept)."""
    seen = _spy_spread(monkeypatch)
    fit = dp.dp_glm("y ~ x0 + x1 + x2 + x3", _frame(100_000, "binary"), eps=1.0,
                    method="tukey", select=None, random_state=0)
    inside = (np.abs(seen["B"] - seen["theta"]) <= seen["w"]).mean(axis=0)
    assert ((inside > 0.2) & (inside < 0.8)).all(), inside
    assert np.isfinite(fit.bse).all(), fit.inference.method


def test_declared_factor_releases_every_interval(monkeypatch):
    """A declared two-level factor (identify='regroup', the default with a factor) at
    n = 1e5, eps = 1: every coefficient, the dummy included, gets an interval; the identifying
    groups are released and passed to the counts; no private scale is spent on the dummy."""
    seen = _spy_spread(monkeypatch)
    fit = dp.dp_glm("y ~ x0 + x1 + x2 + x3", _frame(100_000, "factor"), eps=1.0,
                    method="tukey", select=None, random_state=0)
    assert fit.released and np.isfinite(fit.bse).all(), fit.inference.method
    assert np.isfinite(fit.cov_params().to_numpy()).all()
    assert (np.abs(fit.params.to_numpy() - BETA) < 5 * fit.bse.to_numpy()).all()
    assert seen["ident"] is not None and seen["ident"][1].all()
    detail = fit.ledger.detail
    assert detail.str.contains("groups identifying").any()
    assert not detail.str.contains(r"scale of x3\[T.b\]").any()
    assert detail.str.contains("scale of x0").any()


def test_logistic_groups_count_only_where_they_identify(monkeypatch):
    """Groups that do not identify a coordinate are left out of its window count, and a
    coordinate where every group votes gets no interval (the shared rule of dp_lm's Tukey)."""
    seen = {}
    real = tinf.window_counts

    def spy(D, w, eps, rng, ledger=None, **kw):
        seen["D"] = D
        return real(D, w, eps, rng, ledger, **kw)
    monkeypatch.setattr(tinf, "window_counts", spy)
    g = np.random.default_rng(0)
    n, m = 60_000, 300
    X = np.c_[np.ones(n), g.normal(size=(n, 2))]
    y = (g.uniform(size=n) < 1 / (1 + np.exp(-X @ [-0.5, 0.6, -0.6]))).astype(float)
    models = fit_logistic_models(X, y, m, g, 1e-6)
    ident = np.ones((m, 3), dtype=bool)
    ident[: m // 10, 2] = False
    plan = tinf.InferencePlan(0.08 * 50.0, 0.08)
    inf = tg.glm_tukey_inference(X, y, models, np.median(models, axis=0), None, 0, plan=plan,
                                 n_hat=float(n), multiplier=1.0, monotone=False, rng=g,
                                 ledger=None, names=["Intercept", "x", "z"],
                                 ident=(ident, np.array([True, True, False])))
    assert np.isinf(seen["D"][: m // 10, 2]).all() and np.isfinite(seen["D"][:, :2]).all()
    se = np.sqrt(np.diag(inf.cov))
    assert np.isfinite(se[:2]).all() and np.isnan(se[2])


def test_gate_reasons_quote_ten_rows_per_column():
    """The logistic gate's reasons (before the fit, and after a regroup below the gate, whose
    reserved share is forfeited) say 10 rows per column per group, not the linear 5."""
    plan = tg.plan_glm_inference(0.08, 0.9, 1109, 6, "regroup", False, 1e5)
    assert plan.eps == 0 and "at least 10 rows per column" in plan.reason
    assert "100,020 rows" in plan.reason
    led = Ledger()
    X = np.c_[np.ones(50), np.arange(50.0)]
    inf = tg.glm_tukey_inference(X, X[:, 1] > 20, np.zeros((100, 2)), np.zeros(2), None, 0,
                                 plan=tinf.InferencePlan(0.08, 0.08), n_hat=50.0,
                                 multiplier=1.0, monotone=False, rng=np.random.default_rng(0),
                                 ledger=led)
    assert np.isnan(inf.cov).all() and "at least 10 rows per column" in inf.method
    assert led.spent[0] == pytest.approx(0.08)
