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

from .errors import BudgetExceededError, DPStatsError, NotPrivateWarning, PrivacyLeakWarning
from .mechanisms.accountant import Budget, Charge, Ledger

__version__ = "0.1.0"

#: Public names loaded on first use: name -> (module, attribute).
_LAZY = {"dp_lm": ("api.lm", "dp_lm"), "select": ("api.select", "select"),
         "dp_glm": ("api.glm", "dp_glm"), "rows_needed": ("pipeline.feasibility", "rows_needed"),
         "DPGLMResult": ("results.glm", "DPGLMResult"),
         "DPLMResult": ("results.lm", "DPLMResult"), "SelectionResult":
         ("results.selection", "SelectionResult")}
#: Subpackages, loaded on first use (``dp.mechanisms.laplace``, ``dp.lab.experiments.run``);
#: ``dp.ptr`` is the PTR module of :mod:`dpstats.mechanisms`, kept at the top for the contract.
_SUBMODULES = {"datasets": "datasets", "mechanisms": "mechanisms", "ptr": "mechanisms.ptr",
               "errors": "errors", "api": "api", "pipeline": "pipeline", "formula": "formula",
               "selection": "selection", "estimators": "estimators", "results": "results",
               "lab": "lab", "validation": "validation"}

__all__ = ["dp_lm", "dp_glm", "select", "rows_needed", "DPLMResult", "DPGLMResult",
           "SelectionResult", "Budget",
           "Charge", "Ledger",
           "DPStatsError", "BudgetExceededError", "PrivacyLeakWarning", "NotPrivateWarning",
           "datasets", "mechanisms", "ptr", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{mod}", __name__), attr)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    else:
        raise AttributeError(f"module 'dpstats' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
