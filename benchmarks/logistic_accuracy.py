"""Accuracy of dp_glm (fw, dpgd, tukey) on two real classification files, beside non-private
statsmodels Logit and the majority-class rate.

Median **test accuracy** over random 90/10 train/test splits at eps in {0.5, 1, 2, 5},
delta = 1e-5, every method at its defaults (select="auto", k=5, bounds="auto": nothing is
tuned). A fit that releases nothing (Tukey's PTR check fails) counts as accuracy -inf, as in
benchmarks/tukey_utility.py, and the number of such fits is shown.

Data (../shared/data/classification/):

* adult.csv.gz (UCI Adult, 48,842 rows): label ``income`` (<=50K / >50K, declared as a
  two-level categorical so >50K is coded 1); ``?`` is read as missing and those rows are
  dropped by the formula. Features: age, workclass, education_num, marital_status,
  occupation, relationship, race, sex, capital_gain, capital_loss, hours_per_week. Left out:
  ``fnlwgt`` (a census sampling weight, not an attribute of the person), ``education`` (the
  same information as ``education_num``) and ``native_country`` (41 levels, most with a
  handful of rows). The ``split`` column (UCI's one fixed train/test split) is dropped: the
  splits here are random 90/10 splits of all rows, as in the regression benchmarks.
* default_credit_card_clients.csv (UCI, 30,000 rows): label ``default`` (0/1), every other
  column a feature.
* breast_cancer_wisconsin.csv (UCI, 569 rows): label ``diagnosis`` (B / M, declared, M coded
  1), the 30 numeric features (``id`` left out).

Category levels are declared (pd.Categorical with the levels listed in the UCI documentation),
so no level is read from the data and no PrivacyLeakWarning is raised.

    python benchmarks/logistic_accuracy.py [--quick] [--trials 10] [--eps 0.5,1,2,5]
        [--methods fw,dpgd,tukey] [--files adult,credit]

``--quick`` runs 2 splits at eps 1 and 5. Writes benchmarks/results/logistic_accuracy.csv.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

from dpstats.api.glm import dp_glm
from dpstats.formula.design import build_design, response_for_new_data

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "classification"
OUT = Path(__file__).resolve().parent / "results"

#: Levels from the UCI documentation (public knowledge, not read from the rows).
ADULT_LEVELS = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "income": ["<=50K", ">50K"],
}
CREDIT_LEVELS = {
    "SEX": ["female", "male"],
    "EDUCATION": ["graduate_school", "university", "high_school", "other"],
    "MARRIAGE": ["married", "single", "other"],
}
ADULT_FORMULA = ("income ~ age + workclass + education_num + marital_status + occupation + "
                 "relationship + race + sex + capital_gain + capital_loss + hours_per_week")
EPS = (0.5, 1.0, 2.0, 5.0)
METHODS = ("auto", "outpert", "objpert", "fw", "dpgd", "tukey")


def _declare(df: pd.DataFrame, levels: dict) -> pd.DataFrame:
    return df.assign(**{c: pd.Categorical(df[c], categories=lv) for c, lv in levels.items()})


def load(name: str) -> tuple[pd.DataFrame, str, str]:
    """(frame, formula, label) for ``"adult"``, ``"credit"`` or ``"breast"``."""
    if name == "breast":
        df = pd.read_csv(DATA / "breast_cancer_wisconsin.csv")
        df = df.drop(columns=[c for c in df.columns if c.lower() == "id"])
        return _declare(df, {"diagnosis": ["B", "M"]}), "diagnosis ~ .", "diagnosis"
    if name == "adult":
        df = pd.read_csv(DATA / "adult.csv.gz", na_values="?").drop(columns=["split"])
        return _declare(df, ADULT_LEVELS), ADULT_FORMULA, "income"
    df = pd.read_csv(DATA / "default_credit_card_clients.csv")
    return _declare(df, CREDIT_LEVELS), "default ~ .", "default"


def _coded(df: pd.DataFrame, label: str) -> pd.DataFrame:
    col = df[label]
    if isinstance(col.dtype, pd.CategoricalDtype):
        return df.assign(**{label: (col == col.cat.categories[1]).astype(float)
                            .where(col.notna())})
    return df


def logit_baseline(formula: str, train: pd.DataFrame, test: pd.DataFrame,
                   label: str) -> tuple[float, float]:
    """Test accuracy of non-private statsmodels Logit and the test majority-class rate."""
    d = build_design(formula, _coded(train, label))
    X_te, y_te = response_for_new_data(d, _coded(test, label))
    ok = d.X.std(axis=0) > 0                       # all-zero dummy columns make it singular
    ok[[i for i, c in enumerate(d.columns) if c == "Intercept"]] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            beta = sm.Logit(d.y, d.X[:, ok]).fit(disp=0, maxiter=100).params
        except np.linalg.LinAlgError:
            beta = sm.Logit(d.y, d.X[:, ok]).fit(disp=0, method="bfgs", maxiter=2000).params
    acc = float(np.mean((X_te[:, ok] @ beta >= 0) == (y_te == 1)))
    return acc, float(max(y_te.mean(), 1 - y_te.mean()))


def run(files, trials: int, eps_list, methods) -> pd.DataFrame:
    rows = []
    for name in files:
        df, formula, label = load(name)
        for trial in range(trials):
            rng = np.random.default_rng(2024 + trial)
            idx = rng.permutation(len(df))
            cut = int(0.9 * len(df))
            train, test = df.iloc[idx[:cut]], df.iloc[idx[cut:]]
            acc, major = logit_baseline(formula, train, test, label)
            rows += [{"dataset": name, "method": "logit (not private)", "eps": math.inf,
                      "trial": trial, "accuracy": acc, "released": True, "seconds": np.nan},
                     {"dataset": name, "method": "majority class", "eps": math.inf,
                      "trial": trial, "accuracy": major, "released": True, "seconds": np.nan}]
            for eps in eps_list:
                for method in methods:
                    t0 = time.perf_counter()
                    opts = {} if method == "auto" else {"method": method}   # the default call
                    fit = dp_glm(formula, train, eps=eps, delta=1e-5,
                                 random_state=100_000 * trial + 7, **opts)
                    rows.append({"dataset": name, "method": method, "eps": eps,
                                 "trial": trial, "released": fit.released,
                                 "accuracy": fit.score(test) if fit.released else -math.inf,
                                 "seconds": time.perf_counter() - t0})
            print(f"  {name}: split {trial + 1}/{trials} done", flush=True)
    return pd.DataFrame(rows)


def table(res: pd.DataFrame) -> pd.DataFrame:
    priv = res[np.isfinite(res.eps)]
    med = priv.pivot_table(index=["dataset", "eps"], columns="method", values="accuracy",
                           aggfunc="median")
    fails = (~priv.released).groupby([priv.dataset, priv.eps, priv.method]).sum().unstack()
    out = med[[m for m in METHODS if m in med.columns]].copy()
    for m in out.columns:
        if fails[m].any():
            out[f"{m} fails"] = fails[m].astype(int)
    base = res[~np.isfinite(res.eps)].groupby(["dataset", "method"]).accuracy.median()
    out["logit (not private)"] = [base[(d, "logit (not private)")] for d, _ in out.index]
    out["majority class"] = [base[(d, "majority class")] for d, _ in out.index]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 splits at eps 1 and 5")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--eps", default=",".join(str(e) for e in EPS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--files", default="adult,credit,breast")
    args = ap.parse_args()
    trials = 2 if args.quick else args.trials
    eps_list = (1.0, 5.0) if args.quick else tuple(float(e) for e in args.eps.split(","))
    res = run(args.files.split(","), trials, eps_list, args.methods.split(","))
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / "logistic_accuracy.csv", index=False)
    pd.set_option("display.width", 200)
    print(f"\nMedian test accuracy over {trials} random 90/10 splits (delta = 1e-5; a fit "
          "that releases nothing counts as -inf):")
    print(table(res).round(4).to_string())
    print("\nmean seconds per private fit:")
    print(res[np.isfinite(res.eps)].groupby(["dataset", "method"]).seconds.mean().round(2)
          .unstack().to_string())


if __name__ == "__main__":
    main()
