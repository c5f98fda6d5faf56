"""The levels stage: category levels the formula reads but the data does not declare.

A text column used as a factor (``y ~ city``, ``y ~ .``) or ``C(col)`` without ``levels=`` on a
column that is not a ``pd.Categorical`` would take its levels, and so its coefficient names,
from the data: a level one row holds names that row, and adding a row can add a coefficient.
With ``levels="private"`` (the default) the levels are discovered privately instead, as the
first stage of the fit: :func:`dpstats.mechanisms.levels.private_levels` releases the levels
that many rows share and whether the rest are numerous enough to pool into ``"(other)"``; the
design is then built from the released levels only (rows of a level that was not released go
to the pooled level, or are dropped when it was not released either). The stage spends the
``"levels"`` share of eps and of delta (:func:`dpstats.pipeline.budget.levels_budget`), and
only when the formula needs it, which is a public fact (formula and dtypes).

``levels="data"`` reads the levels from the data as before: the fit is then NOT private
(``private=False``, :class:`~dpstats.errors.NotPrivateWarning`). ``method="ols"`` reads them too
(it is not private anyway). Orchestration only: the mechanism draws the noise and charges.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import pandas as pd

from ..errors import NotPrivateWarning, ValidationError
from ..formula.design import Design, build_design, check_data
from ..formula.discovery import (
    LevelCoding,
    apply_coding,
    level_histograms,
    pooled_name,
    text_factor_columns,
    undeclared_columns,
    with_placeholders,
)
from ..mechanisms.accountant import Ledger
from ..mechanisms.levels import private_levels, stability_threshold
from .budget import levels_budget
from .glm_design import binary_response, binary_rows

__all__ = ["FirstDesign", "first_design", "discover_levels", "levels_note"]


@dataclass(frozen=True, eq=False)
class FirstDesign:
    """The design as the data declares it, and what the levels stage must do.

    ``response_levels``: dp_glm's declared response levels; ``data``: the data (dp_glm:
    response coded 0/1); ``discover``: columns whose levels the levels stage discovers (empty
    when none), ``histograms`` their level counts (the mechanism's input, never released);
    ``private``: False when levels were read from the data.
    """

    design: Design
    response_levels: tuple | None
    data: pd.DataFrame
    discover: tuple[str, ...] = ()
    private: bool = True
    histograms: tuple = ()


def first_design(request) -> FirstDesign:
    """Build the design with the levels the data declares and decide what the levels stage
    does; every refusal here comes before anything is charged.

    Text columns used only as plain categories are one-level placeholders in this design
    (:func:`~dpstats.formula.discovery.with_placeholders`: no column per level of the data is
    built); other undeclared levels (``C(code)`` on numbers) are read from the data only to
    build it. Unless the fit opts out (``levels="data"``, ``method="ols"``) nothing of this
    design is released: the levels stage replaces it.
    """
    ols = request.method == "ols"
    data, resp = check_data(request.data), None
    if request.kind == "glm":
        data, resp = binary_response(request.formula, data)
    text = text_factor_columns(request.formula, data) \
        if request.levels == "private" and not ols else ()
    built = with_placeholders(data, text)
    design = build_design(request.formula, built, warn_levels=ols)
    if request.kind == "glm":
        design = binary_rows(design)
    if ols or not (text or design.levels_from_data):
        return FirstDesign(design, resp, data)
    if request.levels == "data":
        warnings.warn(NotPrivateWarning(
            f"levels='data' read the category levels of {list(design.levels_from_data)} from "
            "the data without privacy protection: this fit is NOT differentially private. "
            "Declare the levels or use levels='private' to release it."), stacklevel=4)
        return FirstDesign(design, resp, data, private=False)
    cols = undeclared_columns(design.spec, built, text)
    _check_levels_budget(request, cols)
    hists = tuple(level_histograms(data, design.variables, cols))
    return FirstDesign(design, resp, data, discover=cols, histograms=hists)


def _check_levels_budget(request, cols: tuple[str, ...]) -> None:
    """The levels stage needs eps and delta (refused before anything is charged)."""
    eps, delta = levels_budget(request)
    how = ("declare them (data[col] = pd.Categorical(data[col], categories=[...]) or "
           "C(col, levels=[...]) in the formula)")
    if eps <= 0:
        raise ValidationError(
            f"the formula reads the category levels of {list(cols)} from the data, which are "
            "discovered privately in a 'levels' stage, but split gives that stage no share; "
            f"add one (e.g. split={{..., 'levels': 0.05}}) or {how}")
    if delta <= 0:
        raise ValidationError(
            f"the formula reads the category levels of {list(cols)} from the data; discovering "
            "them privately needs delta > 0, but select() is pure eps-DP by default: pass "
            f"delta (e.g. delta=1e-6, spent on the levels only) or {how}")


def discover_levels(request, first: FirstDesign, ledger: Ledger) -> Design:
    """The levels stage: release the common levels of ``first.discover`` (charging
    ``ledger``) and build the design from them."""
    cols = first.discover
    eps, delta = levels_budget(request)
    released = private_levels(first.histograms, eps, delta, request.rng, ledger, names=cols)
    codings = tuple(LevelCoding(c, r.levels, pooled_name(r.levels) if r.pooled else None)
                    for c, r in zip(cols, released, strict=True))
    design = build_design(request.formula, apply_coding(first.data, codings))
    if request.kind == "glm":
        design = binary_rows(design)     # rows whose label is not 0/1 are missing rows
    return replace(design, recode=codings)


def levels_note(request, cols: tuple[str, ...]) -> str:
    """The note a result carries about the levels stage (public: columns, budget, threshold)."""
    eps, delta = levels_budget(request)
    _, _, tau = stability_threshold(eps / len(cols) / 2.0, delta / len(cols))
    return (f"Category levels of {', '.join(cols)} were discovered privately (levels stage, "
            f"eps={eps:.4g}, delta={delta:.3g}): a level is kept when its noisy count reaches "
            f"{tau}; rows of the other levels form the level '(other)' when they are that many, "
            "else they are dropped. Declare the levels to skip this stage.")
