"""The bad-input catalogue, part 3: former refusals that read data values (issue 14, leak 7).

Each of these inputs used to raise a ``DataError`` whose presence depended on the data's
values or row count, so it revealed one bit exactly (is there a row with an infinite value, a
value beyond 1e150, a binomial label that is not 0/1; are there fewer complete rows than
columns, or none?). Now each is handled by a rule that acts on each row alone and reveals
nothing:

* an infinite input, a value a transform makes infinite, a design or response value beyond
  1e150 in magnitude, and (``dp_glm``) a response that is not 0 or 1 make the row missing: it is
  dropped silently, so D and D plus such a row give bit-identical fits;
* a value below 1e-150 in magnitude is set to 0, so D plus a row holding one gives the same fit
  as D plus that row holding 0;
* no complete rows, or fewer than the regression's columns, are fitted like any other data: the
  mechanisms run (withheld or noisy results), so D and D plus one row give fits that differ only
  through the mechanisms' noise: same seed, no exception, the same warnings and the same ledger
  and result fields in kind.

Only the non-private ``method="ols"`` still refuses fewer rows than columns. The broken
variants at the end put each old refusal back and show that the comparisons catch it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
import dpstats.formula.design as design_module
import dpstats.pipeline.levels as first_design_module
import dpstats.pipeline.run as run_module
from dpstats.errors import DataError
from dpstats.estimators import METHODS
from dpstats.formula.checks import _check_values

SELECTS = ("auto", "kendall", "sublasso", "sis", None)
GRID_NOTE = "private clipping bounds"    # a note computed from released bounds


def frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in (1, 2, 3)})
    df["g"] = pd.Categorical(rng.choice(["a", "b"], size=n), categories=["a", "b"])
    df["y"] = df.x1 - df.x2 + rng.normal(size=n)
    return df


DF = frame()
BIN = DF.assign(y=(DF.x1 > 0).astype(int))


def plus(df: pd.DataFrame, **values) -> pd.DataFrame:
    """``df`` plus one row: a copy of its first row with ``values`` set."""
    row = df.iloc[:1].copy() if len(df) else DF.iloc[:1].copy()
    for col, value in values.items():
        row[col] = value
    return pd.concat([df, row], ignore_index=True)


def call(api: str, data: pd.DataFrame, formula: str = "y ~ x1 + x2 + x3", **kw):
    """A seeded call of ``api`` on ``data``, as a thunk."""
    if api == "select":
        return lambda: dp.select(formula, data, eps=1.0, k=2, random_state=0, **kw)
    fit = dp.dp_glm if api == "glm" else dp.dp_lm
    return lambda: fit(formula, data, eps=1.0, random_state=0, **kw)


def outcome(thunk):
    """(exception type or None, warnings as (category, text), result or None)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            res = thunk()
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc), [(w.category, str(w.message)) for w in rec], None
    return None, [(w.category, str(w.message)) for w in rec], res


def _fields(res) -> list[str]:
    return sorted(a for a in dir(res) if not a.startswith("_"))


def assert_same_fit(a, b) -> None:
    """Both calls succeed and release exactly the same thing (the row was dropped)."""
    assert a[0] is None and b[0] is None, (a[0], b[0])
    assert a[1] == b[1]
    ra, rb = a[2], b[2]
    pd.testing.assert_frame_equal(ra.ledger, rb.ledger)
    if hasattr(ra, "params"):
        pd.testing.assert_series_equal(ra.params, rb.params)
        assert (ra.released, ra.n_noisy, ra.notes) == (rb.released, rb.n_noisy, rb.notes)
    else:
        assert ra.selected == rb.selected and ra.n_noisy == rb.n_noisy


def assert_same_kind(a, b) -> None:
    """Both calls succeed, warn alike and release the same fields under the same charges; the
    released values may differ (the mechanisms saw one row more)."""
    assert a[0] is None and b[0] is None, (a[0], b[0])
    assert not any(issubclass(c, RuntimeWarning) for c, _ in a[1] + b[1])
    assert [w for w in a[1] if GRID_NOTE not in w[1]] == [w for w in b[1] if GRID_NOTE not in w[1]]
    ra, rb = a[2], b[2]
    assert type(ra) is type(rb) and _fields(ra) == _fields(rb)
    assert ra.ledger[["stage", "mechanism", "eps", "delta"]].equals(
        rb.ledger[["stage", "mechanism", "eps", "delta"]])
    assert ra.spent == rb.spent
    if hasattr(ra, "params"):
        assert list(ra.params.index) == list(rb.params.index)
        assert isinstance(ra.released, bool) and isinstance(rb.released, bool)


