"""What an estimator returns (:class:`Estimate`), and the constructor of a withheld one.

Every reason an estimator can give for releasing nothing is a :class:`Withheld` code; the one
table that says what each code means to a user is :data:`dpstats.withheld.EXPLANATIONS` (re-exported
here). Results and the pipeline read that table; estimators only set the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..mechanisms.ptr import PTRReport
from ..withheld import EXPLANATIONS, Explanation, Withheld, explain, withheld_note

__all__ = ["Estimate", "Inference", "Withheld", "Explanation", "EXPLANATIONS", "explain",
           "withheld_note",
           "withheld"]


@dataclass(frozen=True)
class Inference:
    """Uncertainty of a released fit, on the original scale (a release or post-processing).

    Attributes
    ----------
    cov : ndarray (p, p)
        Covariance (mean squared error, bias included) of the released coefficients; NaN rows
        and columns for coefficients without an interval.
    method : str
        How it was obtained (one line).
    reference : str
        Where the method comes from.
    share : float
        Share of the fit's eps spent on the inference release (0: post-processing only).
    covers : str
        One line: what a 95% interval covers.
    df : float or None
        Degrees of freedom of a t reference distribution; None: normal (z).
    sigma : float or None
        Residual standard error on the original scale (derived from released values).
    r2, r2_adj : float or None
        R^2 and adjusted R^2 derived from released values.
    cov_type : str
        "nonrobust" (constant error variance) or "HC1" (private sandwich), statsmodels'
        vocabulary.
    share_of : str
        What ``share`` is a share of: ``"eps"`` (a separate release, ledger stage
        ``"inference"``) or ``"mu^2"`` (a part of the fit's Gaussian-DP plan).
    bias : ndarray (p,) or None
        The released coefficients' estimated bias (post-processing of released values): the
        intervals and z statistics are centred at ``params - bias`` and ``cov`` is then the
        covariance about that centre. None: centred at the coefficients (``cov`` includes
        the bias).
    """

    cov: np.ndarray
    method: str
    reference: str
    share: float
    covers: str
    df: float | None = None
    sigma: float | None = None
    r2: float | None = None
    share_of: str = "eps"
    cov_type: str = "nonrobust"
    r2_adj: float | None = None
    bias: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("cov", "bias"):
            value = getattr(self, name)
            if value is not None:
                value = np.array(value, dtype=np.float64)
                value.setflags(write=False)
                object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Estimate:
    """What an estimator releases: coefficients (or None / NaN), and public facts of the run.

    Attributes
    ----------
    params : ndarray or None
        Coefficients on the original scale; NaN (bounded methods) or None (Tukey) when
        withheld.
    released : bool
        True exactly when ``withheld`` is None.
    withheld : Withheld or None
        Why nothing was released (see :data:`EXPLANATIONS`).
    ptr : PTRReport or None
        The propose-test-release report (Tukey).
    m, max_depth : int or None
        Number of models and the largest depth, floor(m/2) (Tukey; both public). The depth
        the Tukey mechanism sampled is not a field: it is not released.
    clip : (ndarray, ndarray) or None
        The released per-column box ``(lo, hi)`` the model was fitted in (intercept and
        dropped columns ``-inf, inf``): ``np.clip(x, lo, hi) @ params`` is the fitted
        predictor. None for methods without one.
    dropped : tuple of int
        Column positions left out (coefficient 0) because their released bounds were unusable.
    details : mapping
        Method-specific public facts (e.g. ``loss``, ``T``, ``lr``, ``mu``, ``bounds``).
    inference : Inference or None
        Standard errors and what the intervals cover, when the method releases them.
    """

    params: np.ndarray | None
    released: bool
    withheld: Withheld | None = None
    ptr: PTRReport | None = None
    m: int | None = None
    max_depth: int | None = None
    clip: tuple[np.ndarray, np.ndarray] | None = None
    dropped: tuple[int, ...] = ()
    details: Mapping[str, object] = field(default_factory=dict)
    inference: Inference | None = None

    def __post_init__(self) -> None:
        code = None if self.withheld is None else Withheld(self.withheld)
        if self.released != (code is None):
            raise ValueError("an Estimate is released exactly when it has no withheld reason")
        object.__setattr__(self, "withheld", code)
        object.__setattr__(self, "dropped", tuple(int(j) for j in self.dropped))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))


def withheld(p: int, reason: Withheld, **facts) -> Estimate:
    """An estimate of ``p`` NaN coefficients, not released for ``reason``.

    Used when private bounds turned out unusable: the budget spent on them is still spent, and
    the decision depends only on released values, so withholding is post-processing.
    ``facts`` are the other :class:`Estimate` fields (``clip``, ``details``, ...).
    """
    return Estimate(params=np.full(p, np.nan), released=False, withheld=reason, **facts)
