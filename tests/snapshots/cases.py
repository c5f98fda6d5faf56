"""The behaviour-snapshot cases: the ONE place they are defined.

Used by ``tests/test_snapshots.py`` (which compares each case with ``behaviour.json``) and by
``tests/snapshots/regenerate_behaviour.py`` (which rewrites ``behaviour.json``), so the test and
the script cannot drift apart.

Public API only: ``import dpstats as dp``, ``dp.dp_lm``, ``dp.dp_glm``, ``dp.select``,
``dp.Budget``, ``dp.datasets.load`` and the command line ``python -m dpstats``. Nothing here
may import a dpstats submodule by its path (the package layout is about to change and these
snapshots must pass unchanged across the move).

Every case is seeded (``random_state`` an int, or ``--seed`` on the command line) and runs on a
small deterministic subset of a bundled data set (``.iloc[:rows]``), so the released values are
reproducible bit for bit. :func:`run_case` returns a JSON-ready record in which every float is
stored as ``float.hex()`` (``"nan"``, ``"inf"`` and ``"-inf"`` for non-finite values).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import numbers
import os
import shlex
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import dpstats as dp

__all__ = ["CASES", "CASE_IDS", "run_case", "describe", "encode", "MISSING"]

#: Recorded in place of an attribute the result object does not have.
MISSING = "<missing attribute>"

#: Attributes recorded for every dp_lm result (read with getattr, so a missing one shows up as
#: MISSING instead of an error). ``params``, ``ledger`` and predictions are recorded apart.
LM_ATTRS = ("formula", "method", "private", "released", "seeded", "unreleased_reason",
            "selector", "k", "selected", "selection", "ptr", "n_noisy", "m", "depth",
            "max_depth", "eps", "delta", "spent", "split", "clip", "notes")
#: dp_glm results have every dp_lm attribute plus these.
GLM_ATTRS = (*LM_ATTRS, "family", "response_levels")
#: Attributes recorded for dp.select results.
SELECT_ATTRS = ("selected", "method", "k", "candidates", "eps", "formula", "label", "ordered",
                "n_noisy", "seeded", "notes", "spent")
#: Rows of the training frame on which the released model's predictions are recorded.
PREDICT_ROWS = 3

CAL_3 = "median_house_value ~ median_income + housing_median_age + total_rooms"
CAL_ALL = "median_house_value ~ ."
CUT_LEVELS = "['Fair', 'Good', 'Very Good', 'Premium', 'Ideal']"
ADULT_3 = "income ~ age + hours_per_week + education_num"
ADULT_5_EXPR = ("I(income == '>50K') ~ age + hours_per_week + education_num + capital_gain"
                " + capital_loss")


# --- encoding ------------------------------------------------------------------------------

def encode(value):
    """A JSON-ready copy of ``value`` with every float as ``float.hex()``.

    Dataclasses become dicts of their fields, Series ``{index: value}`` dicts (in index
    order), DataFrames lists of records with every column, arrays and tuples lists. Anything
    else raises, so no value is recorded by an unstable ``repr``.
    """
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value).hex()
    if isinstance(value, pd.DataFrame):
        return [{str(k): encode(v) for k, v in row.items()}
                for row in value.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [encode(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise TypeError(f"behaviour snapshot: no encoding for {type(value).__name__}: {value!r}")


def _attrs(obj, names) -> dict:
    return {name: encode(getattr(obj, name)) if hasattr(obj, name) else MISSING
            for name in names}


def _dpstats_warnings(caught) -> list:
    """User-facing warnings (UserWarning and subclasses such as NotPrivateWarning) as
    [category name, message]; library noise (Deprecation/Future/numba warnings) is left out."""
    return [[w.category.__name__, str(w.message)] for w in caught
            if issubclass(w.category, UserWarning)]


def _call(fn: Callable, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, _dpstats_warnings(caught)


def fit_record(fit, frame: pd.DataFrame, attrs=LM_ATTRS) -> dict:
    """Everything a dp_lm / dp_glm result releases, plus predictions on a few rows."""
    rec = {"params": encode(fit.params)}
    rec.update(_attrs(fit, attrs))
    rec["ledger"] = encode(fit.ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec["predict_head"] = encode(fit.predict(frame.iloc[:PREDICT_ROWS]).to_numpy())
    return rec


def select_record(res) -> dict:
    rec = _attrs(res, SELECT_ATTRS)
    rec["ledger"] = encode(res.ledger)
    return rec


# --- data ----------------------------------------------------------------------------------

@functools.cache
def _bundled(name: str) -> pd.DataFrame:
    return dp.datasets.load(name)


def frame(name: str, rows: int | None = None) -> pd.DataFrame:
    """A fresh copy of the first ``rows`` rows of a bundled data set."""
    data = _bundled(name)
    return (data if rows is None else data.iloc[:rows]).copy()


# --- cases ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    id: str
    run: Callable[[], dict] = field(repr=False)
    what: str = ""


def lm_case(case_id: str, data: str, rows: int | None, formula: str, **kwargs) -> Case:
    def run() -> dict:
        df = frame(data, rows)
        fit, caught = _call(dp.dp_lm, formula, df, **kwargs)
        return {"call": _call_text("dp_lm", data, rows, formula, kwargs),
                **fit_record(fit, df), "warnings": caught}
    return Case(case_id, run, _call_text("dp_lm", data, rows, formula, kwargs))


def glm_case(case_id: str, data: str, rows: int | None, formula: str, **kwargs) -> Case:
    def run() -> dict:
        df = frame(data, rows)
        fit, caught = _call(dp.dp_glm, formula, df, **kwargs)
        return {"call": _call_text("dp_glm", data, rows, formula, kwargs),
                **fit_record(fit, df, GLM_ATTRS), "warnings": caught}
    return Case(case_id, run, _call_text("dp_glm", data, rows, formula, kwargs))


def select_case(case_id: str, data: str, rows: int | None, formula: str, **kwargs) -> Case:
    def run() -> dict:
        res, caught = _call(dp.select, formula, frame(data, rows), **kwargs)
        return {"call": _call_text("select", data, rows, formula, kwargs),
                **select_record(res), "warnings": caught}
    return Case(case_id, run, _call_text("select", data, rows, formula, kwargs))


def _call_text(fn: str, data: str, rows, formula: str, kwargs: dict) -> str:
    sub = f"[:{rows}]" if rows is not None else ""
    args = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"dp.{fn}({formula!r}, {data}{sub}{args})"


def budget_case() -> dict:
    """Two fits sharing one dp.Budget; records both fits and the budget's ledger after both."""
    budget = dp.Budget(2.0, 2e-5)
    cal, nba = frame("california", 3000), frame("nba", 3000)
    first, w1 = _call(dp.dp_lm, CAL_3, cal, eps=1.0, delta=1e-5, select=None, method="tukey",
                      budget=budget, random_state=1)
    second, w2 = _call(dp.dp_lm, "PTS_home ~ .", nba, eps=1.0, delta=1e-5, select=None,
                       method="adassp", budget=budget, random_state=2)
    return {"call": "b = dp.Budget(2.0, 2e-5); dp_lm(CAL_3, california[:3000], tukey, seed 1, "
                    "budget=b); dp_lm('PTS_home ~ .', nba[:3000], adassp, seed 2, budget=b)",
            "first": fit_record(first, cal), "second": fit_record(second, nba),
            "warnings": w1 + w2,
            "budget": {"eps": encode(budget.eps), "delta": encode(budget.delta),
                       "spent": encode(budget.spent), "remaining": encode(budget.remaining),
                       "ledger": encode(budget.ledger)}}


