"""The bad-input catalogue, part 2: ``predict``/``score`` errors, and awkward inputs whose
documented outcome is a result rather than an error.

Documented outcomes checked here:

* degenerate designs (a constant, duplicated or perfectly collinear column, a bool column, a
  declared level never observed) fit with every method: nothing is dropped from ``params``,
  released coefficients are finite, a Tukey fit may instead fail PTR (``released=False``, NaN
  coefficients, a note), and numpy emits no RuntimeWarning;
* rows with missing values (even rows missing everything) are dropped, and the fit equals the
  fit on the complete rows;
* ``k`` larger than the number of terms skips selection with a note;
* integer columns are evaluated as float64, so formula arithmetic cannot wrap around;
* a dict of equal-length columns is accepted wherever a DataFrame is (converted by pandas);
* scale: the Tukey method is scale-free (1e100-scaled data fit fine); methods with private
  bounds note (and warn) when the bounds reach an end of their grid; a value beyond 1e150
  makes its row missing and one below 1e-150 becomes 0 (test_bad_inputs_silent.py);
* a tiny eps gives an ordinary (usually unreleased) result, never a crash;
* ``predict`` gives NaN for rows with missing inputs and non-finite values for infinite ones;
  ``score`` on a constant label is NaN (R^2 is undefined).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import (
    DataError,
    DPStatsError,
    NotPrivateWarning,
    PredictionError,
    PrivacyLeakWarning,
    ValidationError,
)
from dpstats.estimators import METHODS

SECRETS = ("987654", "9.87654", "secret")
GRID_NOTE = "The private clipping bounds"


def frame(n: int = 8000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["g"] = pd.Categorical(rng.choice(["a", "b"], size=n), categories=["a", "b", "c"])
    df["h"] = rng.choice(["u", "v"], size=n)
    df["y"] = df.x1 - df.x2 + 0.5 * rng.normal(size=n)
    return df


DF = frame()
BIN = DF.assign(y=(DF.y > 0).astype(int))


@pytest.fixture
def quiet():
    """numpy RuntimeWarnings (overflow, divide by zero, invalid value) become errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", NotPrivateWarning)
        warnings.filterwarnings("ignore", GRID_NOTE)    # an all-zero dummy column's bounds
        yield


# --- predict and score: errors -----------------------------------------------------------------
@pytest.fixture(scope="module")
def fits():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (PrivacyLeakWarning, NotPrivateWarning))
        warnings.filterwarnings("ignore", GRID_NOTE)
        return {
            "tukey": dp.dp_lm("y ~ x1 + x2 + g + h", DF, eps=5.0, method="tukey",
                              random_state=0),
            "adassp": dp.dp_lm("y ~ x1 + g", DF, eps=5.0, method="adassp", random_state=0),
            "ols": dp.dp_lm("y ~ x1 + x2", DF, eps=5.0, method="ols"),
            "glm": dp.dp_glm("y ~ x1 + g", BIN, eps=5.0, random_state=0),
            "glm_cat": dp.dp_glm("y ~ x1", BIN.assign(y=pd.Categorical(
                np.where(BIN.y == 1, "yes", "no"), categories=["no", "yes"])), eps=5.0,
                method="dpgd", random_state=0),
        }


NEW = DF.head(40).reset_index(drop=True)
BNEW = BIN.head(40).reset_index(drop=True)
SCORE_NEW = {"tukey": NEW, "adassp": NEW, "ols": NEW, "glm": BNEW,
             "glm_cat": BNEW.assign(y=np.where(BNEW.y == 1, "yes", "no"))}

PREDICT_CASES = [
    ("missing column", lambda d: d.drop(columns="x1"), PredictionError, "lacks the column(s)"),
    ("unseen declared level", lambda d: d.assign(g=pd.Categorical(["secret_987654"] * len(d))),
     PredictionError, "not seen or declared at fit time"),
    ("unseen level as text", lambda d: d.assign(g="secret_987654"), PredictionError,
     "['g']"),
    ("numpy array", lambda d: d.to_numpy(), DataError, "must be a pandas DataFrame"),
    ("ragged dict", lambda d: {"x1": [1.0, 2.0], "g": ["a"]}, DataError, "equal-length"),
    ("empty frame", lambda d: d.iloc[:0], DataError, "is empty"),
    ("text in numeric column", lambda d: d.assign(x1="secret_987654"), PredictionError,
     "could not evaluate"),
    ("datetime column", lambda d: d.assign(x1=pd.Timestamp("2020-01-01")), DataError,
     "dates or times"),
]


