"""Tests for dpstats.validation: eps/delta/k/choice checks and random-state handling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstats.errors import DPStatsError, PrivacyParameterError, UnknownMethodError, ValidationError
from dpstats.mechanisms.rng import as_rng
from dpstats.validation import (
    Option,
    OptionSpec,
    check_choice,
    check_delta,
    check_eps,
    check_k,
    validate_options,
)

BAD_EPS = [0, 0.0, -1, -1e-300, math.nan, math.inf, -math.inf, "1", None, True, False,
           [1.0], 1 + 0j]


@pytest.mark.parametrize("eps", BAD_EPS, ids=repr)
def test_bad_eps_raises_naming_the_argument(eps):
    with pytest.raises(PrivacyParameterError) as info:
        check_eps(eps)
    assert isinstance(info.value, DPStatsError)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("eps ")
    with pytest.raises(PrivacyParameterError, match="^eps_ptr "):
        check_eps(eps, name="eps_ptr")


@pytest.mark.parametrize("eps", [1, 1.0, 0.01, 1e-12, 10, 1e6, np.float64(0.5), np.int64(3),
                                 np.float32(2.0)])
def test_good_eps_returns_float(eps):
    out = check_eps(eps)
    assert type(out) is float
    assert out == float(eps)


BAD_DELTA = [0, 0.0, 1, 1.0, 2.0, -1e-5, math.nan, math.inf, "x", "1e-5", None, True]


@pytest.mark.parametrize("delta", BAD_DELTA, ids=repr)
def test_bad_delta_raises_naming_the_argument(delta):
    with pytest.raises(PrivacyParameterError) as info:
        check_delta(delta)
    assert str(info.value).startswith("delta ")
    with pytest.raises(PrivacyParameterError, match="^delta_ptr "):
        check_delta(delta, name="delta_ptr")


@pytest.mark.parametrize("delta", [1e-5, 1e-12, 0.5, 0.999999, np.float64(1e-6)])
def test_good_delta_returns_float(delta):
    out = check_delta(delta)
    assert type(out) is float
    assert out == float(delta)


def test_delta_zero_allowed_only_on_request():
    with pytest.raises(PrivacyParameterError, match=r"\(0, 1\)"):
        check_delta(0.0)
    assert check_delta(0.0, allow_zero=True) == 0.0
    assert check_delta(0, allow_zero=True) == 0.0
    for bad in (1.0, -1e-9, math.nan):
        with pytest.raises(PrivacyParameterError, match=r"\[0, 1\)"):
            check_delta(bad, allow_zero=True)


@pytest.mark.parametrize("k", [0, -1, 1.0, 2.5, "3", None, True])
def test_bad_k_raises(k):
    with pytest.raises(ValidationError, match="^n_features "):
        check_k(k, name="n_features")


@pytest.mark.parametrize("k", [1, 5, np.int64(7)])
def test_good_k(k):
    out = check_k(k)
    assert type(out) is int and out == int(k)


def test_check_choice():
    choices = ("auto", "kendall", None)
    assert check_choice("kendall", choices, "select") == "kendall"
    assert check_choice(None, choices, "select") is None
    with pytest.raises(UnknownMethodError) as info:
        check_choice("lasso", choices, "select")
    msg = str(info.value)
    assert "select='lasso'" in msg
    assert "'auto'" in msg and "'kendall'" in msg and "None" in msg
    # not a string equal by accident: 0 is not None, and "None" is not None
    with pytest.raises(UnknownMethodError):
        check_choice("None", choices, "select")
    with pytest.raises(UnknownMethodError):
        check_choice(0, ("auto", None), "select")
    assert issubclass(UnknownMethodError, ValidationError)


def test_as_rng_none_is_unseeded_and_fresh():
    g1, s1 = as_rng(None)
    g2, s2 = as_rng(None)
    assert isinstance(g1, np.random.Generator) and isinstance(g2, np.random.Generator)
    assert s1 is False and s2 is False
    assert g1 is not g2
    assert not np.array_equal(g1.integers(0, 2**62, size=4), g2.integers(0, 2**62, size=4))


def test_as_rng_int_is_reproducible_and_seeded():
    g1, s1 = as_rng(7)
    g2, s2 = as_rng(7)
    g3, _ = as_rng(8)
    assert s1 is True and s2 is True
    a, b, c = (g.standard_normal(8) for g in (g1, g2, g3))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(as_rng(np.int64(7))[0].standard_normal(8), a)


def test_as_rng_generator_and_seedsequence():
    gen = np.random.default_rng(3)
    out, seeded = as_rng(gen)
    assert out is gen and seeded is True
    ss = np.random.SeedSequence(11)
    r1, s1 = as_rng(ss)
    r2, _ = as_rng(np.random.SeedSequence(11))
    assert s1 is True
    np.testing.assert_array_equal(r1.random(5), r2.random(5))


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, [1, 2], np.random.RandomState(0)],
                         ids=repr)
def test_as_rng_rejects_bad_random_state(bad):
    with pytest.raises(ValidationError, match="random_state"):
        as_rng(bad)


# ---- declared options: a number or one of its listed values -----------------------------------

_COUNT = Option("m", "int", "auto", range=(1, 100), choices=("auto", "sqrt"), doc="groups")


@pytest.mark.parametrize(("value", "expected"), [("auto", "auto"), ("sqrt", "sqrt"), (1, 1),
                                                 (np.int64(100), 100)])
def test_number_option_accepts_its_listed_values_and_numbers(value, expected):
    got = validate_options(OptionSpec((_COUNT,)), {"m": value})["m"]
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value", [0, 101, True, 2.5, "many", None, math.nan, 10 ** 400])
def test_number_option_rejects_the_rest(value):
    with pytest.raises(ValidationError, match=r"m must be 'auto', 'sqrt' or an integer in 1\.\."):
        _COUNT.parse(value)
