"""Any column name pandas allows (dots as in R's ``sample.yr``, spaces, leading digits, unicode)
works in fit, predict, score, summary and the CLI, for dp_lm and dp_glm, with numeric columns,
a declared ``pd.Categorical`` and a text column whose levels are discovered privately.

formulaic's ``required_variables`` cuts a name at its first dot (``flc.grp`` -> ``flc``), so
``predict`` once refused the fitted frame itself; a fit under odd names must equal, bit for bit,
the same fit under plain names.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.__main__ import main
from dpstats.errors import FormulaError, PredictionError
from dpstats.formula.design import build_design, design_for_new_data, response_for_new_data

ODD = ["y.val", "sample.yr", "flc.grp", "1st", "naïve", "a b", "txt.col"]
PLAIN = ["y", "x1", "x2", "x3", "x4", "x5", "x6"]


def odd_frame(n: int = 3000, *, binary: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, 4))
    grp = pd.Categorical(rng.choice(list("abc"), n), categories=list("abc"))
    txt = rng.choice(["u", "v"], n).astype(object)
    y = x[:, 0] + 0.5 * x[:, 2] + (txt == "v") + rng.normal(size=n)
    y = (y > 0.5).astype(int) if binary else y
    return pd.DataFrame({"y.val": y, "sample.yr": x[:, 0], "flc.grp": grp, "1st": x[:, 1],
                         "naïve": x[:, 2], "a b": x[:, 3], "txt.col": txt})


FITS = {"lm": (dp.dp_lm, {}, False), "glm": (dp.dp_glm, {"family": "binomial"}, True)}


@pytest.mark.parametrize("kind", FITS)
def test_odd_names_fit_predict_score_like_plain_names(kind):
    fit_fn, kw, binary = FITS[kind]
    odd = odd_frame(binary=binary)
    plain = odd.set_axis(PLAIN, axis=1)
    a = fit_fn("`y.val` ~ .", odd, eps=2.0, random_state=1, **kw)
    b = fit_fn("y ~ .", plain, eps=2.0, random_state=1, **kw)
    assert a.released and b.released
    assert list(a.params.index) == ["Intercept", "sample.yr", "flc.grp[T.b]", "flc.grp[T.c]",
                                    "1st", "naïve", "a b", "txt.col[T.v]"]
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    assert [c.eps for c in a.charges] == [c.eps for c in b.charges]
    pa, pb = a.predict(odd), b.predict(plain)
    np.testing.assert_array_equal(pa.to_numpy(), pb.to_numpy())
    assert np.isfinite(pa.to_numpy()).all()
    shuffled = odd[ODD[:0:-1]]                     # reordered, no response: predict still works
    np.testing.assert_array_equal(a.predict(shuffled).to_numpy(), pa.to_numpy())
    assert a.score(odd) == b.score(plain)
    text = str(a.summary())
    assert all(name in text for name in ODD[1:])
    assert any("txt.col" in note for note in a.notes)   # its levels were discovered privately


@pytest.mark.parametrize("kind", FITS)
def test_missing_odd_column_is_named_in_full(kind):
    fit_fn, kw, binary = FITS[kind]
    odd = odd_frame(binary=binary)
    fit = fit_fn("`y.val` ~ `sample.yr` + `flc.grp`", odd, eps=2.0, random_state=1, select=None,
                 **kw)
    with pytest.raises(PredictionError, match=r"\['flc.grp'\]"):
        fit.predict(odd.drop(columns="flc.grp"))


def test_transforms_of_odd_names_rebuild_on_new_data(no_warnings):
    odd = odd_frame(40)
    formula = ("`y.val` ~ np.log(np.abs(`sample.yr`) + 1) + C(`flc.grp`, levels=['a', 'b', 'c'])"
               " + I(`a b` * 2) + `1st`:naïve + sample.yr")
    d = build_design(formula, odd.drop(columns="txt.col"))
    assert d.variables == ("y.val", "sample.yr", "flc.grp", "a b", "1st", "naïve")
    np.testing.assert_array_equal(design_for_new_data(d, odd[ODD[:0:-1]]), d.X)
    X, y = response_for_new_data(d, odd)
    np.testing.assert_array_equal(X, d.X)
    np.testing.assert_array_equal(y, d.y)


@pytest.fixture(scope="module")
def odd_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("odd") / "odd names.csv"
    odd_frame(binary=True).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("command", ["lm", "glm"])
def test_cli_json_with_odd_headers(capsys, odd_csv, command):
    code = main([command, "`y.val` ~ .", str(odd_csv), "--eps", "2", "--seed", "1", "--json",
                 "--levels", "flc.grp=a,b,c"])
    out, _ = capsys.readouterr()
    assert code == 0
    res = json.loads(out)
    data = pd.read_csv(odd_csv)
    data["flc.grp"] = pd.Categorical(data["flc.grp"], categories=list("abc"))
    fit_fn = dp.dp_lm if command == "lm" else dp.dp_glm
    fit = fit_fn("`y.val` ~ .", data, eps=2.0, random_state=1)
    assert res["released"] is True
    assert list(res["params"]) == list(fit.params.index)
    assert res["params"] == pytest.approx(fit.params.to_dict())
    assert {"sample.yr", "1st", "naïve", "a b", "flc.grp[T.b]", "txt.col[T.v]"} <= set(
        res["params"])


WEIRD = ["class", "lambda", "it's", 'say "hi"', "a-b", "x:y", "(p)", "a~b", "a+b", "x[1]", "np",
         "C", "Q", "é.ü", " lead", "tab\tx", "y.1", "$x", "a/b", "True", "None", "0", "1"]


@pytest.mark.parametrize("name", WEIRD)
def test_any_pandas_name_is_a_column_of_the_design(name, no_warnings):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"y": rng.normal(size=30), name: rng.normal(size=30),
                       "g.g": pd.Categorical(rng.choice(["a", "b"], 30), categories=["a", "b"])})
    d = build_design("y ~ .", df)       # a categorical column: through formulaic
    assert len(d.columns) == 3 and d.variables == ("y", name, "g.g")
    np.testing.assert_array_equal(d.X[:, 1], df[name].to_numpy())
    np.testing.assert_array_equal(design_for_new_data(d, df[["g.g", name]]), d.X)


def test_a_column_named_1_is_not_the_intercept(no_warnings):
    """formulaic reads `1` as the intercept even in backticks: ``.`` writes Q('1'), and a
    formula that writes `1` is refused with that fix."""
    df = pd.DataFrame({"y": [1.0, 2.0, 4.0, 3.0], "1": [0.0, 1.0, 2.0, 5.0],
                       "g": pd.Categorical(list("abab"))})
    d = build_design("y ~ .", df)
    assert d.columns == ["Intercept", "Q('1')", "g[T.b]"] and d.expanded == "y ~ (Q('1') + g)"
    np.testing.assert_array_equal(design_for_new_data(d, df), d.X)
    with pytest.raises(FormulaError, match=r"Q\('1'\)"):
        build_design("y ~ `1` + g", df)
