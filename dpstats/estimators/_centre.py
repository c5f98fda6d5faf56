"""Private centring of the regression columns for the Tukey mechanism.

Approximate Tukey depth looks at each coordinate separately, so the region of depth >= i is a
box and the released point is drawn uniformly from a box shell. When a column is far from zero
(longitude near -120, pH near 3), every group's intercept is tightly tied to that column's
slope (intercept ~ ybar - slope * xbar), the box ignores the tie, and a point drawn from it has
an intercept that does not match its slopes: predictions are off by orders of magnitude.

Fitting the groups on ``x - c`` for a centre ``c`` near the data removes the tie: the
intercept coordinate becomes roughly the mean label. The released ``(a, slopes)`` maps back to
the original parametrisation by ``intercept = a - c . slopes`` (post-processing). ``c`` must be
public or private: here each column's median is released by
:func:`dpstats.mechanisms.private_quantile` (eps-DP under add/remove one row, utility
sensitivity 1/2), on a public 1/8-octave grid, so ``c`` is within a few percent of the median.
"""

from __future__ import annotations

import numpy as np

from ..accountant import Ledger
from ..mechanisms import private_quantile

__all__ = ["private_centre", "CENTRE_SHARE"]

#: Share of the Tukey stage's eps spent on the private medians (all columns together).
CENTRE_SHARE = 0.05


def private_centre(X: np.ndarray, intercept_col: int, eps: float, rng: np.random.Generator,
                   ledger: Ledger | None = None, *, names=None,
                   stage: str = "regression") -> np.ndarray:
    """Private medians of every non-intercept column (0 for the intercept).

    ``eps`` is split evenly over the columns (basic composition); each median is eps_j-DP under
    add/remove one row.

    >>> import numpy as np
    >>> X = np.column_stack([np.ones(4000), np.random.default_rng(0).normal(-120, 2, 4000)])
    >>> c = private_centre(X, 0, 5.0, np.random.default_rng(1))
    >>> c[0], abs(c[1] + 120) < 10
    (0.0, True)
    """
    p = X.shape[1]
    cols = [j for j in range(p) if j != intercept_col]
    centre = np.zeros(p)
    if not cols:
        return centre
    each = eps / len(cols)
    for j in cols:
        name = names[j] if names is not None else f"column {j}"
        centre[j] = private_quantile(X[:, j], 0.5, each, rng, ledger, stage=stage,
                                     what=f"median of {name} (centring)")
    return centre
