"""What a fit was asked to do: a frozen :class:`FitRequest`, built and validated in one place.

:func:`build_request` checks every argument of ``dp_lm``, ``dp_glm`` and ``select`` (types,
ranges, choices, method options) before the data is touched and before anything is charged
to a ledger or a shared budget; :func:`dpstats.pipeline.run.run` then carries the request out.
Reads no data and draws no noise (``random_state`` is only turned into a generator).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..errors import ValidationError
from ..estimators import METHODS
from ..estimators.tukey.choose_m import MAX_MODELS
from ..mechanisms.accountant import Budget, split_budget
from ..mechanisms.rng import as_rng
from ..selection import SELECTORS
from ..validation import check_choice, check_delta, check_eps, check_k
from .budget import DEFAULT_SPLIT, GLM_DEFAULT_SPLIT, SELECT_SHARES
from .estimate import estimator_for
from .options import check_method_opts
from .select import SELECT_CHOICES, check_bounds_arg, check_groups

__all__ = ["FitRequest", "build_request", "check_options", "check_m", "check_split",
           "FAMILIES", "GLM_METHODS", "LM_METHODS", "LEVELS"]

FAMILIES = ("binomial",)
#: Values of ``levels=``: undeclared category levels discovered privately (default), or read
#: from the data, which makes the fit NOT private.
LEVELS = ("private", "data")
#: dp_glm's methods; "auto" (default) picks one from the released row count
#: (:mod:`dpstats.estimators.glm_auto`).
GLM_METHODS = ("auto", "objpert", "outpert", "fw", "dpgd", "tukey")
#: Values of dp_lm's ``method=``: ``"auto"`` (chosen after the private row count,
#: :mod:`dpstats.pipeline.auto`) or an estimator.
LM_METHODS = ("auto", *METHODS)
#: Arguments dp_lm / dp_glm pass to the estimator themselves; method options may not set them.
RESERVED = {
    "lm": {"X", "y", "eps", "delta", "rng", "ledger", "m", "lemma", "accounting",
           "intercept_col", "names", "bounds", "n_noisy", "stage", "loss", "fitter",
           "known_x_bounds", "split"},
    "glm": {"X", "y", "eps", "delta", "rng", "ledger", "loss", "intercept_col", "names",
            "stage", "n_noisy", "known_x_bounds", "bounds", "m"},
}
LOSS = {"lm": "squared", "glm": "logistic"}


@dataclass(frozen=True, eq=False)
class FitRequest:
    """A validated call of ``dp_lm`` (``kind="lm"``), ``dp_glm`` (``"glm"``) or ``select``.

    ``method`` is the regression method (None for ``select``), ``selector`` the ``select=``
    argument (``select``'s ``method=``), ``shares`` the budget shares of the stages, ``options``
    the method options (read-only), ``lemma``/``accounting`` the PTR settings used to choose
    the number of Tukey models; ``delta`` of ``select`` is 0 (pure eps-DP) unless given for the
    discovery of category levels; ``levels`` is ``"private"`` or ``"data"`` (not private).
    For ``dp_lm``, ``method`` may be ``"auto"`` and ``k`` None (both decided after the private
    row count by :mod:`dpstats.pipeline.auto`; the run carries on with a copy holding the
    decision).
    """

    kind: str
    formula: object
    data: object
    eps: float
    delta: float
    method: str | None
    selector: str | None
    k: int | None
    m: int | str
    shares: Mapping[str, float]
    bounds: object
    groups: object
    budget: Budget | None
    rng: np.random.Generator
    seeded: bool
    family: str | None = None
    lemma: str = "8.5"
    accounting: str = "swap"
    options: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    levels: str = "private"

    @property
    def paper_accounting(self) -> bool:
        """The Tukey mechanism with ``accounting="paper"``: the published analysis, which is
        not (eps, delta)-DP when one row replaces a model (see
        :func:`dpstats.mechanisms.ptr.ptr_parameters`), so the fit is marked NOT PRIVATE."""
        return self.method == "tukey" and self.accounting == "paper"


def build_request(kind: str, formula, data, *, eps, delta=0.0, method=None, select=None, k=5,
                  m="auto", split=None, bounds="auto", groups="auto", budget=None,
                  random_state=None, family=None, lemma="8.5", accounting="swap",
                  options=None, levels="private") -> FitRequest:
    """Validate the arguments of an entry point (``kind`` "lm", "glm" or "select"; for
    ``select`` its ``method=`` is passed as ``select``) and freeze them in a request.

    Raises a :class:`~dpstats.errors.DPStatsError` naming the first bad argument; reads no data.
    """
    if kind == "glm":
        check_choice(family, FAMILIES, "family")
    eps = check_eps(eps)
    if kind == "select":
        delta = check_delta(delta, allow_zero=True)
        check_choice(select, (*SELECTORS, "auto"), "method")
    else:
        delta = check_delta(delta)
        check_choice(method, GLM_METHODS if kind == "glm" else LM_METHODS, "method")
        check_choice(select, SELECT_CHOICES, "select")
    k = None if (k is None and kind == "lm") else check_k(k)
    m = check_m(m)
    shares = (SELECT_SHARES if kind == "select" else
              check_split(split, GLM_DEFAULT_SPLIT if kind == "glm" else DEFAULT_SPLIT))
    groups = check_groups(groups)
    check_bounds_arg(bounds)
    check_choice(lemma, ("8.5", "3.6"), "lemma")
    check_choice(accounting, ("swap", "paper"), "accounting")
    check_choice(levels, LEVELS, "levels")
    if budget is not None and not isinstance(budget, Budget):
        raise ValidationError(f"budget must be a dpstats.Budget or None; got "
                              f"{type(budget).__name__}")
    options = dict(options or {})
    if kind == "lm" and method == "auto":
        _check_auto(options, accounting)
    elif kind != "select":
        check_options(kind, method, options, delta)
    if kind == "glm":           # dp_glm's Tukey takes these as method options
        lemma = options.get("lemma", "8.5")
        accounting = options.get("accounting", "swap")
    rng, seeded = as_rng(random_state)
    return FitRequest(kind=kind, formula=formula, data=data, eps=eps, delta=delta,
                      method=method, selector=select, k=k, m=m,
                      shares=MappingProxyType(dict(shares)), bounds=bounds, groups=groups,
                      budget=budget, rng=rng, seeded=seeded, family=family, lemma=lemma,
                      accounting=accounting, options=MappingProxyType(options), levels=levels)


def _check_auto(opts: dict, accounting: str) -> None:
    """``method="auto"`` takes no method options and only the sound Tukey accounting (the
    method is not known before the private row count)."""
    if opts:
        raise ValidationError(f"method options {sorted(opts)} need an explicit method (the "
                              "automatic choice is made after the private row count); pass "
                              "e.g. method='bas' or method='tukey' with them")
    if accounting != "swap":
        raise ValidationError("accounting='paper' applies to the Tukey mechanism only; pass "
                              "method='tukey' with it")


def check_options(kind: str, method: str, opts: dict, delta: float) -> None:
    """Method options of ``dp_lm`` (``kind="lm"``) or ``dp_glm`` (``"glm"``), by name and value
    (nothing charged, no data read). ``dp_glm`` looks its estimator up even without options,
    so a method missing from the installation is refused here."""
    if kind == "lm" and not opts:
        return
    if method == "ols":
        raise ValidationError(f"method='ols' takes no options; got {sorted(opts)}")
    check_method_opts(estimator_for(kind, method), method, opts, RESERVED[kind], f"dp_{kind}",
                      fixed={"loss": LOSS[kind], "delta": delta})
    if kind == "lm" and "centre" in opts and not (opts["centre"] is None
                                                  or isinstance(opts["centre"], str)):
        raise ValidationError("dp_lm takes centre='auto' or None (the columns after selection "
                              "are not known in advance); for a public centre array call "
                              "dpstats.estimators.tukey.linear.estimate")


def check_m(m: object) -> int | str:
    """``m=``: ``"auto"`` or a number of Tukey models from 1 to ``MAX_MODELS``."""
    if isinstance(m, str) and m == "auto":
        return "auto"
    if isinstance(m, numbers.Integral) and not isinstance(m, bool) and 1 <= int(m) <= MAX_MODELS:
        return int(m)
    raise ValidationError(f"m must be 'auto' or an integer from 1 to {MAX_MODELS} (number of "
                          f"Tukey models); got {m!r}")


def check_split(split: object, default: Mapping[str, float] = DEFAULT_SPLIT) -> dict[str, float]:
    """``split=``: budget shares of the stages ``{"levels", "n", "selection", "regression"}``
    summing to 1 (missing stages get 0), or ``default`` when None.

    >>> check_split({"n": 0.1, "regression": 0.9})
    {'levels': 0.0, 'n': 0.1, 'selection': 0.0, 'regression': 0.9}
    """
    if split is None:
        return dict(default)
    if not isinstance(split, dict) or set(split) - set(DEFAULT_SPLIT):
        raise ValidationError(
            f"split must be a dict with keys among {sorted(DEFAULT_SPLIT)} and shares summing to "
            f"1, e.g. {DEFAULT_SPLIT}; got {split!r}")
    bad = sorted(key for key, val in split.items()
                 if isinstance(val, bool) or not isinstance(val, numbers.Real))
    if bad:
        raise ValidationError(f"split shares must be numbers (shares of eps summing to 1, e.g. "
                              f"{DEFAULT_SPLIT}); {bad} are not")
    full = {key: float(split.get(key, 0.0)) for key in DEFAULT_SPLIT}
    split_budget(1.0, full)  # validates shares
    return full
