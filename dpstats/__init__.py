"""dpstats: differentially private regression with R-style formulas.

>>> import dpstats as dp
>>> fit = dp.dp_lm("median_house_value ~ .", dp.datasets.load("california"), eps=1.0,
...                random_state=0)
>>> fit.released
True

Heavy modules (numba kernels, formulaic, statsmodels) load on first use, so ``import dpstats``
is fast.
"""

from __future__ import annotations

import importlib

from .accountant import Budget, Charge, Ledger
from .errors import (
    BudgetExceededError,
    DPStatsError,
    NotPrivateWarning,
    PrivacyLeakWarning,
)

__version__ = "0.1.0"

_LAZY = {"dp_lm": ("api", "dp_lm"), "select": ("selection_api", "select"),
         "dp_glm": ("glm_api", "dp_glm"), "DPGLMResult": ("glm_result", "DPGLMResult"),
         "DPLMResult": ("results", "DPLMResult")}
_SUBMODULES = {"datasets", "mechanisms", "ptr", "accountant", "errors", "results", "summary",
               "estimators", "formula", "depth", "selection", "bounds", "experiments",
               "plotting"}

__all__ = ["dp_lm", "dp_glm", "select", "DPLMResult", "DPGLMResult", "Budget", "Charge", "Ledger",
           "DPStatsError", "BudgetExceededError", "PrivacyLeakWarning", "NotPrivateWarning",
           "datasets", "mechanisms", "ptr", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{mod}", __name__), attr)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'dpstats' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
