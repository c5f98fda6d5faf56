"""Exceptions and warnings raised by dpstats.

Every error dpstats raises on purpose is a :class:`DPStatsError`. Messages name the argument,
the offending value when it is public (never a data value), and what to do instead.
"""

from __future__ import annotations

__all__ = [
    "DPStatsError",
    "ValidationError",
    "PrivacyParameterError",
    "FormulaError",
    "StatefulTransformError",
    "DataError",
    "BudgetExceededError",
    "UnknownMethodError",
    "PredictionError",
    "PrivacyLeakWarning",
    "NotPrivateWarning",
]


class DPStatsError(Exception):
    """Base class of every error raised on purpose by dpstats."""


class ValidationError(DPStatsError, ValueError):
    """An argument has a value dpstats cannot use; nothing was charged."""


class PrivacyParameterError(ValidationError):
    """``eps``, ``delta`` or a budget split is invalid (e.g. eps <= 0, delta outside (0, 1))."""


class FormulaError(ValidationError):
    """The formula cannot be parsed or names columns the data does not have."""


class StatefulTransformError(FormulaError):
    """The formula uses a transform that learns from the data (center, scale, poly, splines)."""


class DataError(ValidationError):
    """The data cannot be used as given (not a DataFrame, empty, non-numeric label, ...)."""


class UnknownMethodError(ValidationError):
    """A method, selector or lemma name is not one dpstats knows."""


class BudgetExceededError(DPStatsError):
    """A request for privacy budget does not fit in what remains of a :class:`~dpstats.Budget`."""


class PredictionError(DPStatsError, ValueError):
    """``predict``/``score`` received data that does not match the fitted model."""


class PrivacyLeakWarning(UserWarning):
    """Something was read from the data without privacy protection (e.g. category levels)."""


class NotPrivateWarning(UserWarning):
    """The result is not differentially private (for example ``method="ols"``)."""
