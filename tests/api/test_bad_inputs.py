"""The bad-input catalogue (issue 6, part 5): every case that must raise.

Each case calls a public entry point (``dp_lm``, ``dp_glm``, ``select``, ``Budget``) with one
thing wrong and states the :class:`~dpstats.errors.DPStatsError` subclass and a piece of the
message that names the argument or the fix. For every case the test checks that

(a) the exception is that ``DPStatsError`` subclass (a raw numpy/pandas/numba error fails the
    test by propagating),
(b) the message contains the expected words,
(c) a shared :class:`~dpstats.Budget` passed as ``budget=`` has spent nothing (validation runs
    before any charge), and
(d) the message reveals no data value: the frames plant distinctive values (987654.321, a
    category level "secret_987654") and none of them may appear in ``str(exc)``.

Cases that give a documented result instead of an error live in test_bad_inputs_results.py.
Inputs whose refusal read data values (infinite or huge values, values below 1e-150, a binomial
label that is not 0/1, too few or no complete rows) are no longer refused: they are handled by
rules that act on each row alone, and test_bad_inputs_silent.py checks that D and D plus such a
row give the same fit, or fits that differ only through the mechanisms' noise (issue 14).
"""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import (
    BudgetExceededError,
    DataError,
    DPStatsError,
    FormulaError,
    PrivacyLeakWarning,
    PrivacyParameterError,
    StatefulTransformError,
    UnknownMethodError,
    ValidationError,
)
from dpstats.estimators import METHODS
from dpstats.estimators.tukey.choose_m import MAX_MODELS
from dpstats.validation import MAX_EPS

PLANT = 987654.321
#: Substrings of planted data values; none may appear in an error message.
SECRETS = ("987654", "9.87654", "secret")
SELECTS = ("auto", "kendall", "sublasso", "sis", None)


def frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Numeric x1..x3, a declared categorical g and a label y, with planted values."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in (1, 2, 3)})
    df["g"] = pd.Categorical(rng.choice(["a", "b"], size=n), categories=["a", "b"])
    df["y"] = df.x1 - df.x2 + rng.normal(size=n)
    df.loc[5, "x3"] = PLANT
    df.loc[6, "y"] = PLANT
    return df


def binary(n: int = 300) -> pd.DataFrame:
    df = frame(n)
    df["y"] = (df.x1 > 0).astype(int)
    return df


def with_col(df: pd.DataFrame, **cols) -> pd.DataFrame:
    out = df.copy()
    for name, value in cols.items():
        out[name] = value(out) if callable(value) else value
    return out


def fake_frame(module: str):
    """An object of a class named DataFrame from another library (polars, dask) that is not
    one of its frames: dpstats must refuse it by name, without importing the library."""
    cls = types.new_class("DataFrame")
    cls.__module__ = module
    return cls()


DF, BIN = frame(), binary()


def lm(data=DF, formula="y ~ x1 + x2 + x3", **kw):
    return lambda b: dp.dp_lm(formula, data, budget=b, random_state=0, **{"eps": 1.0, **kw})


def glm(data=BIN, formula="y ~ x1 + x2 + x3", **kw):
    return lambda b: dp.dp_glm(formula, data, budget=b, random_state=0, **{"eps": 1.0, **kw})


def sel(data=DF, formula="y ~ x1 + x2 + x3", **kw):
    return lambda b: dp.select(formula, data, budget=b, random_state=0,
                               **{"eps": 1.0, "k": 2, **kw})


def too_small(api, budget: tuple, **kw):
    """A call whose own (too small) Budget must refuse it and stay untouched."""
    def call(_b):
        small = dp.Budget(*budget)
        try:
            return api(budget=small, **kw)
        finally:
            assert small.spent == (0.0, 0.0)
    return call


