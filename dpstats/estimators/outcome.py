"""What an estimator returns (:class:`Estimate`) and why it may withhold its coefficients.

Every reason an estimator can give for releasing nothing is a :class:`Withheld` code, and
:data:`EXPLANATIONS` is the one table that says what each code means to a user: the sentence
of the summary's alert (:func:`explain`) and the note added to the result
(:func:`withheld_note`). Results and the pipeline read that table; estimators only set the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

import numpy as np

from ..mechanisms.ptr import PTRReport

__all__ = ["Estimate", "Withheld", "Explanation", "EXPLANATIONS", "explain", "withheld_note",
           "withheld"]


class Withheld(StrEnum):
    """Why an estimator released no coefficients (the budget it used is still spent)."""

    #: Tukey: fewer than 4 models (too few rows for m groups).
    TOO_FEW_MODELS = "too_few_models"
    #: Tukey: the propose-test-release check failed.
    PTR_FAILED = "ptr_failed"
    #: Tukey: every depth region the mechanism may sample from has zero volume.
    ZERO_VOLUME = "zero_volume"
    #: AdaSSP, BAS, FW, DP-GD: the label's private bounds are unusable (too wide to map back).
    LABEL_BOUNDS = "label_bounds"


@dataclass(frozen=True)
class Explanation:
    """What a :class:`Withheld` code means to a user.

    ``sentence`` completes "Coefficients are not released: ..." in a summary; ``note`` (or
    None) is added to the result's notes and may name the number of models as ``{m}``.
    """

    sentence: str
    note: str | None = None


#: The one table of user-facing explanations, by code.
EXPLANATIONS: Mapping[Withheld, Explanation] = MappingProxyType({
    Withheld.TOO_FEW_MODELS: Explanation(
        "too few rows for the Tukey mechanism (it needs at least 4 models, and in practice "
        "hundreds). Try more rows or fewer terms.",
        "Too few rows for the Tukey mechanism: m = {m} models (needs at least 4, and in "
        "practice hundreds). Nothing was released."),
    Withheld.PTR_FAILED: Explanation(
        "the PTR check failed. Try: more rows, fewer features (select=..., smaller k), or a "
        "larger eps.",
        "PTR failed: the models do not agree closely enough for a safe release. Try more rows, "
        "fewer features (select=..., smaller k) or a larger eps."),
    Withheld.ZERO_VOLUME: Explanation(
        "every depth region the Tukey mechanism could sample from has zero volume (the models "
        "coincide in some coordinate). Try more rows or fewer terms."),
    Withheld.LABEL_BOUNDS: Explanation(
        "the private bounds of the response found no histogram cell above the noise threshold "
        "(too few rows for this eps). Give public bounds, e.g. bounds={'y': (lo, hi)}, use a "
        "larger eps or more rows."),
})


def _code(reason: object) -> Withheld | None:
    try:
        return Withheld(reason)
    except ValueError:
        return None


def explain(reason: object) -> str | None:
    """The summary sentence for a reason code (a :class:`Withheld` or its string value).

    Anything that is not a known code is returned unchanged (None stays None).

    >>> explain("ptr_failed")[:21]
    'the PTR check failed.'
    """
    code = _code(reason)
    return EXPLANATIONS[code].sentence if code is not None else reason


def withheld_note(reason: object, *, m: int | None = None) -> str | None:
    """The note a result carries for a reason code (None when the code has none).

    >>> withheld_note(Withheld.TOO_FEW_MODELS, m=3)[:48]
    'Too few rows for the Tukey mechanism: m = 3 mode'
    """
    code = _code(reason)
    note = EXPLANATIONS[code].note if code is not None else None
    return None if note is None else note.format(m=m)


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
    m, depth, max_depth : int or None
        Number of models, released Tukey depth and its maximum (Tukey).
    clip : (ndarray, ndarray) or None
        The released per-column box ``(lo, hi)`` the model was fitted in (intercept and
        dropped columns ``-inf, inf``): ``np.clip(x, lo, hi) @ params`` is the fitted
        predictor. None for methods without one.
    dropped : tuple of int
        Column positions left out (coefficient 0) because their released bounds were unusable.
    details : mapping
        Method-specific public facts (e.g. ``loss``, ``T``, ``lr``, ``mu``, ``bounds``).
    """

    params: np.ndarray | None
    released: bool
    withheld: Withheld | None = None
    ptr: PTRReport | None = None
    m: int | None = None
    depth: int | None = None
    max_depth: int | None = None
    clip: tuple[np.ndarray, np.ndarray] | None = None
    dropped: tuple[int, ...] = ()
    details: Mapping[str, object] = field(default_factory=dict)

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
