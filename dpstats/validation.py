"""Argument checks shared by the public entry points.

Every check raises a :class:`~dpstats.errors.DPStatsError` subclass whose message names the
argument, its (public) value and the fix. Checks never look at data values beyond their type
and shape, and run before any budget is charged.

Options of estimators and selectors are declared as data (:class:`Option`, :class:`OptionSpec`)
and checked by the one function :func:`validate_options`. This module imports only
:mod:`dpstats.errors`: it is the bottom of the import graph.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .errors import PrivacyParameterError, UnknownMethodError, ValidationError

__all__ = ["check_eps", "check_delta", "check_k", "check_choice", "MAX_EPS", "check_unit",
           "Option", "OptionSpec", "validate_options"]

#: Largest eps accepted. Far beyond any meaningful privacy (e**1e12), yet below where the noise
#: grids lose float64 range (about 1e300); the non-private baseline is ``method="ols"``.
MAX_EPS = 1e12


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _as_float(x: numbers.Real) -> float:
    """``float(x)``, or an infinity for an integer beyond the float range."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def check_eps(eps: object, name: str = "eps") -> float:
    """Return ``eps`` as a float if it is a finite number > 0, else raise.

    >>> check_eps(1)
    1.0
    """
    if not _is_real(eps):
        raise PrivacyParameterError(
            f"{name} must be a positive number such as 1.0; got {type(eps).__name__} {eps!r}")
    e = float(eps)
    if not (math.isfinite(e) and e > 0):
        raise PrivacyParameterError(
            f"{name} must be a finite number > 0 (typical values 0.1 to 10); got {eps!r}")
    if e > MAX_EPS:
        raise PrivacyParameterError(
            f"{name} must be at most {MAX_EPS:g} (typical values 0.1 to 10); got {eps!r}. Such "
            "an eps protects nothing; for a non-private baseline use method='ols'")
    return e


