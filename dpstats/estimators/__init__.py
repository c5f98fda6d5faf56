"""Regression estimators, chosen by name from :data:`ESTIMATORS`.

Every estimator has the signature
``estimate(X, y, *, eps, delta, rng, ledger, **opts) -> Estimate`` (DESIGN rule 3).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.ptr import PTRReport

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


#: A privately released label bound with half-width at or beyond this is unusable: the
#: log-histogram found no cell above its noise threshold (it then returns +-2^64) or a quantile
#: release landed in an unbounded end cell (+-2^65). Mapping back to the label's scale would
#: multiply the coefficients by ~1e19.
UNUSABLE_HALF_WIDTH = 2.0 ** 62


def label_bound_unusable(y_lo, y_hi) -> bool:
    """True when released label bounds ``(y_lo, y_hi)`` are too wide to map back from.

    >>> label_bound_unusable(-2.0 ** 64, 2.0 ** 64), label_bound_unusable(0.0, 5e5)
    (True, False)
    """
    return y_lo is not None and (float(y_hi) - float(y_lo)) / 2.0 >= UNUSABLE_HALF_WIDTH


def withheld(p: int, info: dict, reason: str) -> Estimate:
    """An estimate that releases no coefficients (all NaN) and says why in ``info["reason"]``.

    Used when private bounds turned out unusable: the budget spent on them is still spent, and
    the decision depends only on released values, so withholding is post-processing.
    """
    return Estimate(params=np.full(p, np.nan), released=False, ptr=None,
                    info={**info, "reason": reason})


#: Why a bounded method withholds its coefficients when the label's private bounds failed.
LABEL_BOUNDS_REASON = ("the private bounds of the response found no histogram cell above the "
                       "noise threshold (too few rows for this eps). Give public bounds, e.g. "
                       "bounds={'y': (lo, hi)}, use a larger eps or more rows.")


def get_estimator(name: str):
    """Return the ``estimate`` function registered under ``name``.

    >>> get_estimator("tukey").__module__
    'dpstats.estimators.tukey.linear'
    """
    if name not in METHODS:  # validated by the API before we get here
        raise KeyError(name)
    return importlib.import_module(f".{name}", __name__).estimate
