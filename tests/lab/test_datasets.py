"""Tests for dpstats.datasets: every bundled set loads with its documented shape and types."""

from __future__ import annotations

import gzip
import warnings
from importlib import resources

import pandas as pd
import pytest

import dpstats as dp
from dpstats import datasets
from dpstats.errors import DPStatsError, ValidationError

ALL = ["adult", "alon", "california", "diamonds", "nba", "nyc_garbage"]


def test_names_lists_the_curated_sets():
    assert datasets.names() == ALL


@pytest.mark.parametrize("name", ALL)
def test_load_matches_catalog_and_docs(name):
    info = datasets.describe(name)
    df = datasets.load(name)
    assert df.shape == (info["rows"], info["columns"])
    assert info["label"] in df.columns
    for key in ("source", "licence", "title", "formula", "notes"):
        assert isinstance(info[key], str) and info[key]
    doc = getattr(datasets, f"load_{name}").__doc__
    assert f"{info['rows']:,}" in doc and info["label"] in doc
    assert "licence" in doc.lower() or "license" in doc.lower()
    for col, cat in info["categories"].items():
        assert isinstance(df[col].dtype, pd.CategoricalDtype)
        assert df[col].cat.categories.tolist() == cat["levels"]
        assert df[col].cat.ordered == cat["ordered"]
    assert getattr(datasets, f"load_{name}")().equals(df)


def test_diamonds_grades_are_ordered_worst_to_best():
    d = datasets.load_diamonds()
    assert d["cut"].cat.categories.tolist() == ["Fair", "Good", "Very Good", "Premium", "Ideal"]
    assert d["color"].cat.categories.tolist() == list("JIHGFED")
    assert d["clarity"].cat.categories[[0, -1]].tolist() == ["I1", "IF"]
    assert (d["cut"] == "Ideal").sum() == 21551        # ggplot2's count
    assert d[["cut", "color", "clarity"]].notna().all().all()
    assert d["price"].dtype.kind == "i"


def test_adult_missing_values_and_binary_label():
    a = datasets.load_adult()
    assert a["income"].cat.categories.tolist() == ["<=50K", ">50K"]
    assert a["income"].notna().all() and (a["income"] == ">50K").sum() == 11687
    # '?' in the UCI files is missing, never a level; numeric columns are complete
    assert a["workclass"].isna().sum() == 2799 and a["occupation"].isna().sum() == 2809
    assert a.select_dtypes("number").notna().all().all()
    assert a["education"].cat.ordered and a["education"].cat.categories[-1] == "Doctorate"


def test_alon_label_coding():
    d = datasets.load_alon()
    assert d["y"].value_counts().to_dict() == {1: 40, -1: 22}
    assert list(d.columns[1:3]) == ["X1", "X2"]


def test_loads_are_independent_copies():
    a = datasets.load("california")
    a.iloc[0, 0] = -1.0
    assert datasets.load("california").iloc[0, 0] != -1.0


def test_declared_levels_mean_no_privacy_leak_warning():
    d = datasets.load_diamonds().head(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = dp.dp_lm("price ~ carat + cut", d, eps=1.0, select=None, random_state=0)
    assert "cut[T.Ideal]" in fit.params.index and not fit.spec.levels_from_data


def test_adult_suggested_formula_fits_with_dp_glm():
    a = datasets.load_adult()
    fit = dp.dp_glm(datasets.describe("adult")["formula"], a.head(5000), eps=1.0,
                    random_state=0)
    assert fit.released and "sex[T.Male]" in fit.params.index
    assert "fnlwgt" not in fit.params.index


@pytest.mark.parametrize("bad", ["iris", "", None, 3, "California"])
def test_unknown_name_errors_and_lists_choices(bad):
    with pytest.raises(ValidationError, match="datasets.names") as err:
        datasets.load(bad)
    assert isinstance(err.value, DPStatsError) and "california" in str(err.value)
    with pytest.raises(ValidationError):
        datasets.describe(bad)


def test_packaged_files_are_small_gzip_csv():
    root = resources.files("dpstats.datasets")
    total = 0
    for name in ALL:
        raw = (root / f"{name}.csv.gz").read_bytes()
        total += len(raw)
        header = gzip.decompress(raw).split(b"\n", 1)[0].decode()
        assert header.split(",")[0]     # a CSV header row
    assert total < 5e6


def test_describe_returns_a_copy():
    info = datasets.describe("diamonds")
    info["categories"]["cut"]["levels"].append("Bogus")
    info["rows"] = 0
    assert datasets.describe("diamonds")["rows"] == 53940
    assert "Bogus" not in datasets.load("diamonds")["cut"].cat.categories
