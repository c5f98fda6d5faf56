"""Validation of the method options that ``dp_lm`` and ``dp_glm`` pass through to an estimator.

Options are checked against the estimator's named keyword parameters and, value by value, by
the estimator module's ``check_options`` (a function of the options alone), so a bad option
raises before the data is touched and before anything is charged to a ledger or a shared
budget. Adds no noise and reads no data.
"""

from __future__ import annotations

import inspect

from ..errors import ValidationError

__all__ = ["check_method_opts"]


def check_method_opts(fn, method: str, opts: dict, reserved: set, caller: str,
                      fixed: dict | None = None) -> None:
    """Raise :class:`~dpstats.errors.ValidationError` unless ``opts`` are valid for ``fn``.

    Parameters
    ----------
    fn : callable
        The estimator's ``estimate`` function.
    method : str
        The method name, for messages.
    opts : dict
        The user's options.
    reserved : set of str
        Arguments ``caller`` sets itself; options may not set them.
    caller : str
        ``"dp_lm"`` or ``"dp_glm"``, for messages.
    fixed : dict, optional
        Values ``caller`` fixes that ``check_options`` may need (e.g. ``loss``, ``delta``).

    Examples
    --------
    >>> def estimate(X, y, *, eps, T=10): ...
    >>> check_method_opts(estimate, "demo", {"T": 5}, {"X", "y", "eps"}, "dp_lm")
    >>> try:
    ...     check_method_opts(estimate, "demo", {"lr": 1}, {"X", "y", "eps"}, "dp_lm")
    ... except ValidationError as e:
    ...     print(str(e)[:45])
    method='demo' does not take the option(s) ['l
    """
    bad = sorted(set(opts) & reserved)
    if bad:
        raise ValidationError(f"{bad} are set by {caller} itself and cannot be method options; "
                              f"use {caller}'s own arguments (eps, delta, bounds, m, ...)")
    named = {k for k, v in inspect.signature(fn).parameters.items()
             if v.kind in (v.KEYWORD_ONLY, v.POSITIONAL_OR_KEYWORD)} - reserved
    unknown = sorted(set(opts) - named)
    if unknown:
        raise ValidationError(f"method={method!r} does not take the option(s) {unknown}; it "
                              f"takes {sorted(named) or 'no options'}")
    check = getattr(inspect.getmodule(fn), "check_options", None)
    if check is None:
        return
    accepted = inspect.signature(check).parameters
    kw = {key: val for key, val in opts.items() if key in accepted}
    kw.update({key: val for key, val in (fixed or {}).items() if key in accepted})
    check(**kw)
