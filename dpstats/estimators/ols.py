"""Non-private ordinary least squares: the baseline every private method is compared to.

NOT PRIVATE. It reads the data without noise and charges nothing; results built from it carry
``private=False`` and say so in every summary.
"""

from __future__ import annotations

import numpy as np

from ..validation import OptionSpec
from .outcome import Estimate

__all__ = ["estimate", "OPTIONS", "COMMON"]

#: OLS takes no pipeline keywords and no options.
COMMON: frozenset[str] = frozenset()
OPTIONS = OptionSpec()


def estimate(X: np.ndarray, y: np.ndarray) -> Estimate:
    """Least-squares coefficients (minimum-norm when X is rank deficient). NOT PRIVATE."""
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    return Estimate(params=beta, released=True)
