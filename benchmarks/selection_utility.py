"""Utility of the selection-then-regression pipelines on every regression file (issue 3).

Median test R^2 over random 90/10 splits at (eps = ln 3, delta = 1e-5) for K-Tukey
(``select="kendall"``, k = 5), L-Tukey (``select="sublasso"``, k = 5), Tukey without selection,
the Tukey pipeline that was the default until issue 15 (``select="auto"``, k = 5,
``method="tukey"``: ``tukey_k5``) and the default ``dp_lm`` call (no method, select or k
given: ``default``), beside the reference code's best private method
(ANCHORS.md). A fit whose PTR check fails counts as -inf. Prints a table and writes
benchmarks/results/selection_utility.csv.

    python benchmarks/selection_utility.py [--trials 10] [--files california,...]
        [--configs default,kendall,sublasso,none] [--accounting swap]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd
from tukey_utility import ANCHORS, DATA, LABELS, OUT

import dpstats as dp

CONFIGS = {"default": None, "tukey_k5": "auto", "kendall": "kendall", "sublasso": "sublasso",
           "none": None}


def run(files, trials, configs, accounting="swap", eps=None):
    eps = math.log(3) if eps is None else eps
    rows = []
    for name in files:
        df = pd.read_csv(DATA / f"{name}.csv")
        formula = f"{LABELS[name]} ~ ."
        for trial in range(trials):
            rng = np.random.default_rng(2024 + trial)
            idx = rng.permutation(len(df))
            cut = int(0.9 * len(df))
            train, test = df.iloc[idx[:cut]], df.iloc[idx[cut:]]
            for label in configs:
                t0 = time.perf_counter()
                kwargs = ({} if label == "default" else
                          {"select": CONFIGS[label], "k": 5, "method": "tukey",
                           "accounting": accounting})
                fit = dp.dp_lm(formula, train, eps=eps, delta=1e-5,
                               random_state=10_000 * trial + 7, **kwargs)
                secs = time.perf_counter() - t0
                rows.append({"dataset": name, "method": label, "trial": trial, "eps": eps,
                             "r2": fit.score(test) if fit.released else -math.inf,
                             "seconds": secs, "selected": "|".join(fit.selected),
                             "method used": fit.method, "k": fit.k})
    return pd.DataFrame(rows)


def table(res: pd.DataFrame) -> pd.DataFrame:
    med = res.pivot_table(index="dataset", columns="method", values="r2", aggfunc="median")
    pos = res.assign(pos=res.r2 > 0).pivot_table(index="dataset", columns="method",
                                                 values="pos", aggfunc="sum")
    out = med.copy()
    for col in pos.columns:
        out[f"{col} #R2>0"] = pos[col].astype(int)
    out["ref best"] = [ANCHORS[d][2] for d in out.index]
    out["NonDP"] = [ANCHORS[d][0] for d in out.index]
    if "default" in out:
        out["default beats ref best"] = [
            ("n/a (ref <= 0)" if ANCHORS[d][2] <= 0 else
             ("yes" if out.loc[d, "default"] >= ANCHORS[d][2] else "NO")) for d in out.index]
    return out.loc[[d for d in LABELS if d in out.index]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--files", default=",".join(LABELS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--accounting", default="swap")
    ap.add_argument("--out", default="selection_utility.csv")
    args = ap.parse_args()
    res = run(args.files.split(","), args.trials, args.configs.split(","), args.accounting)
    OUT.mkdir(exist_ok=True)
    res.to_csv(OUT / args.out, index=False)
    pd.set_option("display.width", 220)
    tab = table(res)
    print(tab.round(3).to_string())
    if "default" in tab:
        share = float((tab["default"] > 0).mean())
        print(f"\ndefault positive on {share:.0%} of files (target >= 80%)")
    print("mean seconds per fit:", res.groupby("method").seconds.mean().round(3).to_dict())


if __name__ == "__main__":
    main()
