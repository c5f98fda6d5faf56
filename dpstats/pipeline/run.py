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

from .._kernels.prepare import ahead, compile_notice, prepare, request_units
from ..errors import DataError, NotPrivateWarning, ValidationError
from ..estimators import Estimate, get_estimator
from ..estimators.outcome import withheld
from ..formula.design import Design, check_data
from ..selection import Selection
from ..withheld import Withheld
from .auto import AutoChoice, decide, formula_selects
from .budget import BudgetPlan, levels_budget, open_ledger, plan_budget, replan
from .estimate import estimate_kept
from .glm_design import indicator_bounds, numeric_label_note
from .levels import discover_levels, first_design, levels_note
from .request import FitRequest
from .select import (
    candidate_columns,
    candidate_terms,
    check_bounds_for,
    resolve_selector,
    selection_mode,
    selection_stage,
)

__all__ = ["run", "Outcome", "check_rows"]


@dataclass(frozen=True, eq=False)
class Outcome:
    """What a run produced, for the result builders of :mod:`dpstats.pipeline.finish`.

    ``notes`` is a list the result builders may still append to; ``plan`` is None only for the
    non-private ``method="ols"``, ``est`` is None for ``select``; ``private`` is False when
    category levels were read from the data (``levels="data"``). ``request`` is the request
    with ``dp_lm``'s automatic method and number of terms decided (None when nothing was
    decided) and ``choice`` the public sentence explaining an automatic method.
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
    request: FitRequest | None = None
    choice: str | None = None


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
    auto = request.kind == "lm" and (request.method == "auto"
                                     or (request.k is None and selector is not None))
    plan = plan_budget(request, design.X.shape[0], selector, ledger, spent, force_n=auto)
    choice = None
    if request.kind == "lm" and plan.n_noisy is not None:   # decided from the released count
        choice = _decide(request, design, candidates, selector, plan)
        if choice.method is None:
            return _too_few_rows(request, design, notes, levels, candidates, plan, choice,
                                 first.private)
        prepare(ahead(request_units(request.kind, choice.method, None)))  # chosen method's kernels
        request, selector, plan = _apply(request, selector, plan, choice, notes,
                                         len(candidates),
                                         len(candidate_terms(design, candidates)[1]))
    if request.kind == "glm" and request.method == "auto":      # before selection spends
        early = _glm_too_few_rows(request, design, notes, levels, candidates, plan,
                                  first.private)
        if early is not None:
            return early
    selector, selection, keep = selection_stage(request, design, candidates, selector, plan)
    out = Outcome(design=design, notes=notes, levels=levels, candidates=candidates,
                  selector=selector, selection=selection, keep=keep, plan=plan,
                  private=first.private, request=request,
                  choice=None if choice is None else choice.reason)
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
    k, n_terms = request.k, len(candidate_terms(design, candidates)[1])
    if request.kind == "select":
        if not candidates:
            raise ValidationError(f"`formula` {design.formula!r} has no terms to select from "
                                  "(the intercept is never selected); add terms, e.g. 'y ~ .'")
        if k > n_terms:
            raise ValidationError(f"k={k} but the formula has only {n_terms} candidate terms "
                                  "(a factor is one term; the intercept is never selected); "
                                  "use a smaller k")
        check_bounds_for(request.bounds, design.columns, candidates)
        return request.selector
    check_bounds_for(request.bounds, design.columns, candidates)
    if request.kind == "lm":
        mode = selection_mode(request.selector, formula_selects(request.formula), k)
        if k is None:           # how many terms: decided after the private row count
            return mode
        selector, skip_note = resolve_selector(mode, n_terms, k)
        if skip_note:
            notes.append(skip_note)
        return selector
    selector, skip_note = resolve_selector(request.selector, n_terms, k)
    if skip_note:
        notes.append(skip_note)
    return selector


def _decide(request: FitRequest, design: Design, candidates: list[int], selector: str | None,
            plan: BudgetPlan) -> AutoChoice:
    """dp_lm's method and number of terms from the released row count (public inputs only)."""
    eps_all = request.eps - plan.eps_levels - plan.eps_n
    return decide(n_hat=plan.n_noisy, p_full=len(design.columns), n_candidates=len(candidates),
                  intercept=len(design.columns) - len(candidates), eps_all=eps_all,
                  eps_sel=request.eps * request.shares["selection"], eps_n=plan.eps_n,
                  delta=plan.delta_reg, method=request.method,
                  selection=selector, k=request.k, dummies=_has_dummies(design))


def _has_dummies(design: Design) -> bool:
    """Whether the design has columns of categorical terms (public: formula and levels)."""
    cols = list(design.columns)
    return bool(indicator_bounds(design.spec, cols, list(range(len(cols)))))


def _apply(request: FitRequest, selector: str | None, plan: BudgetPlan, choice: AutoChoice,
           notes: list[str], n_columns: int, n_terms: int):
    """The request, selector and plan once the method and the number of terms are decided.

    The rule counts design columns (``choice.k`` columns are supported); selectors count terms,
    so with factor terms the supported columns are shared out at the terms' mean width
    (public: from the formula and the levels)."""
    if selector is not None and choice.k is None:
        if selector != "auto" and request.k is None:
            notes.append(f"select={selector!r} skipped: the private row count supports all "
                         f"{n_terms} candidate terms; its budget share went to the "
                         "regression.")
        selector = None
    k = request.k
    if request.k is None and choice.k is not None:   # the rule's k counts columns
        k = choice.k if n_terms >= n_columns else max(1, choice.k * n_terms // n_columns)
    request = replace(request, method=choice.method, k=k)
    return request, selector, replan(plan, request, selector)


def _too_few_rows(request, design, notes, levels, candidates, plan, choice, private) -> Outcome:
    """Stop after the private row count: no method can fit the smallest model the formula
    allows. Nothing after the count is charged; the note says how many rows are needed."""
    p = choice.p
    notes.append(f"Too few rows: the private row count is below what any method needs for "
                 f"{p} column{'s' * (p != 1)} at regression eps {choice.eps_reg:.3g}; about "
                 f"{choice.rows_needed:,} rows of data are needed (dpstats.rows_needed). The "
                 "fit stopped after the row count; nothing else was charged.")
    est = withheld(len(design.columns), Withheld.TOO_FEW_ROWS)
    return Outcome(design=design, notes=notes, levels=levels, candidates=candidates,
                   keep=list(range(len(design.columns))),
                   plan=replan(plan, request, None, spend=False), est=est,
                   names=list(design.columns), private=private,
                   request=request, choice=choice.reason)


def _glm_too_few_rows(request, design, notes, levels, candidates, plan,
                      private) -> Outcome | None:
    """dp_glm's ``method="auto"`` withholding from the released count before any selection
    runs (:func:`dpstats.estimators.glm_auto.early_withhold`); None to go on."""
    from ..estimators.glm_auto import early_withhold
    est = early_withhold(plan.n_noisy, len(design.columns), plan.eps_reg, plan.delta_reg)
    if est is None:
        return None
    return Outcome(design=design, notes=notes, levels=levels, candidates=candidates,
                   keep=list(range(len(design.columns))),
                   plan=replan(plan, request, None, spend=False), est=est,
                   names=list(design.columns), private=private, request=request)


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
