"""Tests for dpstats.lab.experiments: seeded splits, tidy results, failures as -inf, validation."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.errors import FormulaError, ValidationError
from dpstats.lab import experiments as ex

HOUSES = dp.datasets.load("california").head(4000)
DATA = {"houses": (HOUSES, "median_house_value ~ median_income + housing_median_age")}
FAST = {"adassp": {"method": "adassp", "select": None}}


class Recorder:
    """A callable config that records the rows it was trained on and returns a stub fit."""

    def __init__(self, released=True, value=0.5):
        self.calls, self.released, self.value = [], released, value

    def __call__(self, train, *, formula, eps, delta, random_state):
        self.calls.append({"index": train.index.to_numpy(), "eps": eps, "delta": delta,
                           "formula": formula, "state": random_state})
        released, value = self.released, self.value

        class Fit:
            def score(self, test):
                return value
        fit = Fit()
        fit.released = released
        return fit


def test_tidy_columns_and_one_row_per_fit():
    df = ex.run({**FAST, "rec": Recorder()}, DATA, trials=3, eps=[0.5, 2.0])
    assert list(df.columns) == ex.COLUMNS
    assert len(df) == 3 * 2 * 2
    assert set(df["method"]) == {"adassp", "rec"} and set(df["dataset"]) == {"houses"}
    assert sorted(set(df["trial"])) == [0, 1, 2] and sorted(set(df["eps"])) == [0.5, 2.0]
    assert (df["metric"] == "r2").all() and (df["delta"] == 1e-5).all()
    assert (df["time"] >= 0).all() and df["released"].all() and df["private"].all()
    assert (df.loc[df["method"] == "rec", "value"] == 0.5).all()


def test_same_split_for_every_method_and_eps_within_a_trial():
    a, b = Recorder(), Recorder()
    ex.run({"a": a, "b": b}, DATA, trials=2, test_size=0.25, eps=[1.0, 3.0])
    n_test = round(0.25 * len(HOUSES))
    for t in range(2):
        idx = [c["index"] for c in (a.calls[2 * t:2 * t + 2] + b.calls[2 * t:2 * t + 2])]
        assert all(np.array_equal(idx[0], i) for i in idx[1:])
        assert len(idx[0]) == len(HOUSES) - n_test and len(set(idx[0])) == len(idx[0])
    assert not np.array_equal(a.calls[0]["index"], a.calls[2]["index"])   # trials differ
    assert a.calls[0]["formula"] == DATA["houses"][1] and a.calls[0]["delta"] == 1e-5


def test_seeds_are_reproducible_and_independent_of_other_methods():
    one = ex.run(FAST, DATA, trials=2, seed=7)
    again = ex.run(FAST, DATA, trials=2, seed=7)
    more = ex.run({"extra": Recorder(), **FAST}, DATA, trials=2, seed=7)
    other = ex.run(FAST, DATA, trials=2, seed=8)
    v = one["value"].to_numpy()
    assert np.array_equal(v, again["value"].to_numpy())
    assert np.array_equal(v, more.loc[more["method"] == "adassp", "value"].to_numpy())
    assert not np.array_equal(v, other["value"].to_numpy())


def test_fits_are_seeded_and_use_the_config():
    rec = Recorder()
    ex.run({"rec": rec}, DATA, trials=1, eps=0.7, delta=1e-6)
    call = rec.calls[0]
    assert isinstance(call["state"], np.random.SeedSequence)
    assert call["eps"] == 0.7 and call["delta"] == 1e-6


def test_failed_release_is_minus_inf_and_summarised_like_the_papers():
    df = ex.run({"fail": Recorder(released=False), "ok": Recorder(value=0.25)}, DATA, trials=3)
    fail = df[df["method"] == "fail"]
    assert (fail["value"] == -math.inf).all() and not fail["released"].any()
    s = ex.summarise(df).set_index("method")
    assert s.loc["fail", "median"] == -math.inf and s.loc["fail", "released"] == 0.0
    assert s.loc["ok", "median"] == 0.25 and s.loc["ok", "trials"] == 3


def test_real_ptr_failure_is_recorded():
    small = {"tiny": (HOUSES.head(1500), "median_house_value ~ .")}
    df = ex.run({"tukey": {"select": None}}, small, trials=1, eps=0.1)
    assert not df["released"].iloc[0] and df["value"].iloc[0] == -math.inf


def test_glm_configs_report_accuracy():
    adult = dp.datasets.load("adult").head(3000)
    df = ex.run({"fw": {"model": "glm", "formula": "income ~ age + sex"}},
                {"adult": (adult, "unused ~ x")}, trials=1)
    assert df["metric"].iloc[0] == "accuracy" and 0.5 < df["value"].iloc[0] <= 1.0


def test_ols_baseline_is_marked_not_private_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = ex.run({"ols": {"method": "ols"}}, DATA, trials=2)
    assert not df["private"].any() and df["released"].all()


def test_custom_metric_and_bundled_names():
    def mae(fit, test):
        return float(np.mean(np.abs(fit.predict(test) - test["PTS_home"])))
    df = ex.run(FAST, "nba", trials=1, metric=mae)
    assert df["metric"].iloc[0] == "mae" and 0 < df["value"].iloc[0] < 20
    assert df["dataset"].iloc[0] == "nba"


def test_fit_errors_name_the_experiment():
    with pytest.raises(FormulaError, match="experiment 'adassp' on 'bad' \\(trial 0"):
        ex.run(FAST, {"bad": (HOUSES, "median_house_value ~ nope")}, trials=1)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"configs": []}, "configs must be"),
    ({"configs": [("a", {}), ("a", {})]}, "unique"),
    ({"configs": {"a": 3}}, "must be a dict"),
    ({"configs": {"a": {"eps": 1.0}}}, "the experiment controls"),
    ({"configs": {"a": {"random_state": 1}}}, "the experiment controls"),
    ({"configs": {"a": {"methd": "tukey"}}}, "not arguments of dp_lm"),
    ({"configs": {"a": {"method": "bas", "T": 0}}}, "boosting rounds"),
    ({"configs": {"a": {"model": "glm", "method": "fw", "screen": "often"}}}, "screen"),
    ({"configs": {"a": {"model": "gam"}}}, "'lm' or 'glm'"),
    ({"datasets": "iris"}, "unknown data set"),
    ({"datasets": {"x": HOUSES}}, "\\(DataFrame, formula\\)"),
    ({"datasets": []}, "datasets must be"),
    ({"trials": 0}, "trials must be"),
    ({"test_size": 1.0}, "test_size"),
    ({"eps": []}, "non-empty"),
    ({"eps": [1.0, -1.0]}, "eps must be"),
    ({"delta": 0.0}, "delta"),
    ({"seed": -1}, "seed must be"),
    ({"metric": "mae"}, "metric must be"),
])
def test_bad_arguments_raise_before_any_fit(kwargs, match):
    rec = Recorder()
    args = {"configs": {"rec": rec}, "datasets": DATA, **kwargs}
    with pytest.raises(ValidationError, match=match):
        ex.run(args.pop("configs"), args.pop("datasets"), **args)
    assert rec.calls == []


def test_progress_bar(capsys, monkeypatch):
    ex.run({"rec": Recorder()}, DATA, trials=2, progress=True)
    assert "dpstats fits" in capsys.readouterr().err
    ex.run({"rec": Recorder()}, DATA, trials=2)           # few fits: no bar by default
    assert capsys.readouterr().err == ""
    ex.run({"rec": Recorder()}, DATA, trials=ex.PROGRESS_MIN_FITS)
    assert "100%" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError, match=r"pip install dpstats\[plot\]"):
        ex.run({"rec": Recorder()}, DATA, trials=1, progress=True)
    assert len(ex.run({"rec": Recorder()}, DATA, trials=ex.PROGRESS_MIN_FITS)) == 50


@pytest.mark.parametrize(("values", "q", "expected"), [
    ([1.0, 2.0, 3.0, 4.0], 0.5, 2.5),
    ([-math.inf, 1.0, 2.0, 3.0], 0.5, 1.5),
    ([-math.inf, -math.inf, 2.0, 3.0], 0.5, -math.inf),
    ([-math.inf, 1.0, 2.0], 0.25, -math.inf),
    ([-math.inf, 1.0, 2.0], 0.75, 1.5),
    ([math.nan, 1.0], 0.5, 1.0),
    ([], 0.5, math.nan),
])
def test_quantile_handles_failures(values, q, expected):
    got = ex.quantile(values, q)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) == len(values) and values:
        assert got == pytest.approx(float(np.quantile(values, q)))


def test_summarise_needs_run_output():
    with pytest.raises(ValidationError, match="experiments.run"):
        ex.summarise(pd.DataFrame({"x": [1]}))
