"""Regression estimators, chosen by name from :data:`METHODS`.

Every estimator is a module with

* ``estimate(X, y, *, <keywords>) -> Estimate`` (DESIGN rule 3), taking exactly the keywords it
  uses: an unknown keyword is a TypeError;
* ``COMMON``: the keywords of :data:`COMMON_KEYWORDS` it takes (budget, rng, ledger and what the
  pipeline knows: ``intercept_col``, ``names``, ``bounds``, ``m``, ...);
* ``OPTIONS``: its user options as data (:class:`~dpstats.validation.OptionSpec`), checked by
  :func:`~dpstats.validation.validate_options`.

:func:`estimator_call` passes a caller's common keywords uniformly: each estimator receives the
ones it declares.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping

from ..validation import OptionSpec
from .outcome import EXPLANATIONS, Estimate, Withheld, explain, withheld, withheld_note

__all__ = ["Estimate", "Withheld", "EXPLANATIONS", "explain", "withheld_note", "withheld",
           "get_estimator", "estimator_call", "options_of", "PRIVATE_METHODS", "METHODS",
           "COMMON_KEYWORDS"]

#: Private methods, each a module of this package with an ``estimate`` function.
PRIVATE_METHODS = ("tukey", "adassp", "bas", "fw", "dpgd")
#: Every accepted method name; "ols" is the non-private baseline.
METHODS = PRIVATE_METHODS + ("ols",)
#: Keywords a pipeline may pass to any estimator through :func:`estimator_call`; each estimator
#: takes the ones in its ``COMMON``.
COMMON_KEYWORDS = ("eps", "delta", "rng", "ledger", "m", "lemma", "accounting", "intercept_col",
                   "names", "bounds", "n_noisy", "stage", "loss", "fitter", "known_x_bounds",
                   "engine")
#: Module of each method per family ("tukey" for a binomial family is the logistic variant).
_MODULES = {"gaussian": {name: name for name in METHODS},
            "binomial": {"tukey": "tukey.glm", "fw": "fw", "dpgd": "dpgd",
                         "outpert": "outpert", "objpert": "objpert", "auto": "glm_auto"}}


def _module(name: str, family: str = "gaussian"):
    modules = _MODULES.get(family, {})
    if name not in modules:  # validated by the API before we get here
        raise KeyError(name)
    return importlib.import_module(f".{modules[name]}", __name__)


def get_estimator(name: str, family: str = "gaussian"):
    """Return the ``estimate`` function registered under ``name`` (for ``family``).

    >>> get_estimator("tukey").__module__, get_estimator("tukey", "binomial").__module__
    ('dpstats.estimators.tukey.linear', 'dpstats.estimators.tukey.glm')
    """
    return _module(name, family).estimate


def options_of(fn) -> OptionSpec:
    """The declared options (``OPTIONS``) of the module defining estimator function ``fn``.

    >>> options_of(get_estimator("adassp")).names
    ('bounds_method', 'bounds_share', 'q', 'rho')
    """
    module = sys.modules.get(fn.__module__) or importlib.import_module(fn.__module__)
    return getattr(module, "OPTIONS", OptionSpec())


def estimator_call(method: str, X, y, common: Mapping, options: Mapping | None = None, *,
                   family: str = "gaussian"):
    """Run estimator ``method`` with the common keywords it declares and the user's options.

    Parameters
    ----------
    method : str
        A name of :data:`METHODS` (for ``family="binomial"``: "tukey", "fw" or "dpgd").
    X, y : arrays
        Design matrix and label.
    common : mapping
        Keywords of :data:`COMMON_KEYWORDS` the caller knows; each estimator receives those in
        its ``COMMON`` (e.g. ``m`` goes to Tukey only).
    options : mapping, optional
        The user's method options, passed as given (the estimator checks them).
    family : {"gaussian", "binomial"}

    Returns
    -------
    Estimate

    Raises
    ------
    TypeError
        For a common keyword not in :data:`COMMON_KEYWORDS`, or an option that is also
        passed as a common keyword.
    """
    unknown = sorted(set(common) - set(COMMON_KEYWORDS))
    if unknown:
        raise TypeError(f"estimator_call: {unknown} are not common keywords")
    module = _module(method, family)
    kw = {key: val for key, val in common.items() if key in module.COMMON}
    clash = sorted(set(kw) & set(options or {}))
    if clash:
        raise TypeError(f"estimator_call: {clash} given both as common keywords and options")
    return module.estimate(X, y, **kw, **(options or {}))
