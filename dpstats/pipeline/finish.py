"""The result of each entry point, from a request and what :func:`~dpstats.pipeline.run.run`
produced: :class:`~dpstats.results.lm.DPLMResult` (``dp_lm``),
:class:`~dpstats.results.glm.DPGLMResult` (``dp_glm``) and
:class:`~dpstats.results.selection.SelectionResult` (``select``).

Post-processing only: released values and public metadata go into the results.
"""

from __future__ import annotations

import pandas as pd

from ..results.glm import DPGLMResult
from ..results.lm import DPLMResult, FitSpec
from ..results.selection import SelectionResult
from .assemble import coef_inference, released_params, result_fields
from .request import FitRequest
from .run import Outcome
from .select import candidate_terms, selected_terms

__all__ = ["lm_result", "glm_result", "selection_result", "fit_spec"]


def fit_spec(design) -> FitSpec:
    """The public description of a design that a result keeps (formula, columns, spec)."""
    return FitSpec(formula=design.formula, expanded=design.expanded, label=design.label,
                   columns=tuple(design.columns), has_intercept=design.has_intercept,
                   model_spec=design.spec, levels_from_data=tuple(design.levels_from_data),
                   recode=tuple(design.recode), variables=tuple(design.variables),
                   terms=tuple(design.terms), term_of=tuple(design.term_of))


def lm_result(request: FitRequest, out: Outcome) -> DPLMResult:
    """The result of ``dp_lm`` (the non-private ``"ols"`` baseline says it is not private).
    An automatic method or number of terms is read from ``out.request`` (the decided request)
    and its explanation from ``out.choice``."""
    request = out.request or request
    design = out.design
    if request.method == "ols":
        return DPLMResult(params=pd.Series(out.est.params, index=design.columns, name="coef"),
                          spec=fit_spec(design), method="ols", eps=request.eps,
                          delta=request.delta, charges=(), released=True, private=False,
                          seeded=request.seeded, notes=tuple(out.notes))
    params, clip = released_params(out.est, design, out.keep, out.notes, request.bounds,
                                   out.names, out.m_used)
    return DPLMResult(params=params, clip=clip, method_choice=out.choice,
                      **_fit_fields(request, out))


def glm_result(request: FitRequest, out: Outcome) -> DPGLMResult:
    """The result of ``dp_glm``."""
    params, clip = released_params(out.est, out.design, out.keep, out.notes, request.bounds,
                                   out.names, out.m_used)
    return DPGLMResult(params=params, clip=clip, family=request.family,
                       response_levels=out.levels, **_fit_fields(request, out))


def _fit_fields(request: FitRequest, out: Outcome) -> dict:
    """Fields shared by the results of ``dp_lm`` and ``dp_glm`` besides params and clip."""
    plan = out.plan
    inference = coef_inference(out.est, out.design.columns, out.keep, request.method,
                               request.options, out.selection is not None)
    return dict(spec=fit_spec(out.design), method=request.method, eps=request.eps,
                delta=request.delta, inference=inference,
                **result_fields(design=out.design, selection=out.selection, k=request.k,
                                est=out.est, ledger=plan.ledger, selector=out.selector,
                                n_noisy=plan.n_noisy, seeded=request.seeded, split=plan.split,
                                notes=out.notes,
                                private=out.private and not request.paper_accounting,
                                accounting=request.accounting
                                if request.method == "tukey" else None))


def selection_result(request: FitRequest, out: Outcome) -> SelectionResult:
    """The result of ``select``."""
    design, sel = out.design, out.selection
    return SelectionResult(selected=selected_terms(design, out.candidates, sel),
                           method=out.selector, k=request.k,
                           candidates=len(candidate_terms(design, out.candidates)[1]),
                           eps=request.eps, charges=out.plan.ledger.charges,
                           formula=design.formula, label=design.label, ordered=sel.ordered,
                           n_noisy=out.plan.n_noisy, seeded=request.seeded,
                           private=out.private, notes=tuple(out.notes))