@pytest.mark.parametrize("which", ["tukey", "adassp", "glm"])
@pytest.mark.parametrize("change, exc, words", [c[1:] for c in PREDICT_CASES],
                         ids=[c[0] for c in PREDICT_CASES])
def test_predict_errors_name_the_fix_not_the_value(fits, which, change, exc, words):
    data = BNEW if which.startswith("glm") else NEW
    with pytest.raises(DPStatsError) as info:
        fits[which].predict(change(data))
    assert type(info.value) is exc and words in str(info.value)
    assert not any(s in str(info.value) for s in SECRETS)


SCORE_CASES = [
    ("no label", lambda d: d.drop(columns="y"), PredictionError, "'y'"),
    ("text label", lambda d: d.assign(y="secret_987654"), DPStatsError, "'y'"),
    ("label all missing", lambda d: d.assign(y=np.nan), DataError, "no rows of `newdata`"),
    ("infinite label", lambda d: d.assign(y=np.inf), DPStatsError, "'y'"),
    ("huge values", lambda d: d.assign(x1=d.x1 * 1e300), DataError, "rescale"),
    ("not a frame", lambda d: d.to_numpy(), DataError, "must be a pandas DataFrame"),
]


@pytest.mark.parametrize("which", ["tukey", "ols", "glm", "glm_cat"])
@pytest.mark.parametrize("change, exc, words", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score_errors_name_the_fix_not_the_value(fits, which, change, exc, words, quiet):
    with pytest.raises(exc) as info:
        fits[which].score(change(SCORE_NEW[which]))
    assert words in str(info.value)
    assert not any(s in str(info.value) for s in SECRETS)


@pytest.mark.parametrize("which, label, words", [
    ("glm", 2, "coded 0/1"), ("glm_cat", "secret_987654", "other than the two fitted levels"),
])
def test_glm_score_refuses_a_differently_coded_label(fits, which, label, words):
    with pytest.raises(PredictionError, match=words) as info:
        fits[which].score(SCORE_NEW[which].assign(y=label))
    assert "987654" not in str(info.value)


def test_glm_predict_type_is_checked(fits):
    with pytest.raises(ValidationError, match="type='response'"):
        fits["glm"].predict(BNEW, type="probability")


def test_predict_missing_and_infinite_inputs(fits, quiet):
    new = NEW.copy()
    new.loc[1, "x1"], new.loc[2, "x2"] = np.nan, np.inf
    for name in ("tukey", "ols"):
        pred = fits[name].predict(new)
        assert pred.index.equals(new.index) and np.isnan(pred[1])
        assert not np.isfinite(pred[2]) and np.isfinite(pred.drop([1, 2])).all()
    # methods fitted on clipped inputs clip new inputs to the released box first
    prob = fits["glm"].predict(new.assign(x1=[np.inf, -np.inf] * 20))
    assert fits["glm"].clip is not None and np.isfinite(prob).all()
    assert ((prob > 0) & (prob < 1)).all()


def test_score_of_a_constant_label_is_nan(fits, quiet):
    assert math.isnan(fits["tukey"].score(NEW.assign(y=1.0)))
    assert math.isnan(fits["ols"].score(NEW.head(1)))


def test_dict_newdata_is_converted(fits):
    new = {c: NEW[c].tolist() for c in ("x1", "x2", "g", "h")}
    pd.testing.assert_series_equal(fits["tukey"].predict(new), fits["tukey"].predict(NEW))


# --- degenerate designs: documented results ----------------------------------------------------
DEGENERATE = {
    "constant": ("c", lambda d: d.assign(c=3.0)),
    "duplicate": ("x1b", lambda d: d.assign(x1b=d.x1)),
    "collinear": ("lin", lambda d: d.assign(lin=d.x1 + 2.0 * d.x2)),
    "bool": ("flag", lambda d: d.assign(flag=d.x1 > 0)),          # coded 0/1
    "unobserved declared level": ("g[T.c]", lambda d: d),
}


def _check_result(fit, column, eps):
    assert column in fit.params.index and fit.spent[0] <= eps * (1 + 1e-9)
    if fit.released:
        assert np.isfinite(fit.params.to_numpy()).all()
    else:   # the documented failure of a Tukey fit: PTR (or too few models), NaN coefficients
        assert fit.method == "tukey" and fit.params.isna().all()
        assert fit.unreleased_reason in ("ptr_failed", "too_few_models") and fit.notes


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("design", list(DEGENERATE))
def test_degenerate_designs_fit_with_every_method(method, design, quiet):
    column, make = DEGENERATE[design]
    data = make(DF.drop(columns="h"))
    fit = dp.dp_lm("y ~ .", data, eps=2.0, method=method, select=None, random_state=1)
    _check_result(fit, column, 2.0)
    if method == "ols":
        assert fit.released and not fit.private


@pytest.mark.parametrize("method", ["fw", "dpgd", "tukey"])
@pytest.mark.parametrize("design", list(DEGENERATE))
def test_degenerate_designs_fit_with_every_glm_method(method, design, quiet):
    column, make = DEGENERATE[design]
    data = make(BIN.drop(columns="h"))
    fit = dp.dp_glm("y ~ .", data, eps=2.0, method=method, select=None, random_state=1)
    _check_result(fit, column, 2.0)


@pytest.mark.parametrize("select", ["kendall", "sublasso", "sis"])
def test_degenerate_columns_can_be_selected_from(select, quiet):
    data = DEGENERATE["collinear"][1](DEGENERATE["constant"][1](DF.drop(columns=["g", "h"])))
    fit = dp.dp_lm("y ~ .", data, eps=2.0, select=select, k=2, method="adassp",
                   random_state=2)
    assert len(fit.selected) == 2 and set(fit.selected) <= {"x1", "x2", "c", "lin"}
    res = dp.select("y ~ .", data, eps=2.0, method=select, k=2, random_state=2)
    assert len(res.selected) == 2


def test_rows_with_missing_values_are_dropped_even_all_missing(quiet):
    data = DF.drop(columns=["g", "h"]).head(4000)
    holes = pd.concat([data, pd.DataFrame(np.nan, index=range(7), columns=data.columns)],
                      ignore_index=True)
    holes.loc[3, "x1"] = np.nan
    clean = data.drop(index=3).reset_index(drop=True)
    for method in ("tukey", "adassp", "ols"):
        a = dp.dp_lm("y ~ .", holes, eps=2.0, method=method, random_state=3)
        b = dp.dp_lm("y ~ .", clean, eps=2.0, method=method, random_state=3)
        pd.testing.assert_series_equal(a.params, b.params)


@pytest.mark.parametrize("select", ["kendall", "sublasso", "sis"])
def test_k_larger_than_the_terms_skips_selection_with_a_note(select, quiet):
    fit = dp.dp_lm("y ~ x1 + x2", DF, eps=2.0, select=select, k=5, method="adassp",
                   random_state=0)
    assert fit.selected == [] and fit.selector is None
    assert any("skipped" in note and "k=5" in note for note in fit.notes)
    auto = dp.dp_lm("y ~ x1 + x2", DF, eps=2.0, select="auto", k=5, random_state=0)
    assert auto.selector is None and auto.split["selection"] == 0.0


# --- integers, dicts -------------------------------------------------------------------------
def test_integer_columns_cannot_wrap_around(quiet):
    rng = np.random.default_rng(4)
    n = 3000
    data = pd.DataFrame({"i8": rng.integers(100, 127, n).astype(np.int8),
                         "u8": rng.integers(0, 5, n).astype(np.uint8),
                         "big": rng.integers(2**62, 2**62 + 1000, n).astype(np.int64)})
    data["y"] = rng.normal(size=n)
    fit = dp.dp_lm("y ~ I(i8 * 100) + I(u8 - 10) + I(big * 4)", data, eps=1.0,
                   method="ols")
    X = dp.formula.design.design_for_new_data(fit.spec, data)
    exact = np.column_stack([np.ones(n), data.i8.astype(float) * 100,
                             data.u8.astype(float) - 10, data.big.astype(float) * 4])
    np.testing.assert_allclose(X, exact)
    assert (X[:, 2] < 0).all() and (X[:, 1] > 127).all()


def test_integer_categories_keep_their_level_names(quiet):
    data = DF.assign(k=np.arange(len(DF)) % 3)
    fit = dp.dp_lm("y ~ C(k, levels=[0, 1, 2])", data, eps=1.0, method="ols")
    assert list(fit.params.index) == ["Intercept", "C(k, levels=[0, 1, 2])[T.1]",
                                      "C(k, levels=[0, 1, 2])[T.2]"]


def test_a_dict_of_columns_is_accepted_everywhere():
    cols = {c: DF[c].to_numpy() for c in ("x1", "x2", "y")}
    a = dp.dp_lm("y ~ x1 + x2", cols, eps=2.0, random_state=5)
    b = dp.dp_lm("y ~ x1 + x2", DF[["x1", "x2", "y"]], eps=2.0, random_state=5)
    pd.testing.assert_series_equal(a.params, b.params)
    g = dp.dp_glm("y ~ x1", {"x1": BIN.x1.to_numpy(), "y": BIN.y.astype(bool).to_numpy()},
                  eps=2.0, method="dpgd", random_state=5)
    assert g.released
    assert len(dp.select("y ~ .", cols, eps=2.0, k=1, random_state=5).selected) == 1


# --- scale ---------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_tukey_is_scale_free_within_the_accepted_range(scale, quiet):
    data = DF[["x1", "x2", "y"]].head(6000) * scale
    fit = dp.dp_lm("y ~ x1 + x2", data, eps=2.0, random_state=6, method="tukey")
    assert fit.released and not fit.notes
    np.testing.assert_allclose(fit.params[["x1", "x2"]], [1.0, -1.0], atol=0.1)


def test_dpgd_leaves_out_columns_beyond_the_grid_and_says_so(quiet):
    data = DF[["x1", "x2", "y"]].assign(x1=DF.x1 * 1e30)
    fit = dp.dp_lm("y ~ x1 + x2", data, eps=2.0, method="dpgd", random_state=7)
    assert fit.params["x1"] == 0.0
    assert any("left out" in n and "rescale" in n for n in fit.notes)


@pytest.mark.parametrize("method", ["adassp", "bas", "fw"])
def test_private_bounds_at_the_top_of_the_grid_are_noted(method, quiet):
    data = DF[["x1", "x2", "y"]].assign(x1=DF.x1 * 1e30)
    with pytest.warns(UserWarning, match=r"top of dpstats' grid") as rec:
        fit = dp.dp_lm("y ~ x1 + x2", data, eps=2.0, method=method, random_state=7)
    assert "['x1']" in str(rec[0].message) and any("rescale those columns" in n for n in fit.notes)
    assert rec[0].filename == __file__          # the warning points at the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)   # public bounds: the user's choice
        dp.dp_lm("y ~ x1 + x2", data, eps=2.0, method=method, random_state=7,
                 bounds={"x": (-1e31, 1e31), "y": (-10, 10)})


def test_tiny_columns_are_noted_by_the_bounded_methods(quiet):
    data = DF[["x1", "x2", "y"]].assign(x1=DF.x1 * 1e-30)
    with pytest.warns(UserWarning, match="bottom of dpstats' grid"):
        dp.dp_lm("y ~ x1 + x2", data, eps=2.0, method="adassp", random_state=8)
    fit = dp.dp_lm("y ~ x1 + x2", data, eps=2.0, method="dpgd", random_state=8)
    assert fit.params["x1"] == 0.0 and any("left out" in n for n in fit.notes)


@pytest.mark.parametrize("api", ["lm", "glm", "select"])
def test_tiny_eps_gives_an_ordinary_result(api, quiet):
    data = DF.drop(columns=["g", "h"]).assign(z1=DF.x1 * 2, z2=DF.x2 + 1, z3=1.0, z4=DF.x1 ** 2,
                                              z5=DF.x2 - DF.x1)
    for eps in (1e-9, 1e-6):
        if api == "lm":
            out = dp.dp_lm("y ~ .", data, eps=eps, random_state=9)
        elif api == "glm":
            out = dp.dp_glm("y ~ .", data.assign(y=BIN.y), eps=eps, method="tukey",
                            random_state=9)
        else:
            out = dp.select("y ~ .", data, eps=eps, method="sublasso", k=2, random_state=9)
        assert sum(c.eps for c in out.charges) <= eps * (1 + 1e-9)


def test_ptr_failure_and_too_few_models_are_results(quiet):
    small = DF[["x1", "x2", "y"]].head(300)
    fit = dp.dp_lm("y ~ x1 + x2", small, eps=0.1, random_state=10)
    assert not fit.released and fit.params.isna().all() and fit.notes
    few = dp.dp_lm("y ~ x1 + x2", small, eps=1.0, m=3, method="tukey", random_state=10)
    assert not few.released and few.unreleased_reason == "too_few_models"
    assert few.spent == (0.0, 0.0) and "Too few rows" in few.notes[-1]
