"""Regression estimators, chosen by name from :data:`ESTIMATORS`.

Every estimator has the signature
``estimate(X, y, *, eps, delta, rng, ledger, **opts) -> Estimate`` (DESIGN rule 3).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from ..results import PTRReport

__all__ = ["Estimate", "get_estimator", "PRIVATE_METHODS", "METHODS"]

#: Private methods, each a module of this package with an ``estimate`` function.
PRIVATE_METHODS = ("tukey", "adassp", "bas", "fw", "dpgd")
#: Every accepted method name; "ols" is the non-private baseline.
METHODS = PRIVATE_METHODS + ("ols",)


@dataclass(frozen=True)
class Estimate:
    """What an estimator releases: coefficients (or None), and public facts about the run."""

    params: np.ndarray | None
    released: bool
    ptr: PTRReport | None = None
    info: dict = field(default_factory=dict)


def get_estimator(name: str):
    """Return the ``estimate`` function registered under ``name``.

    >>> get_estimator("tukey").__module__
    'dpstats.estimators.tukey'
    """
    if name not in METHODS:  # validated by the API before we get here
        raise KeyError(name)
    return importlib.import_module(f".{name}", __name__).estimate
