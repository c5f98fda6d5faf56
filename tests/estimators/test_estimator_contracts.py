"""The typed contracts of the estimators: declared keywords and options, the Estimate, the reason
codes and their one table of explanations, and the shared bounded design."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dpstats.errors import UnknownMethodError, ValidationError
from dpstats.estimators import (
    COMMON_KEYWORDS,
    EXPLANATIONS,
    METHODS,
    Estimate,
    Withheld,
    estimator_call,
    explain,
    get_estimator,
    options_of,
    withheld_note,
)
from dpstats.estimators.bounded import bounded_design, plan_bounds
from dpstats.mechanisms.accountant import Ledger
from dpstats.validation import Option, OptionSpec, validate_options

ENTRIES = [(m, "gaussian") for m in METHODS] + [(m, "binomial") for m in ("tukey", "fw", "dpgd")]


def _module(method, family):
    return inspect.getmodule(get_estimator(method, family))


@pytest.mark.parametrize("method, family", ENTRIES)
def test_signature_is_exactly_the_declared_keywords_and_options(method, family):
    fn = get_estimator(method, family)
    module = _module(method, family)
    params = inspect.signature(fn).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    keywords = set(params) - {"X", "y"}
    assert keywords == set(module.COMMON) | set(options_of(fn).names)
    assert set(module.COMMON) <= set(COMMON_KEYWORDS)
    for opt in options_of(fn).options:          # one default, declared and in the signature
        assert params[opt.name].default == opt.default, opt.name


@pytest.mark.parametrize("method, family", ENTRIES)
def test_an_unknown_keyword_is_a_type_error(method, family):
    X = np.c_[np.ones(50), np.linspace(-1, 1, 50)]
    everything = dict(eps=1.0, delta=1e-5, rng=np.random.default_rng(0), m=10)
    kw = {k: v for k, v in everything.items() if k in _module(method, family).COMMON}
    with pytest.raises(TypeError, match="bogus"):
        get_estimator(method, family)(X, np.zeros(50), bogus=1, **kw)


def test_estimator_call_passes_each_estimator_only_what_it_declares():
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(2000), rng.uniform(-1, 1, 2000)]
    y = 1 + X[:, 1]
    common = dict(eps=1e6, delta=1e-5, rng=rng, ledger=Ledger(), m=80, lemma="8.5",
                  accounting="swap", intercept_col=0, names=["Intercept", "x"], bounds=(-3, 3),
                  n_noisy=2000.0, stage="regression")
    for method in METHODS:
        est = estimator_call(method, X, y, common, {"T": 20} if method in ("bas", "fw") else {})
        assert isinstance(est, Estimate)
    with pytest.raises(TypeError, match="not common keywords"):
        estimator_call("adassp", X, y, {**common, "T": 3})
    with pytest.raises(TypeError, match="both"):
        estimator_call("tukey", X, y, common, {"lemma": "3.6"})


def test_validate_options_checks_names_types_ranges_and_fixed_values():
    spec = OptionSpec((
        Option("share", "real", 0.2, range=(0.0, 1.0), doc="a share"),
        Option("T", "int", 10, range=(1, None)),
        Option("how", "choice", "a", choices=("a", "b")),
        Option("lr", "real", None, range=(0.0, None), allow_none=True),
    ), finish=lambda v, fixed: {**v, "lr": fixed["lr0"] if v["lr"] is None else v["lr"]})
    assert validate_options(spec, {"T": 3}, fixed={"lr0": 0.5}) == \
        {"share": 0.2, "T": 3, "how": "a", "lr": 0.5}
    with pytest.raises(ValidationError, match=r"unknown option\(s\) \['x'\].*'T', 'how'"):
        validate_options(spec, {"x": 1}, fixed={"lr0": 0.5})
    for bad, text in [({"share": 1.0}, "share must be a number in (0, 1) (a share); got 1.0"),
                      ({"share": True}, "share must be"), ({"T": 2.5}, "T must be an integer"),
                      ({"T": 0}, "T must be an integer >= 1"),
                      ({"lr": float("inf")}, "lr must be a finite number > 0")]:
        with pytest.raises(ValidationError) as err:
            validate_options(spec, bad, fixed={"lr0": 0.5})
        assert text in str(err.value)
    with pytest.raises(UnknownMethodError, match="how='c' is not known"):
        validate_options(spec, {"how": "c"}, fixed={"lr0": 0.5})


def test_every_reason_code_is_explained_in_the_one_table():
    assert set(EXPLANATIONS) == set(Withheld)
    for code in Withheld:
        assert explain(code) == explain(code.value) == EXPLANATIONS[code].sentence
    assert explain("not a code") == "not a code" and explain(None) is None
    assert "m = 3 models" in withheld_note("too_few_models", m=3)
    assert withheld_note(Withheld.LABEL_BOUNDS) is None


def test_estimate_is_released_exactly_without_a_reason():
    est = Estimate(params=None, released=False, withheld="ptr_failed", details={"t": 1})
    assert est.withheld is Withheld.PTR_FAILED
    with pytest.raises(TypeError):
        est.details["t"] = 2                        # public facts are read-only
    with pytest.raises(ValueError):
        Estimate(params=np.zeros(2), released=True, withheld=Withheld.PTR_FAILED)
    with pytest.raises(ValueError):
        Estimate(params=None, released=False)


def test_bounded_design_maps_back_and_withholds_only_on_private_label_bounds():
    rng = np.random.default_rng(1)
    X = np.c_[np.ones(200), rng.uniform(-5, 5, 200), rng.uniform(10, 20, 200)]
    beta = np.array([3.0, -2.0, 0.5])
    plan = plan_bounds(X, {"x": [(-5, 5), (10, 20)], "y": (-40, 40)}, intercept_col=0)
    design = bounded_design(X, X @ beta, plan)
    theta = np.linalg.lstsq(design.X, design.y, rcond=None)[0]
    np.testing.assert_allclose(design.to_original(theta), beta, atol=1e-9)
    assert design.clip[0].tolist() == [-np.inf, -5.0, 10.0] and not design.unusable
    huge = plan_bounds(X, {"x": [(-5, 5), (10, 20)], "y": (-2.0 ** 64, 2.0 ** 64)},
                       intercept_col=0)
    assert not bounded_design(X, X @ beta, huge).unusable      # public: the user's choice
