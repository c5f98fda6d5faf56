"""BAS / AdaSSP intervals at other inflations, from the same fits (post-processing).

``interval_coverage.py --raw FILE`` keeps each fit's standardised errors ``z`` and width
ratios **before** the inflation of :mod:`dpstats.estimators.inference.gate` together with its
gate index, so the intervals at any inflation follow from the same fits without re-fitting
(the inflation multiplies the standard errors and nothing else: the draws' seeds, the gate
and the estimate do not depend on it). For each raw file this prints, per cell and method,
the coverage (worst-best coefficient), median width / OLS and the sd of z per coefficient at
the old constant 1.1 (1.2 for AdaSSP), at constants 1.0 and 1.05 and at the code's
:func:`~dpstats.estimators.inference.gate.inflation`, and writes the code's rows in the
schema of ``coverage.py`` (its ``_row``: the same computation as ``coverage.py --families lm``
on these fits) to ``--out``.

    cd benchmarks && python bas_inflation.py RAW.jsonl[.gz][,RAW2.jsonl...] [--out FILE]

Several files of one cell (chunks run with ``--start``) are combined; a replication seen
twice is kept once. Selection methods (``bas+select``) give two rows: ``bas+select``, the
coverage of the selected model's coefficients (what the summary's intervals claim:
:func:`interval_coverage.conditional_truth`), and ``bas+select:full``, of the full model's
coefficients of the selected terms.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import interval_coverage as ic  # noqa: E402

OLD = {"bas": 1.1, "adassp": 1.2}


def _coverage_module():
    """benchmarks/coverage.py under another name (the name ``coverage`` is refused)."""
    spec = importlib.util.spec_from_file_location("coverage_bench", HERE / "coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load(paths: list[str], logistic: bool = False) -> dict:
    """Per-rep rows grouped by (design, method), one row per replication (``logistic``: the
    logistic cells' rows, no inflation, instead of the linear ones)."""
    groups: dict = {}
    for p in paths:
        for line in (gzip.open(p, "rt") if p.endswith(".gz") else open(p)):
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r["logistic"] != logistic:
                continue
            groups.setdefault((r["design"], r["method"]), {})[r["rep"]] = r
    return {k: [v[i] for i in sorted(v)] for k, v in groups.items()}


def at(rows: list, factor, key: str = "z") -> tuple:
    """``has``, ``z``, ``ratio`` of the fits at inflation ``factor`` (a number, or None: the
    code's :func:`gate.inflation` of each fit); ``key="z_cond"``: the errors against the
    selected model's coefficients (:func:`interval_coverage.conditional_truth`)."""
    has, z, ratio = [], [], []
    for r in rows:
        ok = bool(np.isfinite(r["hit"]).any()) and not ic.gated(r)
        c = ic._inflation(r) if factor is None or not r["kind"] else factor
        has.append(ok)
        z.append(np.asarray(r.get(key, [np.nan] * len(r["hit"])), dtype=float) / c)
        ratio.append(np.asarray(r["ratio"], dtype=float) * c)
    return has, z, ratio


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw", help="comma list of interval_coverage.py --raw files")
    ap.add_argument("--out", default=None, help="coverage.py-schema rows at the code's "
                                                "inflation")
    ap.add_argument("--logistic", action="store_true", help="the logistic cells' rows")
    a = ap.parse_args(argv)
    cov = _coverage_module()
    out, lines = [], []
    model = "logistic" if a.logistic else "linear"
    for (design, method), rows in load(a.raw.split(","), a.logistic).items():
        cell = rows[0]["cell"]
        kind = next((r["kind"] for r in rows if r["kind"]), "")
        base = method.split(":")[0].split("+")[0]
        # "+select": the selected model's coefficients (what the summary claims) under the
        # method's name, the full model's as METHOD:full
        keys = [("z_cond", method), ("z", method + ":full")] if "+select" in method else \
            [("z", method)]
        for (key, name), (label, f) in itertools.product(
                keys, [(f"old {OLD.get(kind, 1.0):g}", OLD.get(kind, 1.0)), ("1.0", 1.0),
                       ("1.05", 1.05), ("code", None)]):
            has, z, ratio = at(rows, f, key)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = cov._row("lm", design, model, name, cell, len(rows), has, z, ratio,
                               float(np.sum([r["sec"] for r in rows])))
                zk = np.asarray(z, dtype=float)[np.asarray(has, dtype=bool)]
                infl = np.nanmedian([ic._inflation(r) for r in rows if r["kind"]]) if (
                    f is None and kind) else (1.0 if f is None else f)
            lines.append({"cell": design, "method": name, "kind": kind or base,
                          "reps": len(rows), "inflation": label,
                          "factor": round(float(infl), 4),
                          "coverage": f"{row['coverage']:.3f} ({row['coverage_min']:.3f}-"
                                      f"{row['coverage_max']:.3f})",
                          "width": round(row["width_ratio"], 3),
                          "sd_z": " ".join(f"{s:.2f}" for s in np.nanstd(zk, axis=0))})
            if f is None:
                out.append({**row, "source": "interval_coverage.py+bas_inflation.py"})
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(pd.DataFrame(lines).to_string(index=False))
    if a.out:
        pd.DataFrame(out).to_csv(a.out, index=False)
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