# id, api, formula, D, D plus the offending row, the D' the offending fit must equal exactly
# (None: D itself)
_F = "y ~ x1 + x2 + x3"
DROPPED = [
    ("inf in feature", "lm", _F, DF, plus(DF, x1=math.inf)),
    ("-inf in label", "lm", _F, DF, plus(DF, y=-math.inf)),
    ("-inf in glm feature", "glm", _F, BIN, plus(BIN, x2=-math.inf)),
    ("inf in select", "select", "y ~ .", DF.drop(columns="g"),
     plus(DF.drop(columns="g"), y=math.inf)),
    ("inf under a finite transform", "lm", "y ~ I(x1 > 0) + x2", DF, plus(DF, x1=math.inf)),
    ("inf from transform", "lm", "y ~ I(1 / x1) + x2", DF, plus(DF, x1=0.0)),
    ("huge 1e300", "lm", _F, DF, plus(DF, x3=1e300)),
    ("huge 1e300 select", "select", "y ~ .", DF.drop(columns="g"),
     plus(DF.drop(columns="g"), x2=-1e300)),
    ("huge label", "lm", _F, DF, plus(DF, y=1e200)),
    ("huge via transform", "lm", "y ~ I(x1 * 1e148) + x2", DF, plus(DF, x1=1e3)),
    ("glm label 2", "glm", _F, BIN, plus(BIN, y=2)),
    ("glm label -1", "glm", "y ~ x1 + g", BIN, plus(BIN, y=-1)),
    ("glm label 0.5", "glm", _F, BIN.assign(y=BIN.y.astype(float)),
     plus(BIN.assign(y=BIN.y.astype(float)), y=0.5)),
]
ZEROED = [
    ("tiny 1e-300", "lm", _F, DF, plus(DF, x3=1e-300), plus(DF, x3=0.0)),
    ("tiny label", "lm", _F, DF, plus(DF, y=-1e-200), plus(DF, y=0.0)),
    ("tiny feature glm", "glm", _F, BIN, plus(BIN, x3=1e-300), plus(BIN, x3=0.0)),
    ("tiny column", "lm", _F, DF.assign(x3=DF.x3 * 1e-300),
     plus(DF.assign(x3=DF.x3 * 1e-300), x3=5e-301), plus(DF.assign(x3=0.0), x3=0.0)),
]
FEW_ROWS = [   # id, api, D, D plus one complete row
    ("no rows", "glm", BIN.iloc[:0], BIN.iloc[:1]),
    ("all rows missing", "lm", DF.assign(x1=np.nan), plus(DF.assign(x1=np.nan), x1=0.5)),
    ("label all missing", "glm", BIN.assign(y=np.nan), plus(BIN.assign(y=np.nan), y=1)),
    ("all labels not 0/1", "glm", BIN.assign(y=2), plus(BIN.assign(y=2), y=1)),
    ("all rows infinite", "lm", DF.assign(x2=math.inf), plus(DF.assign(x2=math.inf), x2=0.1)),
    ("one row", "lm", DF.iloc[:1], DF.iloc[:2]),
    ("fewer rows than columns", "glm", BIN.iloc[:3], BIN.iloc[:4]),
    ("select no rows", "select", DF.drop(columns="g").iloc[:0], DF.drop(columns="g").iloc[:1]),
]


@pytest.mark.parametrize("api, formula, base, bad", [c[1:] for c in DROPPED],
                         ids=[c[0] for c in DROPPED])
def test_the_offending_row_is_dropped_silently(api, formula, base, bad):
    assert_same_fit(outcome(call(api, base, formula)), outcome(call(api, bad, formula)))


@pytest.mark.parametrize("api, formula, base, bad, zero", [c[1:] for c in ZEROED],
                         ids=[c[0] for c in ZEROED])
def test_tiny_values_are_set_to_zero(api, formula, base, bad, zero):
    got = outcome(call(api, bad, formula))
    assert_same_fit(got, outcome(call(api, zero, formula)))
    assert_same_kind(outcome(call(api, base, formula)), got)


@pytest.mark.parametrize("api, base, more", [c[1:] for c in FEW_ROWS],
                         ids=[c[0] for c in FEW_ROWS])
def test_few_or_no_rows_give_an_ordinary_result(api, base, more):
    formula = "y ~ ." if api == "select" else _F
    budget = dp.Budget(10.0, 1e-3)
    got = outcome(lambda: call(api, base, formula, budget=budget)())
    assert_same_kind(got, outcome(call(api, more, formula)))
    assert budget.spent[0] > 0           # the mechanisms ran and charged
    if api != "select":
        assert got[2].released is False or np.isfinite(got[2].params).all()


# --- every method and selector -----------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("select", SELECTS, ids=str)
@pytest.mark.parametrize("base, bad, same", [
    (DF, plus(DF, x3=math.inf), True),
    (DF, plus(DF, x1=-1e300), True),
    (DF.iloc[:2], DF.iloc[:3], False),
], ids=["inf", "huge", "two rows"])
def test_every_method_and_selector_takes_them_silently(method, select, base, bad, same):
    def fit(data):
        return lambda: dp.dp_lm(_F, data, eps=1.0, method=method, select=select, k=2,
                                random_state=0)
    if method == "ols" and not same:     # not private: it may read n exactly
        with pytest.raises(DataError, match="more columns"):
            fit(base)()
        return
    (assert_same_fit if same else assert_same_kind)(outcome(fit(base)), outcome(fit(bad)))


