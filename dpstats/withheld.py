"""Why a fit released no coefficients: the reason codes and the one table that explains them.

Estimators set a :class:`Withheld` code on their ``Estimate``; results print
:func:`explain` (the summary's alert) and the pipeline adds :func:`withheld_note` to a result's
notes. The codes and texts are public: each is a function of released values (a failed PTR test,
a released row count, released bounds), never of the data. This module sits at the bottom of
the package (beside ``errors``) so that estimators and results can both read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = ["Withheld", "Explanation", "EXPLANATIONS", "explain", "withheld_note", "short_reason"]


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
    #: dp_lm and dp_glm: the released row count is below what any method needs (dp_lm: for
    #: the smallest model the formula allows, :func:`dpstats.rows_needed`; dp_glm's
    #: method="auto": :func:`dpstats.estimators.glm_auto.rows_needed`); nothing after the row
    #: count (and, in dp_glm, a selection that ran before it) was charged.
    TOO_FEW_ROWS = "too_few_rows"


@dataclass(frozen=True)
class Explanation:
    """What a :class:`Withheld` code means to a user.

    ``sentence`` completes "Coefficients are not released: ..." in a summary; ``note`` (or
    None) is added to the result's notes and may name the number of models as ``{m}``.
    """

    sentence: str
    note: str | None = None
    #: The condition in a few words, for a result's ``repr`` ("NOT released (...)").
    short: str = ""


#: The one table of user-facing explanations, by code.
EXPLANATIONS: Mapping[Withheld, Explanation] = MappingProxyType({
    Withheld.TOO_FEW_MODELS: Explanation(
        "too few rows for the Tukey mechanism (it needs at least 4 models, and in practice "
        "hundreds). Try more rows or fewer terms.",
        "Too few rows for the Tukey mechanism: m = {m} models (needs at least 4, and in "
        "practice hundreds). Nothing was released.",
        "too few rows for the Tukey mechanism (m < 4)"),
    Withheld.PTR_FAILED: Explanation(
        "the PTR check failed. Try: more rows, fewer features (select=..., smaller k), or a "
        "larger eps.",
        "PTR failed: the models do not agree closely enough for a safe release. Try more rows, "
        "fewer features (select=..., smaller k) or a larger eps.",
        "PTR failed"),
    Withheld.ZERO_VOLUME: Explanation(
        "every depth region the Tukey mechanism could sample from has zero volume (the models "
        "coincide in some coordinate). Try more rows or fewer terms.",
        short="every Tukey depth region has zero volume"),
    Withheld.LABEL_BOUNDS: Explanation(
        "the private bounds of the response found no histogram cell above the noise threshold "
        "(too few rows for this eps, or values beyond the histogram's grid of about "
        "2**-64 to 2**64 in absolute value). Give public bounds, e.g. bounds={'y': (lo, hi)}, "
        "rescale the response by a public constant, use a larger eps or more rows.",
        short="the response's private bounds found nothing (too few rows for this eps, or "
              "values off the grid)"),
    Withheld.TOO_FEW_ROWS: Explanation(
        "the private row count is below what any method needs for this model (the Notes say "
        "how many rows; see dpstats.rows_needed). The fit stopped after the row count: only "
        "its share of the budget was spent. Try more rows, fewer terms or a larger eps.",
        short="too few rows for any method (stopped after the private row count)"),
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


def short_reason(reason: object) -> str | None:
    """The condition that withheld a fit, in a few words (for a ``repr``); a text that is not
    a known code gives its first sentence, None stays None.

    >>> short_reason("too_few_models")
    'too few rows for the Tukey mechanism (m < 4)'
    """
    code = _code(reason)
    if code is not None:
        return EXPLANATIONS[code].short or EXPLANATIONS[code].sentence.split(". ")[0]
    return None if reason is None else str(reason).split(". ")[0]
