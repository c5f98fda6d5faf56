"""Category levels the data does not declare: discovered privately by default (dp_lm, dp_glm,
select), never released verbatim; declared levels cost nothing; ``levels="data"`` is marked
NOT private.

The canary: a unique level string planted in one row must not appear in any output of a
private fit (params, repr, text and HTML summaries, tidy, ledger, notes, warnings).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import (
    FormulaError,
    NotPrivateWarning,
    PrivacyLeakWarning,
    UnknownMethodError,
    ValidationError,
)
from dpstats.mechanisms.levels import stability_threshold
from dpstats.pipeline.budget import LEVELS_SHARE

CANARY = "CANARY_7f3a_SINGLETON"
N = 12_000


def _frame(seed: int = 0, n: int = N, canary: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]).astype(object)
    g[:120] = [f"rare{i}" for i in range(120)]           # 120 singletons: pooled or dropped
    if canary:
        g[200] = CANARY
    x = rng.standard_normal(n)
    y = 1 + 2 * x + (g == "b") - 0.5 * (g == "c") + rng.standard_normal(n)
    label = (y > 1.2).astype(int)
    return pd.DataFrame({"y": y, "x": x, "g": g, "label": label,
                         "h": rng.choice(["u", "v"], n).astype(object)})


@pytest.fixture(scope="module")
def data():
    return _frame()


def _fit_quietly(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fn(*args, **kwargs)
    return fit, [str(w.message) for w in caught]


def _outputs(fit, messages) -> list[str]:
    out = [repr(fit), str(fit), *messages, fit.ledger.to_string(), str(getattr(fit, "notes", ""))]
    summary = fit.summary()
    out += [str(summary), summary.as_html()]
    if hasattr(fit, "params"):
        out += [fit.params.to_string(), fit.tidy().to_string(), str(list(fit.params.index)),
                str(fit.spec.columns), str(fit.selected)]
    else:
        out += [str(fit.selected)]
    return out


CASES = {
    "lm tukey": (dp.dp_lm, "y ~ x + g", dict(eps=1.0)),
    "lm adassp y ~ .": (dp.dp_lm, "y ~ . - label", dict(eps=1.0, method="adassp")),
    "lm kendall": (dp.dp_lm, "y ~ x + g + h + x:g", dict(eps=1.0, select="kendall", k=2)),
    "glm fw": (dp.dp_glm, "label ~ x + g", dict(eps=1.0)),
    "select": (dp.select, "y ~ x + g + h", dict(eps=1.0, k=2, delta=1e-6)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_singleton_level_never_appears_in_any_output(data, case):
    fn, formula, kwargs = CASES[case]
    fit, messages = _fit_quietly(fn, formula, data, random_state=4, **kwargs)
    assert fit.private is True
    for text in _outputs(fit, messages):
        assert CANARY not in text
        assert "rare7" not in text


def test_common_levels_are_discovered_and_fitted(data):
    fit, messages = _fit_quietly(dp.dp_lm, "y ~ x + g", data, eps=2.0, random_state=1)
    assert list(fit.params.index) == ["Intercept", "x", "g[T.b]", "g[T.c]"]
    assert not any("read from the data" in m for m in messages)
    assert fit.params["g[T.b]"] == pytest.approx(1.0, abs=0.3)
    assert fit.params["x"] == pytest.approx(2.0, abs=0.2)
    assert fit.spec.levels_from_data == ()
    assert "discovered privately" in fit.notes[0]


def test_many_rare_rows_form_the_pooled_level():
    df = _frame(n=40_000)
    df.loc[:6000, "g"] = [f"tail{i % 3000}" for i in range(6001)]   # 3000 levels of ~2 rows
    fit, _ = _fit_quietly(dp.dp_lm, "y ~ x + g", df, eps=1.0, random_state=0)
    assert list(fit.params.index) == ["Intercept", "x", "g[T.b]", "g[T.c]", "g[T.(other)]"]
    pred = fit.predict(pd.DataFrame({"x": [0.0, 0.0], "g": ["never seen", "tail1"]}))
    assert pred[0] == pred[1] == pytest.approx(fit.params["Intercept"]
                                               + fit.params["g[T.(other)]"])


def test_adding_the_singleton_row_does_not_change_the_coefficient_names():
    with_row, without = _frame(canary=True), _frame(canary=False)
    for seed in range(3):
        a, _ = _fit_quietly(dp.dp_lm, "y ~ x + g", with_row, eps=1.0, random_state=seed)
        b, _ = _fit_quietly(dp.dp_lm, "y ~ x + g", without, eps=1.0, random_state=seed)
        assert list(a.params.index) == list(b.params.index)


def _levels_charges(fit):
    return [c for c in fit.charges if c.stage == "levels"]


def test_ledger_has_a_levels_stage_with_its_share(data):
    eps, delta = 2.0, 1e-5
    fit, _ = _fit_quietly(dp.dp_lm, "y ~ x + g + h", data, eps=eps, delta=delta,
                          random_state=2)
    lv = _levels_charges(fit)
    assert [c.mechanism for c in lv] == ["stability histogram"] * 2
    assert "'g'" in lv[0].detail and "'h'" in lv[1].detail
    assert math.fsum(c.eps for c in lv) == pytest.approx(LEVELS_SHARE * eps)
    assert math.fsum(c.delta for c in lv) == pytest.approx(LEVELS_SHARE * delta)
    assert fit.charges[0].stage == "levels" and fit.charges[1].stage == "levels"
    assert fit.spent == pytest.approx((eps, delta))
    assert fit.split["levels"] == pytest.approx(LEVELS_SHARE * eps)
    assert fit.split["regression"] == pytest.approx(eps * (1 - LEVELS_SHARE - 0.05))
    _, _, tau = stability_threshold(LEVELS_SHARE * eps / 2 / 2, LEVELS_SHARE * delta / 2)
    assert f">= {tau}" in lv[0].detail and f"reaches {tau}" in fit.notes[0]


def test_glm_levels_stage(data):
    fit, _ = _fit_quietly(dp.dp_glm, "label ~ x + g", data, eps=1.0, delta=1e-5,
                          random_state=3)
    lv = _levels_charges(fit)
    assert len(lv) == 1 and lv[0].eps == pytest.approx(0.05) and lv[0].delta == \
        pytest.approx(5e-7)
    assert fit.spent == pytest.approx((1.0, 1e-5))
    assert {"g[T.b]", "g[T.c]"} <= set(fit.params.index)


def test_select_spends_its_delta_on_the_levels_only(data):
    res, _ = _fit_quietly(dp.select, "y ~ x + g + h", data, eps=1.0, k=2, delta=1e-6,
                          random_state=1)
    lv = _levels_charges(res)
    assert math.fsum(c.eps for c in lv) == pytest.approx(LEVELS_SHARE)
    assert math.fsum(c.delta for c in lv) == pytest.approx(1e-6)
    assert res.spent == pytest.approx((1.0, 1e-6))
    assert res.private is True and len(res.selected) == 2


def test_declared_levels_cost_nothing(data):
    cat = data.assign(g=pd.Categorical(data["g"].where(data["g"].isin(["a", "b", "c"])),
                                       categories=["a", "b", "c"]))
    for formula, frame in (("y ~ x + g", cat),
                           ("y ~ x + C(g, levels=['a', 'b', 'c'])", cat),
                           ("y ~ x + C(g, levels=['a', 'b', 'c'])",
                            data[data["g"].isin(["a", "b", "c"])])):
        fit, messages = _fit_quietly(dp.dp_lm, formula, frame, eps=1.0, random_state=0)
        assert not _levels_charges(fit) and "levels" not in fit.split
        assert not messages or not any("levels" in m for m in messages)


def test_bundled_data_need_no_levels_stage():
    df = dp.datasets.load("diamonds").head(4000)
    fit, messages = _fit_quietly(dp.dp_lm, "price ~ carat + cut + color", df, eps=1.0,
                                 select=None, random_state=0)
    assert not _levels_charges(fit) and not messages
    assert "cut[T.Ideal]" in fit.params.index


def test_numeric_only_fit_has_no_levels_key(data):
    fit, _ = _fit_quietly(dp.dp_lm, "y ~ x", data, eps=1.0, random_state=0)
    assert list(fit.split) == ["n", "selection", "regression"]


def test_levels_data_opt_out_is_marked_not_private(data):
    with pytest.warns(NotPrivateWarning, match="levels='data'"):
        fit = dp.dp_lm("y ~ x + g", data, eps=1.0, levels="data", random_state=0)
    assert fit.private is False and "NOT PRIVATE" in repr(fit)
    text, html = str(fit.summary()), fit.summary().as_html()
    assert "NOT PRIVATE" in text and "NOT PRIVATE" in html and "levels='data'" in text
    assert "g[T.rare7]" in fit.params.index          # what the opt-out means
    assert not _levels_charges(fit)
    with pytest.warns(NotPrivateWarning):
        glm = dp.dp_glm("label ~ x + g", data, eps=1.0, levels="data", random_state=0)
    assert glm.private is False
    with pytest.warns(NotPrivateWarning):
        sel = dp.select("y ~ x + g", data, eps=1.0, k=1, levels="data", random_state=0)
    assert sel.private is False and "NOT PRIVATE" in str(sel) and "NOT PRIVATE" in repr(sel)


def test_levels_data_with_declared_levels_stays_private(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = dp.dp_lm("y ~ x", data, eps=1.0, levels="data", random_state=0)
    assert fit.private is True


def test_ols_still_reads_levels_and_says_so(data):
    with pytest.warns(NotPrivateWarning), pytest.warns(PrivacyLeakWarning):
        fit = dp.dp_lm("y ~ x + g", data, eps=1.0, method="ols")
    assert fit.private is False and not fit.charges


@pytest.mark.parametrize("call, err, match", [
    (lambda d, b: dp.dp_lm("y ~ x + g", d, eps=1.0, budget=b,
                           split={"n": 0.1, "regression": 0.9}), ValidationError, "'levels'"),
    (lambda d, b: dp.select("y ~ x + g", d, eps=1.0, k=1, budget=b), ValidationError,
     "delta"),
    (lambda d, b: dp.dp_lm("y ~ x + g", d, eps=1.0, budget=b, levels="maybe"),
     UnknownMethodError, "levels"),
    (lambda d, b: dp.dp_lm("y ~ x + C(g + h)", d, eps=1.0, budget=b), FormulaError,
     "cannot be traced"),
    (lambda d, b: dp.dp_glm("label ~ g + I(g == 'a')", d, eps=1.0, budget=b), FormulaError,
     "declare their levels"),
])
def test_refusals_charge_nothing(data, call, err, match):
    budget = dp.Budget(5.0, 1e-4)
    with pytest.raises(err, match=match) as exc:
        call(data, budget)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty
    assert CANARY not in str(exc.value)


def test_split_with_a_levels_share(data):
    fit, _ = _fit_quietly(dp.dp_lm, "y ~ x + g", data, eps=1.0, random_state=0,
                          split={"levels": 0.2, "n": 0.1, "regression": 0.7})
    assert math.fsum(c.eps for c in _levels_charges(fit)) == pytest.approx(0.2)
    assert math.fsum(c.delta for c in _levels_charges(fit)) == pytest.approx(0.2e-5)


def test_an_id_column_in_y_dot_is_pooled_without_a_column_per_id():
    df = _frame(n=20_000)
    df["id"] = [f"person-{i}" for i in range(len(df))]      # 20,000 levels of one row each
    fit, messages = _fit_quietly(dp.dp_lm, "y ~ x + g + id", df, eps=1.0, random_state=0)
    assert list(fit.params.index) == ["Intercept", "x", "g[T.b]", "g[T.c]"]
    assert not any("person-" in t for t in _outputs(fit, messages))