# id, call(budget), exception class, words the message must contain
CASES = [
    # --- privacy parameters ------------------------------------------------------------------
    ("eps=0", lm(eps=0), PrivacyParameterError, "eps must be a finite number > 0"),
    ("eps<0", lm(eps=-1.0), PrivacyParameterError, "eps must be a finite number > 0"),
    ("eps=nan", lm(eps=math.nan), PrivacyParameterError, "eps must be a finite number > 0"),
    ("eps=inf", lm(eps=math.inf), PrivacyParameterError, "eps must be a finite number > 0"),
    ("eps=str", lm(eps="1"), PrivacyParameterError, "eps must be a positive number"),
    ("eps=None", lm(eps=None), PrivacyParameterError, "eps must be a positive number"),
    ("eps=True", lm(eps=True), PrivacyParameterError, "eps must be a positive number"),
    ("eps>MAX", lm(eps=MAX_EPS * 10), PrivacyParameterError, "method='ols'"),
    ("delta=0", lm(delta=0), PrivacyParameterError, "delta must lie in (0, 1)"),
    ("delta=1", lm(delta=1), PrivacyParameterError, "delta must lie in (0, 1)"),
    ("delta<0", lm(delta=-1e-5), PrivacyParameterError, "delta must lie in (0, 1)"),
    ("delta=nan", lm(delta=math.nan), PrivacyParameterError, "delta must lie in (0, 1)"),
    ("delta=str", lm(delta="1e-5"), PrivacyParameterError, "delta must be a number"),
    ("glm eps=0", glm(eps=0.0), PrivacyParameterError, "eps must be"),
    ("glm delta=1", glm(delta=1.0), PrivacyParameterError, "delta must lie"),
    ("select eps=nan", sel(eps=math.nan), PrivacyParameterError, "eps must be"),
    ("budget exhausted", too_small(dp.dp_lm, (0.5, 1e-5), formula="y ~ x1", data=DF, eps=1.0),
     BudgetExceededError, "eps ran out"),
    ("budget without delta", too_small(dp.dp_lm, (10.0, 0.0), formula="y ~ x1", data=DF,
                                       eps=0.1), BudgetExceededError, "delta=0 left"),
    ("glm budget exhausted", too_small(dp.dp_glm, (0.5, 1e-5), formula="y ~ x1", data=BIN,
                                       eps=1.0), BudgetExceededError, "left"),
    ("select budget exhausted", too_small(dp.select, (0.5,), formula="y ~ x1 + x2", data=DF,
                                          eps=1.0), BudgetExceededError, "left"),
    ("budget not a Budget", lambda b: dp.dp_lm("y ~ x1", DF, eps=1.0, budget={"eps": 1}),
     ValidationError, "budget must be a dpstats.Budget"),
    ("split share str", lm(split={"n": "a", "selection": 0.1, "regression": 0.9}),
     ValidationError, "split shares must be numbers"),
    ("split share None", glm(split={"n": None, "selection": 0.1, "regression": 0.9}),
     ValidationError, "split shares must be numbers"),
    ("split bad key", lm(split={"noise": 1.0}), ValidationError, "split must be a dict"),
    ("split sum", lm(split={"n": 0.5, "selection": 0.5, "regression": 0.5}),
     PrivacyParameterError, "sum to 1"),
    ("split negative", lm(split={"n": -0.1, "regression": 1.1}), PrivacyParameterError,
     "finite and >= 0"),
    # --- methods, selectors, k, m, options ---------------------------------------------------
    ("method unknown", lm(method="lasso"), UnknownMethodError, "method='lasso' is not known"),
    ("method case", lm(method="TUKEY"), UnknownMethodError, "choose one of 'auto', 'tukey'"),
    ("select unknown", lm(select="lasso"), UnknownMethodError, "select='lasso' is not known"),
    ("select True", lm(select=True), UnknownMethodError, "select=True is not known"),
    ("select() method None", sel(method=None), UnknownMethodError, "method=None"),
    ("select() method", sel(method="lasso"), UnknownMethodError, "choose one of 'kendall'"),
    ("glm family", glm(family="gaussian"), UnknownMethodError, "family='gaussian'"),
    ("glm method adassp", glm(method="adassp"), UnknownMethodError, "choose one of 'auto'"),
    ("glm option unknown", glm(method="dpgd", learning=0.1), ValidationError,
     "is not an option of method='dpgd'"),
    ("glm option reserved", glm(method="fw", ledger=None), ValidationError, "set by dp_glm"),
    ("glm option value", glm(method="dpgd", lr=-1.0), ValidationError, "lr must be"),
    ("glm option lemma", glm(method="tukey", lemma="9"), UnknownMethodError, "lemma="),
    ("k=0", lm(k=0), ValidationError, "k must be an integer >= 1"),
    ("k=2.5", lm(k=2.5), ValidationError, "k must be an integer >= 1"),
    ("k=str", glm(k="3"), ValidationError, "k must be an integer >= 1"),
    ("select() k=0", sel(k=0), ValidationError, "k must be an integer >= 1"),
    ("select() k > terms", sel(k=4), ValidationError, "use a smaller k"),
    ("select() no terms", sel(formula="y ~ 1", k=1), ValidationError, "no terms to select"),
    ("m=0", lm(m=0), ValidationError, "m must be 'auto' or an integer"),
    ("m=1.5", lm(m=1.5), ValidationError, "m must be 'auto' or an integer"),
    ("m too large", lm(m=MAX_MODELS + 1), ValidationError, "m must be 'auto' or an integer"),
    ("groups=0", lm(groups=0), ValidationError, "groups must be"),
    ("groups huge", sel(method="sublasso", groups=10**12), ValidationError, "groups must be"),
    ("lemma", lm(lemma="9"), UnknownMethodError, "lemma='9'"),
    ("accounting", lm(accounting="exact"), UnknownMethodError, "accounting='exact'"),
    ("random_state<0", lambda b: dp.dp_lm("y ~ x1", DF, eps=1.0, budget=b, random_state=-1),
     ValidationError, "random_state must be"),
    ("bounds str", lm(bounds="public", method="adassp"), ValidationError, "bounds must be"),
    ("bounds reversed", lm(bounds=(2, 1), method="adassp"), ValidationError, "lo < hi"),
    ("bounds nan", lm(bounds=(math.nan, 1), method="bas"), ValidationError, "lo < hi"),
    ("bounds keys", lm(bounds={"z": (0, 1)}, method="fw"), ValidationError, "keys 'x' and 'y'"),
    # --- formulas ----------------------------------------------------------------------------
    ("formula None", lm(formula=None), FormulaError, "must be a string"),
    ("formula no ~", lm(formula="y x1"), FormulaError, "exactly one '~'"),
    ("formula two ~", lm(formula="y ~ x1 ~ x2"), FormulaError, "exactly one '~'"),
    ("formula no terms", lm(formula="y ~"), FormulaError, "has no terms"),
    ("formula no response", lm(formula="~ x1"), FormulaError, "has no response"),
    ("formula dangling +", lm(formula="y ~ x1 +"), FormulaError, "could not be parsed"),
    ("formula open paren", glm(formula="y ~ (x1"), FormulaError, "could not be parsed"),
    ("formula unknown col", lm(formula="y ~ X1"), FormulaError, "did you mean 'x1'"),
    ("formula unknown fn", sel(formula="y ~ nosuch(x1)"), FormulaError, "not a column"),
    ("formula only -1", lm(formula="y ~ -1"), FormulaError, "no terms left"),
    ("formula two responses", lm(formula="y + x1 ~ x2"), FormulaError, "exactly one response"),
    ("formula y on both sides", lm(formula="y ~ y + x1"), FormulaError, "also appear"),
    ("formula multi-part", lm(formula="y ~ x1 | x2"), FormulaError, "multi-part"),
    ("formula center()", lm(formula="y ~ center(x1)"), StatefulTransformError, "public"),
    ("formula scale()", glm(formula="y ~ scale(x1)"), StatefulTransformError, "scale(...)"),
    ("formula poly()", sel(formula="y ~ poly(x1, 2) + x2"), StatefulTransformError, "poly"),
    ("formula np.mean", lm(formula="y ~ I(x1 - np.mean(x1))"), StatefulTransformError,
     "np.mean"),
    # --- data objects ------------------------------------------------------------------------
    ("numpy array", lm(data=DF.drop(columns="g").to_numpy()), DataError,
     "must be a pandas DataFrame"),
    ("list", glm(data=[[1.0, 2.0]]), DataError, "must be a pandas DataFrame"),
    ("None", sel(data=None), DataError, "must be a pandas DataFrame"),
    ("Series", lm(data=DF.y), DataError, "must be a pandas DataFrame"),
    ("file name", lm(data="data.csv"), DataError, "must be a pandas DataFrame"),
    ("not a polars frame", lm(data=fake_frame("polars.dataframe.frame")), DataError,
     "a polars DataFrame or a pyarrow Table is accepted"),
    ("dask frame", glm(data=fake_frame("dask.dataframe.core")), DataError, "data.compute()"),
    ("not a pyarrow table", sel(data=fake_frame("pyarrow.lib")), DataError,
     "must be a pandas DataFrame"),
    ("ragged dict", lm(data={"y": [1.0, 2.0], "x1": [PLANT]}), DataError, "equal-length"),
    ("dict of scalars", lm(data={"y": PLANT, "x1": 2.0}), DataError, "equal-length"),
    ("empty frame", lm(data=pd.DataFrame()), DataError, "is empty (no columns)"),
    ("no columns, some rows", lm(data=DF[[]]), DataError, "is empty (no columns)"),
    ("no columns", sel(data=DF[[]]), DataError, "is empty"),
    ("duplicate names", lm(data=DF.rename(columns={"x2": "x1"})), DataError, "unique strings"),
    ("integer names", lm(data=DF.set_axis(range(5), axis=1)), DataError, "unique strings"),
    ("MultiIndex names", glm(data=BIN.set_axis(pd.MultiIndex.from_product([list("abcde"), ["u"]]),
                                               axis=1)), DataError, "unique strings"),
    # --- data values and types ---------------------------------------------------------------
    ("datetime feature", lm(data=with_col(DF, x1=pd.Timestamp("2020-01-01"))), DataError,
     "dates or times"),
    ("timedelta feature", glm(data=with_col(BIN, x1=pd.Timedelta("1D"))), DataError,
     "dates or times"),
    ("period feature", sel(data=with_col(DF, x1=pd.Period("2020-01", freq="M"))), DataError,
     "dates or times"),
    ("tz datetime dot", sel(formula="y ~ .", data=with_col(DF.drop(columns="g"),
                                                           x1=pd.Timestamp("2020", tz="UTC"))),
     DataError, "dates or times"),
    ("complex feature", lm(data=with_col(DF, x1=lambda d: d.x1 + 1j)), DataError, "complex"),
    ("complex dot", sel(formula="y ~ .", data=with_col(DF.drop(columns="g"),
                                                       x1=lambda d: d.x1 + 1j)),
     DataError, "complex"),
    ("complex label", lm(data=with_col(DF, y=lambda d: d.y + 1j)), DataError, "numeric label"),
    ("text label", lm(data=with_col(DF, y="secret_987654")), DataError, "numeric label"),
    ("categorical label", lm(data=with_col(DF, y=DF.g)), DataError, "numeric label"),
    ("list column", lm(data=with_col(DF, x1=[[PLANT]] * len(DF))), DataError,
     "could not evaluate"),
    ("glm text label", glm(data=with_col(BIN, y="secret_987654")), DataError, "holds text"),
    ("glm 3-level label", glm(data=with_col(BIN, y=pd.Categorical(
        ["secret_987654"] * len(BIN), categories=["secret_987654", "n", "u"]))), DataError,
     "exactly two"),
    ("declared levels violated", lm(formula="y ~ x1 + C(h, levels=['a', 'b'])",
                                    data=with_col(DF, h="secret_987654")), DataError,
     "outside the declared levels"),
]


