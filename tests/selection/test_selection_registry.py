"""The selector registry: declared keywords and options match the signatures, selectors are
strict, and run_selector passes each selector only what it declares."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dpstats.selection import (
    REQUIRED_KEYWORDS,
    SELECTORS,
    get_selector,
    run_selector,
    selector_keywords,
    selector_options,
)
from dpstats.validation import Option


def _keyword_params(name):
    sig = inspect.signature(get_selector(name))
    return {p.name: p for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("name", SELECTORS)
def test_declared_keywords_are_exactly_the_signature(name):
    params = _keyword_params(name)
    assert set(params) == set(selector_keywords(name))
    assert set(REQUIRED_KEYWORDS) <= set(params)
    assert not any(p.kind is p.VAR_KEYWORD
                   for p in inspect.signature(get_selector(name)).parameters.values())


@pytest.mark.parametrize("name", SELECTORS)
def test_option_defaults_match_the_signature(name):
    params = _keyword_params(name)
    for opt in selector_options(name):
        assert isinstance(opt, Option)
        assert params[opt.name].default == opt.default, opt.name
        assert opt.doc


def _data():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 5))
    return X, 2 * X[:, 1] + 0.1 * rng.standard_normal(400)


@pytest.mark.parametrize(("name", "extra"), [("kendall", {"groups": 5}),
                                             ("kendall", {"bounds": (-1, 1)}),
                                             ("sublasso", {"bounds": (-1, 1)}),
                                             ("sis", {"groups": "sqrt"}),
                                             ("sis", {"bound_mode": "column"})])
def test_selectors_reject_undeclared_keywords(name, extra):
    X, y = _data()
    with pytest.raises(TypeError):
        get_selector(name)(X, y, k=1, eps=1.0, rng=np.random.default_rng(0), **extra)


@pytest.mark.parametrize("name", SELECTORS)
def test_run_selector_passes_only_declared_keywords(name):
    X, y = _data()
    shared = {"n_noisy": 400.0, "groups": "auto", "bounds": (-8.0, 8.0), "columns": None,
              "stage": "screen"}
    direct = {key: value for key, value in shared.items() if key in selector_keywords(name)}
    a = run_selector(name, X, y, k=1, eps=1.0, rng=np.random.default_rng(4), ledger=None,
                     **shared)
    b = get_selector(name)(X, y, k=1, eps=1.0, rng=np.random.default_rng(4), ledger=None,
                           **direct)
    assert a == b


def test_run_selector_rejects_a_keyword_no_selector_declares():
    X, y = _data()
    with pytest.raises(TypeError, match="n_nosiy"):
        run_selector("kendall", X, y, k=1, eps=1.0, rng=np.random.default_rng(0),
                     n_nosiy=400.0)
