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
    ...     print(str(e)[:24])
    `lr` is not an option of
    """
    bad = sorted(set(opts) & reserved)
    if bad:
        raise ValidationError(f"{bad} are set by {caller} itself and cannot be method options; "
                              f"use {caller}'s own arguments (eps, delta, bounds, m, ...)")
    spec = options_of(fn)
    named = sorted(set(spec.names) - reserved)
    unknown = sorted(set(opts) - set(named))
    if unknown:
        raise ValidationError(_unknown_message(unknown, method, named, caller))
    validate_options(spec, opts, fixed=fixed)


#: Common arguments of other libraries that dpstats does not support, with a hint each.
_UNSUPPORTED = {
    "weights": "{caller} does not support weights (row weights would change how much one row "
               "can move the result, which the privacy analysis does not cover)",
    "sample_weight": "{caller} does not support weights (row weights would change how much "
                     "one row can move the result, which the privacy analysis does not cover)",
    "subset": "{caller} has no subset argument: filter the rows of `data` before fitting",
}


def _unknown_message(unknown: list, method: str, named: list, caller: str) -> str:
    """Say which names are not options of ``method``, list the valid ones, and hint."""
    names = ", ".join(f"`{u}`" for u in unknown)
    verb = "is not an option" if len(unknown) == 1 else "are not options"
    valid = ", ".join(named) if named else "none"
    msg = (f"{names} {verb} of method={method!r}; the options of method={method!r} are: "
           f"{valid} (besides {caller}'s own arguments such as eps, delta and bounds)")
    hints = dict.fromkeys(_UNSUPPORTED[u].format(caller=caller) for u in unknown
                          if u in _UNSUPPORTED)
    return msg + "".join(f"; {h}" for h in hints)
