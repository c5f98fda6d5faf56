"""Argument checks shared by the public entry points.

Every check raises a :class:`~dpstats.errors.DPStatsError` subclass whose message names the
argument, its (public) value and the fix. Checks never look at data values beyond their type
and shape, and run before any budget is charged.
"""

from __future__ import annotations

import math
import numbers

from .errors import PrivacyParameterError, UnknownMethodError, ValidationError

__all__ = ["check_eps", "check_delta", "check_k", "check_choice", "MAX_EPS", "check_unit"]

#: Largest eps accepted. Far beyond any meaningful privacy (e**1e12), yet below where the noise
#: grids lose float64 range (about 1e300); the non-private baseline is ``method="ols"``.
MAX_EPS = 1e12


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


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


def check_choice(value: object, choices: tuple, name: str) -> object:
    """Raise :class:`UnknownMethodError` unless ``value`` is one of ``choices``."""
    if not any(value is c or (isinstance(value, str) and value == c) for c in choices):
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