def cli_case(case_id: str, *argv: str) -> Case:
    """``python -m dpstats <argv> --json`` in a fresh process (and an empty working directory,
    so a bundled data set name cannot be shadowed by a file of that name)."""
    def run() -> dict:
        env = dict(os.environ)
        # the child imports the same dpstats as this process, wherever it is installed
        root = os.path.dirname(os.path.dirname(os.path.abspath(dp.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        with tempfile.TemporaryDirectory() as cwd:
            proc = subprocess.run([sys.executable, "-m", "dpstats", *argv], capture_output=True,
                                  text=True, cwd=cwd, env=env, timeout=300, check=False)
        try:
            out = json.loads(proc.stdout)
        except json.JSONDecodeError:
            out = {"unparsed stdout": proc.stdout}
        # no field of the JSON holds a time or a version, so nothing is left out
        return {"argv": list(argv), "returncode": proc.returncode, "json": encode(out),
                "stderr": proc.stderr}
    return Case(case_id, run, "python -m dpstats " + shlex.join(argv))


_METHODS = [("tukey", {}), ("adassp", {}), ("bas", {"T": 5}), ("fw", {}),
            ("dpgd", {"epochs": 20}), ("ols", {})]
_OPT_SUFFIX = {"bas": "-T5", "dpgd": "-epochs20"}

CASES: list[Case] = [
    # dp_lm, every method, no selection
    *[lm_case(f"lm-method-{m}{_OPT_SUFFIX.get(m, '')}", "california", 3000, CAL_3, eps=1.0,
              select=None, method=m, random_state=0, **opts) for m, opts in _METHODS],
    # dp_lm, every selector (k=3 of 8 candidates)
    *[lm_case(f"lm-select-{s}", "california", 3000, CAL_ALL, eps=1.0, select=s, k=3,
              method="tukey", random_state=0, **({"bounds": "auto"} if s == "sis" else {}))
      for s in ("kendall", "sublasso", "sis", "auto")],
    lm_case("lm-select-kendall-adassp", "california", 3000, CAL_ALL, eps=1.0, select="kendall",
            k=3, method="adassp", random_state=0),
    # categorical terms: levels declared in the formula, and a pd.Categorical column
    lm_case("lm-categorical-C-levels-tukey", "diamonds", 5000,
            f"price ~ carat + C(cut, levels={CUT_LEVELS})", eps=2.0, select=None,
            method="tukey", random_state=0),
    lm_case("lm-categorical-pdcat-adassp", "diamonds", 3000, "price ~ carat + cut", eps=1.0,
            select=None, method="adassp", random_state=0),
    # a shared budget across two fits
    Case("lm-budget-shared", budget_case, "two dp_lm fits on one dp.Budget(2.0, 2e-5)"),
    # withheld fits: too few rows for the Tukey models, and a failed PTR test
    lm_case("lm-withheld-too-few-models", "california", 60, CAL_ALL, eps=1.0, select=None,
            method="tukey", random_state=0),
    lm_case("lm-withheld-ptr-failed", "california", 3000, CAL_ALL, eps=1.0, select=None,
            method="tukey", random_state=0),
    # dp_glm, every method (two-level categorical response), and one with selection
    *[glm_case(f"glm-method-{m}", "adult", 3000, ADULT_3, eps=1.0, select=None, method=m,
               random_state=0) for m in ("fw", "dpgd", "tukey")],
    glm_case("glm-select-kendall-k2", "adult", 3000, ADULT_5_EXPR, eps=1.0, select="kendall",
             k=2, method="fw", random_state=0),
    # dp.select, every method, on the wide alon data (62 rows, 2000 genes)
    *[select_case(f"select-{s}", "alon", None, "y ~ .", eps=1.0, method=s, k=5, random_state=0,
                  **({"bounds": "auto"} if s == "sis" else {}))
      for s in ("kendall", "sublasso", "sis", "auto")],
    # the auto rule's other branch (SubLasso) on more rows
    select_case("select-auto-california", "california", 3000, CAL_ALL, eps=1.0, method="auto",
                k=3, random_state=0),
    # method options, public bounds, budget split, other data sets (cheap, more code paths)
    lm_case("lm-tukey-lemma36-paper", "california", 3000, CAL_3, eps=1.0, select=None,
            method="tukey", lemma="3.6", accounting="paper", random_state=3),
    lm_case("lm-fw-T50-screen-last", "nyc_garbage", 3000, "REFUSETONSCOLLECTED ~ .", eps=1.0,
            select=None, method="fw", T=50, screen="last", random_state=4),
    lm_case("lm-adassp-public-bounds-dict", "california", 3000, CAL_3, eps=1.0, select=None,
            method="adassp", bounds={"x": (0, 10000), "y": (0, 500001)}, random_state=5),
    lm_case("lm-adassp-public-bounds-tuple", "nba", 3000, "PTS_home ~ FG_PCT_home + AST_home",
            eps=1.0, select=None, method="adassp", bounds=(0, 200), random_state=5),
    lm_case("lm-split-custom-kendall-k2", "california", 3000, CAL_ALL, eps=1.0,
            select="kendall", k=2, split={"n": 0.1, "selection": 0.2, "regression": 0.7},
            method="tukey", random_state=6),
    lm_case("lm-bas-variant-paper", "california", 3000, CAL_3, eps=1.0, select=None,
            method="bas", variant="paper", random_state=7),
    lm_case("lm-dpgd-lr-clip-epochs", "nba", 3000, "PTS_home ~ .", eps=1.0, select=None,
            method="dpgd", lr=0.5, clip=2.0, epochs=10, random_state=8),
    glm_case("glm-dpgd-categorical-predictor", "adult", 3000,
             "income ~ age + sex + hours_per_week", eps=1.0, select=None, method="dpgd",
             epochs=50, random_state=11),
    select_case("select-sublasso-groups-sqrt", "california", 3000, CAL_ALL, eps=1.0,
                method="sublasso", k=3, groups="sqrt", random_state=9),
    # the command line
    cli_case("cli-lm-california", "lm", "median_house_value ~ median_income + housing_median_age",
             "california", "--eps", "1", "--seed", "0", "--json"),
    cli_case("cli-glm-adult", "glm", "income ~ age + hours_per_week", "adult", "--eps", "1",
             "--seed", "0", "--json"),
]

CASE_IDS = [c.id for c in CASES]
_BY_ID = {c.id: c for c in CASES}
assert len(_BY_ID) == len(CASES), "duplicate case id"


def run_case(case_id: str) -> dict:
    """Run one case and return its JSON-ready record (floats as float.hex())."""
    return _BY_ID[case_id].run()


def describe(case_id: str) -> str:
    """The call a case makes, for failure messages."""
    return _BY_ID[case_id].what