@pytest.mark.parametrize("method", ["fw", "dpgd", "tukey"])
@pytest.mark.parametrize("select", SELECTS, ids=str)
def test_every_glm_method_and_selector_takes_them_silently(method, select):
    def fit(data):
        return lambda: dp.dp_glm(_F, data, eps=1.0, method=method, select=select, k=2,
                                 random_state=0)
    bad = plus(plus(BIN, x1=math.inf), y=3)
    assert_same_fit(outcome(fit(BIN)), outcome(fit(bad)))
    assert_same_kind(outcome(fit(BIN.iloc[:2])), outcome(fit(BIN.iloc[:3])))


@pytest.mark.parametrize("method", ["kendall", "sublasso", "sis", "auto"])
def test_every_selector_of_select_takes_them_silently(method):
    data = DF.drop(columns="g")

    def sel(d):
        return lambda: dp.select("y ~ .", d, eps=1.0, k=2, method=method, random_state=0)
    assert_same_fit(outcome(sel(data)), outcome(sel(plus(data, y=math.inf))))
    assert_same_kind(outcome(sel(data.iloc[:1])), outcome(sel(data.iloc[:2])))


def test_a_numeric_glm_label_says_how_it_is_read():
    fit = dp.dp_glm(_F, BIN, eps=1.0, random_state=0)
    assert any("not 0 or 1 are dropped" in n for n in fit.notes)
    flag = dp.dp_glm(_F, BIN.assign(y=BIN.y.astype(bool)), eps=1.0, random_state=0)
    assert not any("not 0 or 1" in n for n in flag.notes)


def test_no_message_quotes_the_row_count():
    """A frame without columns is refused for its schema; the message once quoted its rows."""
    for api in ("lm", "glm", "select"):
        with pytest.raises(DataError, match="no columns") as info:
            call(api, DF.iloc[:123, :0])()
        assert "123" not in str(info.value)


def test_ols_still_refuses_fewer_rows_than_columns():
    with pytest.raises(DataError, match="more columns"):
        dp.dp_lm(_F, DF.iloc[:2], eps=1.0, method="ols")


# --- broken variants: each old refusal, put back, is caught ------------------------------------
def _old_usable_rows(X, y):
    _check_values(y[:, None], ["y"], "data")
    _check_values(X, [f"c{j}" for j in range(X.shape[1])], "data")
    return X, y


def _old_check_columns(original):
    def check(request, design, candidates, notes):
        selector = original(request, design, candidates, notes)
        n, p = design.X.shape
        run_module.check_rows(n, p, p - len(candidates) + request.k if selector else p)
        return selector
    return check


def _old_binary_rows(design):
    if not np.isin(design.y, (0.0, 1.0)).all():
        raise DataError("the response must be coded 0/1")
    return design


@pytest.mark.parametrize("case", ["inf in feature", "huge 1e300", "inf from transform"])
def test_the_old_value_refusal_is_caught(case, monkeypatch):
    api, formula, base, bad = next(c[1:] for c in DROPPED if c[0] == case)
    monkeypatch.setattr(design_module, "usable_rows", _old_usable_rows)
    monkeypatch.setattr(design_module, "infinite_inputs", lambda f: np.zeros(len(f), bool))
    assert outcome(call(api, bad, formula))[0] is DataError
    with pytest.raises(AssertionError):
        assert_same_fit(outcome(call(api, base, formula)), outcome(call(api, bad, formula)))


def test_the_old_tiny_column_refusal_is_caught(monkeypatch):
    def old(X, y):          # the old rule: refuse a column that is all tiny
        big = np.abs(X).max(axis=0)
        if ((big > 0) & (big < 1e-150)).any():
            raise DataError("hold only values below 1e-150")
        return X, y
    monkeypatch.setattr(design_module, "usable_rows", old)
    _, _, base, bad, zero = ZEROED[3][1:]
    with pytest.raises(AssertionError):
        assert_same_fit(outcome(call("lm", bad)), outcome(call("lm", zero)))


def test_the_old_row_count_refusal_is_caught(monkeypatch):
    monkeypatch.setattr(run_module, "_check_columns", _old_check_columns(run_module._check_columns))
    with pytest.raises(AssertionError):
        assert_same_kind(outcome(call("lm", DF.iloc[:1])), outcome(call("lm", DF.iloc[:2])))


def test_the_old_no_rows_refusal_is_caught(monkeypatch):
    original = design_module._check_frame
    monkeypatch.setattr(design_module, "_check_frame",
                        lambda data, arg, rows=True: original(data, arg))
    with pytest.raises(AssertionError):
        assert_same_kind(outcome(call("glm", BIN.iloc[:0])), outcome(call("glm", BIN.iloc[:1])))


def test_the_old_binomial_label_refusal_is_caught(monkeypatch):
    monkeypatch.setattr(first_design_module, "binary_rows", _old_binary_rows)
    with pytest.raises(AssertionError):
        assert_same_fit(outcome(call("glm", BIN)), outcome(call("glm", plus(BIN, y=2))))
