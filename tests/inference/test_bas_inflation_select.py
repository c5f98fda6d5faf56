"""benchmarks/bas_inflation.py on selection fits (issue 16): the row under the method's name
is the coverage of the selected model's coefficients (what the summary's intervals claim),
the full model's is a second row ``METHOD:full``. Session 14's script wrote only the full
model's coverage (0.667 for ``bas+select``) under the method's name."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from benchmark_script import load_benchmark


def _load():
    return load_benchmark("bas_inflation.py")


def _rep(rep: int, z: list, z_cond: list) -> dict:
    """A raw row as interval_coverage.one_rep writes it (z before the inflation; the third
    and fourth terms not selected)."""
    cell = {"n": 20_000, "p": 5, "eps": 1.0, "covariates": "correlated", "errors": "gaussian"}
    hit = [float(np.isfinite(v)) if np.isfinite(v) else np.nan for v in z]
    return {"design": "select", "method": "bas+select", "logistic": False, "rep": rep,
            "released": 1.0, "sec": 1.0, "kind": "bas", "index": 3333.3, "hit": hit,
            "ratio": [1.0 if np.isfinite(v) else np.nan for v in z], "z": z,
            "z_cond": z_cond, "cell": cell}


def test_selection_rows_are_the_selected_and_the_full_model(tmp_path):
    mod = _load()
    nan = float("nan")
    # the selected model's errors are small (covered), the full model's large (missed)
    rows = [_rep(i, [0.1, 5.0, 5.0, nan, nan, 0.2], [0.1, 0.3, -0.2, nan, nan, 0.2])
            for i in range(10)]
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "rows.csv"
    mod.main([str(raw), "--out", str(out)])
    table = pd.read_csv(out).set_index("method")
    assert set(table.index) == {"bas+select", "bas+select:full"}
    assert table.loc["bas+select", "coverage"] == 1.0
    assert table.loc["bas+select:full", "coverage"] == 0.5      # 2 of 4 terms covered
    assert table.loc["bas+select:full", "coverage_min"] == 0.0
    assert (table["reps"] == 10).all()
