"""The targets of issue 15, computed from a corpus results CSV (run_corpus.py --summary).

Regression (config ``default`` against the others on the same task):

* share of tasks with a positive median test R^2;
* share within 0.03 of the best dpstats configuration (every config but ``ols``);
* share with default >= 0.8 x OLS R^2 (where OLS R^2 <= 0: default >= OLS);
* tasks with n / p_design >= 5,000: default within 0.02 of OLS (default >= OLS - 0.02).

Classification:

* tasks where default >= majority - 0.01 (the target is every task);
* among tasks with n >= 5,000: share with default >= logistic - 0.03 (also shown for the
  issue's "rich" tasks, n >= 5,000 and p_design <= 20).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BASELINES = ("ols", "logistic", "majority")


def _share(mask: pd.Series) -> str:
    return f"{int(mask.sum())}/{len(mask)} = {mask.mean():.0%}" if len(mask) else "0/0"


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    wide = frame.pivot(index="task", columns="config", values="score").astype(float)
    meta = frame.groupby("task")[["n", "p_design"]].first()
    return wide.join(meta)


def regression_targets(frame: pd.DataFrame) -> dict:
    w = _wide(frame)
    private = [c for c in frame.config.unique() if c not in BASELINES]
    d = w["default"]
    out = {"tasks": len(w), "positive": d > 0}
    best = w[private].max(axis=1)
    out["within_best"] = d >= best - 0.03
    out["best_config"] = w[private].idxmax(axis=1)
    if "ols" in w:
        ols = w["ols"]
        out["ratio_ols"] = np.where(ols > 0, d >= 0.8 * ols, d >= ols)
        rich = w.n / w.p_design.clip(lower=1) >= 5000
        out["rich"] = (d >= ols - 0.02)[rich]
    return out


def classification_targets(frame: pd.DataFrame) -> dict:
    w = _wide(frame)
    d = w["default"]
    out = {"tasks": len(w)}
    if "majority" in w:
        out["vs_majority"] = d >= w["majority"] - 0.01
    if "logistic" in w:
        big = w.n >= 5000
        out["big_vs_logistic"] = (d >= w["logistic"] - 0.03)[big]
        rich = big & (w.p_design <= 20)
        out["rich_vs_logistic"] = (d >= w["logistic"] - 0.03)[rich]
    return out


def _per_config(frame: pd.DataFrame) -> None:
    g = frame.groupby("config")
    table = pd.DataFrame({
        "median_score": g.score.median(),
        "tasks_positive": g.score.apply(lambda s: int((s > 0).sum())),
        "tasks": g.score.size(),
        "fits_withheld": g.n_withheld.sum(),
        "fits_error": g.n_error.sum(),
        "sec_per_fit_median": g.sec_per_fit.median(),
        "seconds_total": g.seconds.sum(),
    })
    print(table.round(3).to_string())


def print_summary(frame: pd.DataFrame, label) -> None:
    """Print the targets of each kind found in ``frame``."""
    for kind in sorted(frame.kind.unique()):
        part = frame[frame.kind == kind]
        print(f"\n== {kind} targets ({label}) ==")
        if "default" not in set(part.config):
            print("no 'default' rows: nothing to compare")
            continue
        if kind == "regression":
            t = regression_targets(part)
            print(f"default positive median test R^2: {_share(t['positive'])} (target >= 90%)")
            print(f"default within 0.03 of the best dpstats config: "
                  f"{_share(t['within_best'])} (target >= 85%)")
            missed = t["best_config"][~t["within_best"]]
            if len(missed):
                print("  best config where the default misses: "
                      + ", ".join(f"{k}={v}" for k, v in missed.items()))
            if "ratio_ols" in t:
                print(f"default >= 0.8 x OLS R^2: "
                      f"{_share(pd.Series(t['ratio_ols']))} (target >= 75%)")
                miss = t["rich"][~t["rich"]]
                print(f"n/p >= 5,000, default within 0.02 of OLS: {_share(t['rich'])} "
                      f"(tasks: {', '.join(t['rich'].index) or 'none'}"
                      + (f"; misses: {', '.join(miss.index)})" if len(miss) else ")"))
        else:
            t = classification_targets(part)
            if "vs_majority" in t:
                miss = t["vs_majority"][~t["vs_majority"]]
                print(f"default >= majority - 0.01: {_share(t['vs_majority'])} (target: all)"
                      + (f"; misses: {', '.join(miss.index)}" if len(miss) else ""))
            if "big_vs_logistic" in t:
                print(f"n >= 5,000: default within 0.03 of logistic: "
                      f"{_share(t['big_vs_logistic'])} (target >= 70%)")
                print(f"n >= 5,000 and p <= 20: default within 0.03 of logistic: "
                      f"{_share(t['rich_vs_logistic'])}")
        _per_config(part)