@pytest.mark.parametrize("call, exc, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_dpstats_error_and_charges_nothing(call, exc, words):
    budget = dp.Budget(100.0, 1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # levels read from data
        warnings.simplefilter("error", RuntimeWarning)        # numpy must stay quiet
        with pytest.raises(DPStatsError) as info:
            call(budget)
    err = info.value
    assert type(err) is exc, f"{type(err).__name__}: {err}"
    assert words in str(err)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty
    assert not any(s in str(err) for s in SECRETS), str(err)


def test_catalogue_is_large_and_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 100


# --- every method and selector runs the same validation before spending ----------------------
# (schema refusals only: infinite or huge values and too few rows are no longer refused, see
# test_bad_inputs_silent.py)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("select", SELECTS, ids=str)
@pytest.mark.parametrize("data, words", [
    (with_col(DF, x3=pd.Timestamp("2020-01-01")), "dates or times"),
    (with_col(DF, x2=lambda d: d.x2 + 1j), "complex"),
    (with_col(DF, y="secret_987654"), "numeric label"),
], ids=["datetime", "complex", "text label"])
def test_every_method_and_selector_validates_first(method, select, data, words):
    budget = dp.Budget(100.0, 1e-2)
    with pytest.raises(DataError, match=words) as info:
        dp.dp_lm("y ~ x1 + x2 + x3", data, eps=1.0, method=method, select=select, k=2,
                 budget=budget, random_state=0)
    assert budget.spent == (0.0, 0.0)
    assert not any(s in str(info.value) for s in SECRETS)


@pytest.mark.parametrize("method", ["fw", "dpgd", "tukey"])
@pytest.mark.parametrize("select", SELECTS, ids=str)
def test_every_glm_method_and_selector_validates_first(method, select):
    budget = dp.Budget(100.0, 1e-2)
    with pytest.raises(DataError, match="dates or times"):
        dp.dp_glm("y ~ x1 + x2 + x3", with_col(BIN, x1=pd.Timedelta("1D")), eps=1.0,
                  method=method, select=select, k=2, budget=budget)
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize("method", ["kendall", "sublasso", "sis", "auto"])
def test_every_selector_of_select_validates_first(method):
    budget = dp.Budget(100.0, 1e-2)
    with pytest.raises(DataError, match="complex"):
        dp.select("y ~ .", with_col(DF.drop(columns="g"), x1=lambda d: d.x1 + 1j), eps=1.0,
                  k=2, method=method, budget=budget)
    assert budget.spent == (0.0, 0.0)


# --- Budget itself -----------------------------------------------------------------------------
@pytest.mark.parametrize("args, words", [
    ((0,), "eps must be a finite number > 0"), ((-1.0,), "eps must be a finite number > 0"),
    ((math.nan,), "eps must be a finite number > 0"), (("1",), "eps must be a positive number"),
    ((None,), "eps must be a positive number"), ((MAX_EPS * 2,), "at most"),
    ((1.0, 1.0), "delta must lie in [0, 1)"), ((1.0, -1e-9), "delta must lie in [0, 1)"),
    ((1.0, math.nan), "delta must lie in [0, 1)"), ((1.0, "x"), "delta must be a number"),
], ids=repr)
def test_budget_refuses_bad_totals(args, words):
    with pytest.raises(PrivacyParameterError) as info:
        dp.Budget(*args)
    assert words in str(info.value)


@pytest.mark.parametrize("eps, delta", [("a", 0.0), (-1.0, 0.0), (1.0, None), (1.0, -1e-6)],
                         ids=repr)
def test_budget_check_refuses_bad_requests(eps, delta):
    b = dp.Budget(1.0, 1e-5)
    for ask in (b.check, b.ledger_for):
        with pytest.raises(PrivacyParameterError, match="Budget.check needs"):
            ask(eps, delta)
    assert b.spent == (0.0, 0.0) and b.ledger.empty


def test_polars_lazy_frame_is_refused_with_the_call_that_collects_it():
    pl = pytest.importorskip("polars")    # a DataFrame is accepted: tests/formula/test_frames.py
    data = pl.DataFrame({"y": [1.0, 2.0, 3.0], "x": [0.0, 1.0, 2.0]}).lazy()
    with pytest.raises(DataError, match=r"data\.collect\(\)"):
        dp.dp_lm("y ~ x", data, eps=1.0)
