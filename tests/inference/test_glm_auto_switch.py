"""benchmarks/glm_auto_switch.py's rule search (pure functions on a made-up table), and that its
forced fits are what ``method="auto"`` runs (the same released count and regression budget)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from benchmark_script import load_benchmark

from dpstats.estimators import glm_auto

sw = load_benchmark("glm_auto_switch.py")


def _table(crossover: float, acc_obj: float = 0.8) -> pd.DataFrame:
    """Made-up per-rep rows: objpert's RMSE ``0.2 crossover / (n_hat mu)``, outpert's 0.2;
    objpert is better exactly above ``n_hat mu = crossover``."""
    rows = []
    for n, p, e in itertools.product(sw.GRID["n"], sw.GRID["p"], sw.GRID["eps"]):
        mu = sw.gdp_mu(0.95 * e, 1e-5)
        for r in range(3):
            n_hat = n - 170.0 + r
            rows.append({"n": n, "p": p, "eps": e, "kind": "gaussian", "signal": "weak",
                         "prev": 0.5, "rep": r, "mu": mu, "n_hat": n_hat,
                         "rmse_obj": 0.2 * crossover / (n_hat * mu), "rmse_out": 0.2,
                         "acc_obj": acc_obj, "acc_out": 0.8})
    return pd.DataFrame(rows)


def test_rule_search_finds_the_crossover_and_scores_the_old_rule_worse():
    df = _table(4000.0)
    new, table = sw.derive(df)
    assert (new.C, new.b) == (4000.0, 0.0) and new.fail_cells == 0
    assert sw.score(df, *sw.OLD)["score"] > new.score + 0.05
    assert table.shape[0] == len(sw.C_GRID) * len(sw.B_GRID)


def test_accuracy_guard_excludes_rules_that_lose_accuracy():
    """objpert 0.01 less accurate everywhere: only never choosing it passes the guard."""
    new, _ = sw.derive(_table(4000.0, acc_obj=0.79))
    assert new.C == max(sw.C_GRID) and new.fail_cells > 0      # fewest failing cells
    t = sw.per_cell(_table(4000.0, acc_obj=0.79), 1e9, 0.0)
    assert not t.acc_fail.any() and (t.obj_share == 0).all()


def test_forced_fits_are_auto_fits_with_the_regression_budget(monkeypatch):
    """The script's ``mu`` is the regression stage's (5% of eps on the count) and its forced
    fits share the released count: with the library's constant the choice is the rule's."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 2))
    y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-X @ [1.0, -0.5]))).astype(float)
    df = sw._frame(X, y)
    truth, test = np.array([0.0, 1.0, -0.5]), sw._frame(rng.normal(size=(200, 2)))
    pi = np.full(200, 0.5)
    res = sw.fit_both(df, 1.0, 5, truth, test, pi)
    assert (res["method_obj"], res["method_out"]) == ("objpert", "outpert")
    assert glm_auto.OBJPERT_CONSTANT not in (0.0, 1e12)          # restored
    mu = sw.gdp_mu((1 - sw.N_SHARE) * 1.0, sw.DELTA)
    rule = sw.per_cell(pd.DataFrame([{**res, "n": 3000, "p": 2, "eps": 1.0, "kind": "g",
                                      "signal": "s", "prev": 0.5, "mu": mu}]),
                       glm_auto.OBJPERT_CONSTANT, glm_auto.OBJPERT_POWER).obj_share[0]
    assert glm_auto.choose(res["n_hat"], 3, 0.95, 1e-5)[0] == (
        "objpert" if rule == 1 else "outpert")
    import dpstats as dp
    fit = dp.dp_glm("y ~ x0 + x1", df, eps=1.0, delta=1e-5, select=None, random_state=5)
    assert fit.n_noisy == res["n_hat"]
    assert fit.method == glm_auto.choose(res["n_hat"], 3, 0.95, 1e-5)[0]
