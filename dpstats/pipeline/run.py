"""``run(request)``: the one pipeline behind ``dp_lm``, ``dp_glm`` and ``select``.

shared budget check -> design (validates the data; charges nothing) -> [levels stage, only
when the formula reads undeclared category levels] -> column checks -> budget plan (ledger,
stage shares, private n) -> selection -> estimation. Every check that can refuse a fit runs
before the first charge, except the column checks of a fit with a levels stage, which need the
released levels (the design's columns) and so come after it. The fit's RNG is drawn from in
stage order (levels, private n, selection, regression). Orchestration only: mechanisms add the
noise.

No check here reads the number of rows or a data value: a design with fewer rows than columns
(or none at all) goes through the mechanisms like any other and comes out withheld or noisy.
Only the non-private ``method="ols"`` refuses it (:func:`check_rows`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

from .._kernels.prepare import compile_notice
from ..errors import DataError, NotPrivateWarning, ValidationError
from ..estimators import Estimate, get_estimator
from ..formula.design import Design, check_data
from ..selection import Selection
from .budget import BudgetPlan, levels_budget, open_ledger, plan_budget
from .estimate import estimate_kept
from .glm_design import numeric_label_note
from .levels import discover_levels, first_design, levels_note
from .request import FitRequest
from .select import candidate_columns, check_bounds_for, resolve_selector, selection_stage

__all__ = ["run", "Outcome", "check_rows"]


@dataclass(frozen=True, eq=False)
class Outcome:
    """What a run produced, for the result builders of :mod:`dpstats.pipeline.finish`.

    ``notes`` is a list the result builders may still append to; ``plan`` is None only for the
    non-private ``method="ols"``, ``est`` is None for ``select``; ``private`` is False when
    category levels were read from the data (``levels="data"``).
    """

    design: Design
    notes: list[str]
    levels: tuple | None = None
    candidates: list[int] = field(default_factory=list)
    selector: str | None = None
    selection: Selection | None = None
    keep: list[int] = field(default_factory=list)
    plan: BudgetPlan | None = None
    est: Estimate | None = None
    m_used: object = None
    names: list[str] = field(default_factory=list)
    private: bool = True


def run(request: FitRequest) -> Outcome:
    """Carry out a validated request: design -> budget plan -> selection -> estimation.

    Before the data is touched, the kernels the request may use (from its public arguments) are
    compiled when the cache lacks them, with a notice on stderr
    (:func:`dpstats._kernels.prepare.compile_notice`)."""
    with compile_notice(request.kind, request.method, request.selector):
        return _run(request)


def _run(request: FitRequest) -> Outcome:
    if request.budget is not None:   # the shared budget can pay: checked before the data
        request.budget.check(request.eps, request.delta)
    request = replace(request, data=check_data(request.data))  # a polars frame: converted once
    first = first_design(request)
    design, levels = first.design, first.response_levels
    ledger, spent = None, (0.0, 0.0)
    if first.discover:                 # the levels stage: the first charge of the fit
        ledger, spent = open_ledger(request), levels_budget(request)
        design = discover_levels(request, first, ledger)
    notes = _design_notes(request, design, levels)
    if first.discover:
        notes.insert(0, levels_note(request, first.discover))
    if request.method == "ols":
        return _run_ols(design, notes)
    candidates = candidate_columns(design.columns, design.has_intercept)
    selector = _check_columns(request, design, candidates, notes)
    if request.paper_accounting:
        _warn_paper(notes)
    plan = plan_budget(request, design.X.shape[0], selector, ledger, spent)
    selector, selection, keep = selection_stage(request, design, candidates, selector, plan)
    out = Outcome(design=design, notes=notes, levels=levels, candidates=candidates,
                  selector=selector, selection=selection, keep=keep, plan=plan,
                  private=first.private)
    if request.kind == "select":
        return out
    est, m_used, names = estimate_kept(request, design, candidates, keep, plan)
    return replace(out, est=est, m_used=m_used, names=names)


def check_rows(n: int, p: int, p_fit: int) -> None:
    """Least squares needs at least as many complete rows as the columns it fits (the
    non-private ``method="ols"`` only: this refusal reads the row count exactly)."""
    if n < p_fit:
        what = (f"the design has more columns ({p})" if p_fit == p else
                f"the regression after selection fits more columns ({p_fit})")
        raise DataError(f"{what} than there are rows with complete data; use fewer terms "
                        "(or select=..., smaller k) or more rows")


def _design_notes(request: FitRequest, design: Design, levels: tuple | None) -> list[str]:
    """Notes about the design: category levels read from the data (dp_lm), the coding of a
    two-level or numeric response (dp_glm)."""
    if request.kind == "lm" and design.levels_from_data:
        return ["Category levels of " + ", ".join(design.levels_from_data) + " were read "
                "from the data (not private); declare them to avoid this."]
    if levels is not None:
        return [f"Response {design.label!r} coded 0 = {levels[0]!r}, 1 = {levels[1]!r} "
                "(declared level order)."]
    note = numeric_label_note(request.formula, request.data) if request.kind == "glm" else None
    return [note] if note else []


def _check_columns(request: FitRequest, design: Design, candidates: list[int],
                   notes: list[str]) -> str | None:
    """Checks of the design's columns against the request (charging nothing); returns the
    selector to run (None for none, ``"auto"`` while undecided)."""
    k = request.k
    if request.kind == "select":
        if not candidates:
            raise ValidationError(f"`formula` {design.formula!r} has no terms to select from "
                                  "(the intercept is never selected); add terms, e.g. 'y ~ .'")
        if k > len(candidates):
            raise ValidationError(f"k={k} but the formula has only {len(candidates)} candidate "
                                  "terms (the intercept is never selected); use a smaller k")
        check_bounds_for(request.bounds, design.columns, candidates)
        return request.selector
    check_bounds_for(request.bounds, design.columns, candidates)
    selector, skip_note = resolve_selector(request.selector, len(candidates), k)
    if skip_note:
        notes.append(skip_note)
    return selector


def _warn_paper(notes: list[str]) -> None:
    """``accounting="paper"`` is not private: warn at fit time and say so in the notes."""
    warnings.warn("accounting='paper' is NOT differentially private: the published Tukey "
                  "analysis assumes one row adds or removes a whole model, but with random "
                  "group labels it replaces one (the mechanism's share is not eps-DP). Use it "
                  "only to reproduce the papers; do not release its output.",
                  NotPrivateWarning, stacklevel=4)
    notes.append("NOT PRIVATE: accounting='paper' reproduces the published Tukey analysis, "
                 "which is not (eps, delta)-DP when one row replaces a model (for comparison "
                 "only; use the default accounting='swap').")


def _run_ols(design: Design, notes: list[str]) -> Outcome:
    """dp_lm's non-private baseline: least squares on all columns, nothing charged."""
    n, p = design.X.shape
    check_rows(n, p, p)
    warnings.warn("method='ols' is NOT differentially private: it is the non-private baseline. "
                  "Do not release its output.", NotPrivateWarning, stacklevel=4)
    est = get_estimator("ols")(design.X, design.y)
    notes.append("NOT PRIVATE: ordinary least squares on the raw data (baseline only).")
    return Outcome(design=design, notes=notes, est=est, keep=list(range(p)),
                   names=list(design.columns))
