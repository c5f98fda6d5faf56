"""dpstats: differentially private regression with R-style formulas."""

from .accountant import Budget, Charge, Ledger
from .errors import (
    BudgetExceededError,
    DPStatsError,
    NotPrivateWarning,
    PrivacyLeakWarning,
)

__version__ = "0.1.0"

__all__ = ["Budget", "Charge", "Ledger", "DPStatsError", "BudgetExceededError",
           "PrivacyLeakWarning", "NotPrivateWarning", "__version__"]
