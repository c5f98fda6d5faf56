"""Validation of the method options that ``dp_lm`` and ``dp_glm`` pass through to an estimator.

Options are checked against the estimator's declared options (its module's ``OPTIONS``, see
:mod:`dpstats.estimators`) by :func:`dpstats.validation.validate_options`, so a bad option
raises before the data is touched and before anything is charged to a ledger or a shared
budget. Adds no noise and reads no data.
"""

from __future__ import annotations

from ..errors import ValidationError
from ..estimators import options_of
from ..validation import validate_options

__all__ = ["check_method_opts"]


def check_method_opts(fn, method: str, opts: dict, reserved: set, caller: str,
                      fixed: dict | None = None) -> None:
    """Raise :class:`~dpstats.errors.ValidationError` unless ``opts`` are valid for ``fn``.

    Parameters
    ----------
    fn : callable
        The estimator's ``estimate`` function; its module declares the options.
    method : str
        The method name, for messages.
    opts : dict
        The user's options.
    reserved : set of str
        Arguments ``caller`` sets itself; options may not set them.
    caller : str
        ``"dp_lm"`` or ``"dp_glm"``, for messages.
    fixed : dict, optional
        Values ``caller`` fixes that the checks may need (e.g. ``loss``, ``delta``).

    Examples
    --------
    >>> from dpstats.estimators import get_estimator
    >>> check_method_opts(get_estimator("bas"), "bas", {"T": 5}, {"X", "y", "eps"}, "dp_lm")
    >>> try:
    ...     check_method_opts(get_estimator("bas"), "bas", {"lr": 1}, {"X", "y"}, "dp_lm")
    ... except ValidationError as e:
    ...     print(str(e)[:44])
    method='bas' does not take the option(s) ['l
    """
    bad = sorted(set(opts) & reserved)
    if bad:
        raise ValidationError(f"{bad} are set by {caller} itself and cannot be method options; "
                              f"use {caller}'s own arguments (eps, delta, bounds, m, ...)")
    spec = options_of(fn)
    named = sorted(set(spec.names) - reserved)
    unknown = sorted(set(opts) - set(named))
    if unknown:
        raise ValidationError(f"method={method!r} does not take the option(s) {unknown}; it "
                              f"takes {named or 'no options'}")
    validate_options(spec, opts, fixed=fixed)