def check_delta(delta: object, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Return ``delta`` as a float if 0 < delta < 1 (or 0 <= delta when ``allow_zero``).

    >>> check_delta(1e-5)
    1e-05
    """
    if not _is_real(delta):
        raise PrivacyParameterError(
            f"{name} must be a number in (0, 1) such as 1e-5; got {type(delta).__name__} "
            f"{delta!r}")
    d = float(delta)
    lo_ok = d >= 0 if allow_zero else d > 0
    if not (math.isfinite(d) and lo_ok and d < 1):
        rng = "[0, 1)" if allow_zero else "(0, 1)"
        raise PrivacyParameterError(
            f"{name} must lie in {rng}; got {delta!r}. A common choice is delta < 1/n, "
            "e.g. 1e-5 or 1e-6")
    return d


def check_k(k: object, name: str = "k") -> int:
    """Return ``k`` as an int if it is an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or int(k) < 1:
        raise ValidationError(f"{name} must be an integer >= 1; got {k!r}")
    return int(k)


def _listed(value: object, choices: tuple) -> bool:
    """Whether ``value`` is one of ``choices`` (by identity, or as an equal string)."""
    return any(value is c or (isinstance(value, str) and value == c) for c in choices)


def check_choice(value: object, choices: tuple, name: str) -> object:
    """Raise :class:`UnknownMethodError` unless ``value`` is one of ``choices``."""
    if not _listed(value, choices):
        shown = ", ".join(repr(c) for c in choices)
        raise UnknownMethodError(f"{name}={value!r} is not known; choose one of {shown}")
    return value


def check_unit(value, name: str, lo: float, hi: float, *, closed: bool = False) -> float:
    """A number in ``(lo, hi)`` (or ``(lo, hi]`` when ``closed``), else ValidationError."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and \
        lo < float(value) and (float(value) <= hi if closed else float(value) < hi)
    if not ok:
        raise ValidationError(f"{name} must be a number in ({lo:g}, {hi:g}{']' if closed else ')'}"
                              f"; got {value!r}")
    return float(value)


# ------------------------------------------------------------------------ declared options
_KINDS = ("real", "int", "choice", "any")


@dataclass(frozen=True)
class Option:
    """One option of an estimator or selector, declared as data.

    Parameters
    ----------
    name : str
        Keyword name.
    kind : {"real", "int", "choice", "any"}
        ``"real"``: a number (not a bool), returned as float; ``"int"``: an integer (not a
        bool), returned as int; ``"choice"``: one of ``choices``; ``"any"``: checked by
        ``check`` alone (or by the spec's ``finish``).
    default : object
        Value used when the option is not given.
    range : (lo, hi), optional
        Admissible interval of a number; ``None`` for ``hi`` means no upper end (the value
        must then be finite). Ends are excluded unless ``closed`` says otherwise.
    closed : (bool, bool)
        Whether ``lo`` and ``hi`` themselves are admissible.
    choices : tuple
        Admissible values of a ``"choice"``. For ``"real"`` and ``"int"``: values accepted
        besides the numbers, returned as they are (e.g. ``"auto"`` for a count the method
        derives).
    allow_none : bool
        ``None`` is accepted (it stands for a default the method derives, e.g. from the loss).
    check : callable, optional
        ``check(value, name) -> value`` for ``"any"``; raises ValidationError.
    doc : str
        One line of help, also appended to the error message of a number out of range.
    message : str, optional
        Error message replacing the generated one; formatted with ``name`` and ``value``.
    """

    name: str
    kind: str
    default: object = None
    range: tuple | None = None
    closed: tuple[bool, bool] = (False, False)
    choices: tuple = ()
    allow_none: bool = False
    check: Callable[[object, str], object] | None = None
    doc: str = ""
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"Option kind must be one of {_KINDS}; got {self.kind!r}")

    def requirement(self) -> str:
        """What a value must be, in words (used in error messages).

        >>> Option("q", "real", range=(0, 0.5)).requirement()
        'a number in (0, 0.5)'
        >>> Option("T", "int", range=(1, None), closed=(True, False)).requirement()
        'an integer >= 1'
        >>> Option("m", "int", range=(1, 9), choices=("auto",)).requirement()
        "'auto' or an integer in 1..9"
        """
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        number = self._number_requirement()
        if self.choices:
            return ", ".join(repr(c) for c in self.choices) + " or " + number
        return number

    def _number_requirement(self) -> str:
        lo, hi = self.range if self.range is not None else (None, None)
        if self.kind == "int":
            if hi is None:
                return "an integer" + ("" if lo is None else f" >= {lo}")
            return f"an integer in {lo}..{hi}"
        if hi is None:
            sign = ">=" if self.closed[0] else ">"
            return "a finite number" + ("" if lo is None else f" {sign} {lo:g}")
        return (f"a number in {'[' if self.closed[0] else '('}{lo:g}, {hi:g}"
                f"{']' if self.closed[1] else ')'}")

    def parse(self, value: object) -> object:
        """``value`` checked and converted (float for "real", int for "int"; a value listed in
        ``choices`` as it is), else raise."""
        if value is None and self.allow_none:
            return None
        if self.kind == "choice":
            return check_choice(value, self.choices, self.name)
        if self.kind == "any":
            return value if self.check is None else self.check(value, self.name)
        if self.choices and _listed(value, self.choices):
            return value
        integral = self.kind == "int"
        ok = (not isinstance(value, bool)
              and isinstance(value, numbers.Integral if integral else numbers.Real)
              and self._in_range(_as_float(value)))
        if not ok:
            raise ValidationError(self._error(value))
        return int(value) if integral else float(value)

    def _in_range(self, v: float) -> bool:
        lo, hi = self.range if self.range is not None else (None, None)
        if hi is None and not math.isfinite(v):
            return False
        closed_lo, closed_hi = (True, True) if self.kind == "int" else self.closed
        return ((lo is None or (v >= lo if closed_lo else v > lo))
                and (hi is None or (v <= hi if closed_hi else v < hi)))

    def _error(self, value: object) -> str:
        if self.message is not None:
            return self.message.format(name=self.name, value=value)
        hint = f" ({self.doc})" if self.doc else ""
        return f"{self.name} must be {self.requirement()}{hint}; got {value!r}"


@dataclass(frozen=True)
class OptionSpec:
    """The options of one estimator or selector: :class:`Option` declarations, in the order
    they are checked, and an optional ``finish(values, fixed) -> values`` for checks across
    options or against values the caller fixes (e.g. ``loss``, ``delta``) and for defaults
    derived from them."""

    options: tuple[Option, ...] = ()
    finish: Callable[[dict, Mapping], dict] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The declared option names, in declaration order."""
        return tuple(o.name for o in self.options)

    @property
    def defaults(self) -> dict:
        """``{name: default}`` of every declared option."""
        return {o.name: o.default for o in self.options}


def validate_options(spec: OptionSpec | tuple, given: Mapping, *,
                     fixed: Mapping | None = None) -> dict:
    """Check ``given`` options against ``spec``; return every option's value, defaults filled.

    Unknown names raise first (naming the valid ones), then each declared option is checked
    in order, then ``spec.finish`` runs with ``fixed`` (values the caller sets, e.g.
    ``{"loss": "logistic", "delta": 1e-5}``). Touches no data and charges nothing.

    Parameters
    ----------
    spec : OptionSpec or tuple of Option
    given : mapping
        The options to check (absent ones take their declared default).
    fixed : mapping, optional
        Values ``finish`` may read; they are not options themselves.

    Returns
    -------
    dict
        ``{name: value}`` for every declared option (plus what ``finish`` adds).

    Raises
    ------
    ValidationError
        For an unknown name or a bad value.

    Examples
    --------
    >>> spec = OptionSpec((Option("T", "int", 10, range=(1, None), doc="rounds"),))
    >>> validate_options(spec, {"T": 5})
    {'T': 5}
    >>> validate_options(spec, {"lr": 1})
    Traceback (most recent call last):
    ...
    dpstats.errors.ValidationError: unknown option(s) ['lr']; the options are ['T']
    """
    if not isinstance(spec, OptionSpec):
        spec = OptionSpec(tuple(spec))
    unknown = sorted(set(given) - set(spec.names))
    if unknown:
        raise ValidationError(f"unknown option(s) {unknown}; the options are "
                              f"{sorted(spec.names) or 'none'}")
    values = {o.name: o.parse(given[o.name] if o.name in given else o.default)
              for o in spec.options}
    return values if spec.finish is None else spec.finish(values, dict(fixed or {}))
