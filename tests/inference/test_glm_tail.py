"""The private box's cut tails in dp_glm's intervals (dpstats.estimators.inference.glm_tail).

What is checked: the released histograms are kept on the design's bounds for the columns whose
box they gave (none for public bounds); a side of noise only gives no move; the tail's score
reads released values only (a broken
variant reading the rows is caught); with noise-free counts the move ``C^-1 g`` is close to the
clipped fit's coefficients minus the model's (statsmodels on the same rows); the intervals of
a skewed design change with it and those of a public box do not. Coverage is measured by
benchmarks/glm_coverage.py (covariates=skewed: the intercept covered 0.887 without the move;
a few hundred fits per variant are needed to tell them apart, too slow for a unit test).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import statsmodels.api as sm

from dpstats.estimators import objpert
from dpstats.estimators.bounded import bounded_design, gaussian_hist_release, plan_bounds
from dpstats.estimators.bounds_release import HistCounts
from dpstats.estimators.inference import glm as inf_glm
from dpstats.estimators.inference import glm_tail
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.gdp import log_histograms


def _skewed(n: int, seed: int, beta=(-0.5, 1.0)):
    """A centred, scaled log-normal covariate (sigma 1) and a logistic label."""
    rng = np.random.default_rng(seed)
    z = np.exp(rng.normal(size=n))
    x = (z - np.exp(0.5)) / np.sqrt((np.e - 1.0) * np.e)
    X = np.c_[np.ones(n), x]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ np.asarray(beta)))).astype(float)
    return X, y


def _design(X, y, bounds="auto", eps=0.25, seed=0):
    plan = plan_bounds(X, bounds, intercept_col=0, label=False)
    rel = gaussian_hist_release(eps, 1e-6, np.random.default_rng(seed), Ledger(), stage="t")
    return bounded_design(X, y, plan, rel if plan.private else None)


def test_histograms_are_kept_for_private_boxes_only():
    X, y = _skewed(5_000, 1)
    d = _design(X, y)
    assert isinstance(d.bounds.hist, HistCounts) and d.bounds.hist.cols == {1: 0}
    assert d.bounds.hist.sigma > 0
    assert _design(X, y, bounds=(-2, 8)).bounds.hist is None


def _inputs(d, theta):
    kept = list(d.kept)
    s = np.sqrt(len(kept))
    U = d.X[:, kept] / s
    w = 1 / (1 + np.exp(-U @ theta))
    return kept, s, U.T @ (U * (w * (1 - w))[:, None])


def test_tail_score_reads_released_values_only(monkeypatch):
    """Same released box and counts, different rows: the same score. A variant that reads
    the rows (the unreleased cut tail) is caught by the same check."""
    monkeypatch.setattr(glm_tail, "TAIL_Z", 0.0)     # every side enters (the gate is below)
    X, y = _skewed(20_000, 2)
    d = _design(X, y)
    theta = np.array([1.0, -0.3])
    kept, s, C = _inputs(d, theta)
    other = replace(d, X=np.clip(d.X + 0.3, -1, 1))

    def broken(design, kept, s, C, theta):
        g = glm_tail.tail_score(design, kept, s, C, theta)
        return g + design.X[:, kept].mean(axis=0)[None, :]     # reads the rows

    for fn, same in ((glm_tail.tail_score, True), (broken, False)):
        a, b = fn(d, kept, s, C, theta), fn(other, kept, s, C, theta)
        assert np.allclose(a, b) is same


def test_a_side_of_noise_only_is_left_out():
    """Counts beyond the box that do not clear TAIL_Z sd of their noise give no move; a tail
    of a few hundred rows does (here with a noise sd of 5)."""
    X, y = _skewed(20_000, 4)
    d = _design(X, y, bounds=(-1.3, 2.5))
    theta = np.array([1.0, -0.3])
    kept, s, C = _inputs(d, theta)
    noise = np.zeros((1, log_histograms(X[:, 1:]).shape[1]))
    d0 = replace(d, bounds=replace(d.bounds, hist=HistCounts(noise, 40.0, {1: 0})))
    assert glm_tail.tail_score(d0, kept, s, C, theta) is None
    d1 = replace(d, bounds=replace(d.bounds, hist=HistCounts(log_histograms(X[:, 1:]), 5.0,
                                                             {1: 0})))
    assert glm_tail.tail_score(d1, kept, s, C, theta).shape == (glm_tail.TAIL_DRAWS, 2)


def test_move_matches_the_clipped_fit_with_exact_counts():
    """Noise-free counts (sigma 0): ``M C^-1 g`` against statsmodels' clipped fit minus its
    unclipped fit on the same 200,000 rows (the sampling error cancels)."""
    X, y = _skewed(200_000, 3)
    d = _design(X, y, bounds=(-1.3, 2.5))                 # a box as the release gives at
    d = replace(d, bounds=replace(d.bounds, hist=HistCounts(log_histograms(X[:, 1:]), 0.0,
                                                            {1: 0})))   # 20,000 rows
    lo, hi = d.clip_lo[1], d.clip_hi[1]
    assert (X[:, 1] > hi).mean() > 0.005                   # the box cuts the tail
    full = sm.Logit(y, X).fit(disp=0).params
    Xc = np.c_[np.ones(len(y)), np.clip(X[:, 1], lo, hi)]
    clipped = sm.Logit(y, Xc).fit(disp=0).params
    kept, s, _ = _inputs(d, np.zeros(2))
    M = inf_glm.fitted_map(lambda t: objpert.to_original(d, t, s), kept, 2)
    theta = np.linalg.solve(M, full)                        # the model on the fitted scale
    kept, s, C = _inputs(d, theta)
    g = glm_tail.tail_score(d, kept, s, C, theta, draws=1)
    move = M @ glm_tail.tail_bias(C[None], g)[0]
    truth = clipped - full
    assert np.all(np.sign(move) == np.sign(truth))
    assert np.allclose(move, truth, rtol=0.35)


def _fit(X, y, monkeypatch, broken: bool, bounds="auto"):
    if broken:        # the cut tail left out of the intervals
        monkeypatch.setattr(inf_glm, "tail_score", lambda *a, **k: None)
    est = objpert.estimate(X, y, eps=1.0, delta=1e-5, rng=np.random.default_rng(7),
                           intercept_col=0, bounds=bounds)
    monkeypatch.undo()
    return est


def test_the_cut_tail_moves_the_intervals_only_where_a_private_box_cut(monkeypatch):
    """Five skewed covariates at 20,000 rows (benchmarks/glm_coverage.py's skewed cell):
    the intercept's interval changes (it holds the cut tail's move beside the ridge's
    shrinkage, which point the other way: wider or narrower), the point estimate does not
    move (post-processing); with public bounds nothing changes."""
    rng = np.random.default_rng(11)
    z = np.exp(0.75 * rng.normal(size=(20_000, 5)))
    X = np.c_[np.ones(20_000), (z - z.mean(0)) / z.std(0)]
    beta = np.r_[-0.5, 0.6, -0.55, 0.5, -0.45, 0.4]
    y = (rng.uniform(size=20_000) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    a, b = _fit(X, y, monkeypatch, False), _fit(X, y, monkeypatch, True)
    assert np.array_equal(a.params, b.params)
    assert abs(a.inference.cov[0, 0] / b.inference.cov[0, 0] - 1.0) > 0.05
    a, b = (_fit(X, y, monkeypatch, br, bounds=(-1.5, 3.0)) for br in (False, True))
    assert np.array_equal(a.inference.cov, b.inference.cov)


def test_the_plausible_tails_spread_is_tail_spread_times_the_counts_noise(monkeypatch):
    """The move's estimate errs by about twice the counts' noise (design-notes.md, "the cut
    tail's fits centred"): the plausible scores scatter about the released counts' score by
    TAIL_SPREAD (2) times what the counts' noise alone gives (1: the rule before)."""
    X, y = _skewed(20_000, 4)
    d = _design(X, y, bounds=(-1.3, 2.5))
    d = replace(d, bounds=replace(d.bounds, hist=HistCounts(log_histograms(X[:, 1:]), 5.0,
                                                            {1: 0})))
    theta = np.array([1.0, -0.3])
    kept, s, C = _inputs(d, theta)
    g = glm_tail.tail_score(d, kept, s, C, theta)
    monkeypatch.setattr(glm_tail, "TAIL_SPREAD", 1.0)
    g1 = glm_tail.tail_score(d, kept, s, C, theta)
    exact = glm_tail.tail_score(replace(d, bounds=replace(
        d.bounds, hist=replace(d.bounds.hist, sigma=0.0))), kept, s, C, theta, draws=1)
    assert glm_tail.TAIL_SPREAD == 1.0 and np.allclose(g1.mean(0), exact[0], rtol=0.05)
    assert np.allclose(g - exact, 2.0 * (g1 - exact))
