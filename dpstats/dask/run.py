"""``run_dask(request)``: the pipeline of :mod:`dpstats.pipeline.run` on a dask DataFrame.

The same stages in the same order, drawing from the fit's generator in the same order, with
the data's statistics computed on the workers:

1. the design of the frame's public schema (:func:`~dpstats.dask.design.schema`: nothing is
   computed) decides the columns, the refusals and whether a levels stage runs, exactly as the
   in-memory :func:`~dpstats.pipeline.levels.first_design` does on the data;
2. levels stage (only for undeclared levels): one pass of level counts, released by
   :func:`~dpstats.mechanisms.levels.private_levels`;
3. first pass: row count (released by :func:`~dpstats.mechanisms.private_count` when a stage
   needs it), log-scale histograms, centre counts and, when a linear Tukey fit may follow,
   its group sums at a public guess of the number of models (:mod:`dpstats.dask.speculate`);
4. selection (:mod:`dpstats.dask.select`): SubLasso one pass (per-group statistics), DPKendall
   and DP-SIS on a Bernoulli subsample (one pass);
5. the estimator's own code with a :class:`~dpstats.dask.methods.MethodsEngine`, method by
   method (each distributed form is stated in the module named):

   ========================  ==========================================================
   dp_lm ``adassp``          one pass: the mapped Gram matrix (:mod:`.engine`)
   dp_lm ``tukey``           none when ``m`` is the first pass's guess, else one pass:
                             per-group Gram matrices (:mod:`.engine`)
   dp_lm ``bas``             one pass for the Gram matrix, one per boosting round
   ``dpgd`` (lm and glm)     one pass per epoch (the clipped gradient sum)
   ``fw`` (lm and glm)       one pass per iteration (+1 per screening that zeroes a
                             feature) (:mod:`.fw`)
   dp_glm ``outpert``,       the ridge-logistic solver's evaluations, one pass each
   ``objpert``               (typically 6-10), + 1 for the threshold (:mod:`.glm`)
   dp_glm ``auto``           outpert or objpert (the released count decides), or withheld
                             after the first pass
   dp_glm ``tukey``          a shuffle of the labelled design by random group label, then
                             one pass of per-group logistic fits (:mod:`.shuffle`)
   ========================  ==========================================================

So the default dp_lm fit reads the data once above about ``3 p`` times the Tukey models' cap
rows (twice below, or with SubLasso selection three times), plus one pass for undeclared
levels.
What has no distributed form (``method="ols"``, BAS ``variant="paper"``,
``bounds_method="quantile"``) is refused before anything is charged, naming what works.
"""

from __future__ import annotations

import sys
import types
from dataclasses import replace

import numpy as np

from ..errors import ValidationError
from ..formula.design import build_design
from ..formula.discovery import LevelCoding, apply_coding, pooled_name
from ..mechanisms.levels import private_levels
from ..mechanisms.sampling import group_seed
from ..pipeline.budget import levels_budget, open_ledger, plan_budget
from ..pipeline.estimate import estimate_kept
from ..pipeline.glm_design import binary_rows
from ..pipeline.levels import first_design, levels_note
from ..pipeline.run import (
    Outcome,
    _apply,
    _check_columns,
    _decide,
    _design_notes,
    _glm_too_few_rows,
    _too_few_rows,
    _warn_paper,
)
from ..pipeline.select import candidate_columns, candidate_terms
from . import engine as _engine
from .design import PartitionDesign, schema, unknown_categoricals
from .fold import FusedPass, fold_frame, fused_stats
from .methods import MethodsEngine
from .numeric import numeric_plan
from .passes import FirstPass, LevelsPass, reduce_frame, seeded_labels
from .select import SAMPLED, selection_stage
from .speculate import Prefetch, guess_models

__all__ = ["run_dask", "METHODS"]

#: dp_lm methods with a distributed form (every private one).
METHODS = ("tukey", "adassp", "bas", "fw", "dpgd", "auto")
#: dp_glm methods with a distributed form (every one).
GLM_METHODS = ("auto", "outpert", "objpert", "fw", "dpgd", "tukey")


def _check_supported(request) -> None:
    """Refuse, before anything is charged, what has no distributed form."""
    what = {"lm": "dp_lm", "glm": "dp_glm", "select": "select"}[request.kind]
    if request.kind == "glm" and request.method not in GLM_METHODS:
        raise ValidationError(f"`data` is a dask DataFrame, but {what} runs on dask only with "
                              f"method in {list(GLM_METHODS)}; or compute the frame first: "
                              "data.compute()")
    if request.kind == "lm" and request.method not in METHODS:
        raise ValidationError(f"method={request.method!r} does not run on a dask DataFrame "
                              f"yet; use one of {list(METHODS)}, or compute the frame first")
    if request.options.get("variant", "scaled") != "scaled":
        raise ValidationError("BAS variant='paper' does not run on a dask DataFrame; use the "
                              "default variant='scaled'")
    if request.options.get("bounds_method", "hist") != "hist":
        raise ValidationError("bounds_method='quantile' does not run on a dask DataFrame; use "
                              "the default 'hist' (log-scale histograms)")


def run_dask(request) -> Outcome:
    """Carry out a validated request whose data is a dask DataFrame (see the module
    docstring); returns the same :class:`~dpstats.pipeline.run.Outcome` as in memory, whose
    design holds no rows."""
    if request.budget is not None:
        request.budget.check(request.eps, request.delta)
    _check_supported(request)
    ddf, meta = request.data, schema(request.data)
    local = replace(request, data=meta)
    first = first_design(local)
    design, levels = first.design, first.response_levels
    part = PartitionDesign(request.formula, request.kind, tuple(design.columns),
                           unknown_categoricals(ddf._meta))
    ledger, spent = None, (0.0, 0.0)
    if first.discover:
        ledger, spent = open_ledger(request), levels_budget(request)
        design, part = _discover(request, first, ddf, meta, part, ledger)
    part = replace(part, numeric=numeric_plan(request.formula, request.kind, meta, part.columns,
                                              part.text, part.codings))
    notes = _design_notes(local, design, levels)
    if first.discover:
        notes.insert(0, levels_note(request, first.discover))
    candidates = candidate_columns(design.columns, design.has_intercept)
    selector = _check_columns(request, design, candidates, notes)
    if request.paper_accounting:
        _warn_paper(notes)
    stats, prefetch = _first_pass(request, ddf, part, spent)
    # Keep this block in step with pipeline.run._run: the automatic method and number of
    # terms are decided from the released count right after plan_budget, as there.
    auto = request.kind == "lm" and (request.method == "auto"
                                     or (request.k is None and selector is not None))
    plan = plan_budget(request, stats["n"], "auto" if selector in SAMPLED else selector,
                       ledger, spent, force_n=auto)   # the sampled selectors need the released n
    choice = None
    if request.kind == "lm" and plan.n_noisy is not None:
        choice = _decide(request, design, candidates, selector, plan)
        if choice.method is None:
            return _too_few_rows(request, design, notes, levels, candidates, plan, choice,
                                 first.private)
        request, selector, plan = _apply(request, selector, plan, choice, notes,
                                         len(candidates),
                                         len(candidate_terms(design, candidates)[1]))
    if request.kind == "glm" and request.method == "auto":      # before selection spends
        early = _glm_too_few_rows(request, design, notes, levels, candidates, plan,
                                  first.private)
        if early is not None:
            return early
    selector, selection, keep = selection_stage(request, design, candidates, selector, plan,
                                                ddf, part, stats, notes)
    out = Outcome(design=design, notes=notes, levels=levels, candidates=candidates,
                  selector=selector, selection=selection, keep=keep, plan=plan,
                  private=first.private, request=request,
                  choice=None if choice is None else choice.reason)
    if request.kind == "select":
        return out
    engine = MethodsEngine(ddf, part, stats, keep, prefetch)
    with_engine = replace(request, options={**request.options, "engine": engine})
    est, m_used, names = estimate_kept(with_engine, design, candidates, keep, plan)
    return replace(out, est=est, m_used=m_used, names=names)


def _first_pass(request, ddf, part: PartitionDesign, levels) -> tuple[dict, Prefetch | None]:
    """The first pass's total and, when a linear Tukey fit may follow, the group sums of every
    design column at a public guess of its number of models, in the same read
    (:mod:`dpstats.dask.speculate`: the labels' seed is drawn here, before the count), with
    a subsample of rows for the Tukey intervals' windows (its seed drawn here too). Only the
    first pass's statistics come back: the group sums and the subsample stay on a worker
    (:class:`~dpstats.dask.fold.Held`), read there by the Tukey stage."""
    first = FirstPass(part, centre=request.method == "tukey" or (
        request.kind == "lm" and request.method == "auto"))
    m = guess_models(request, len(part.columns), levels)
    if m is None:
        return reduce_frame(ddf, first), None
    pre = Prefetch(seed=group_seed(request.rng), m=m, p=len(part.columns))
    sample_seed = group_seed(request.rng)          # the Tukey windows' rows (speculate.py)
    source = seeded_labels if _engine.LABELS is None else _engine.LABELS
    stats, pre.held = fold_frame(ddf, FusedPass(first, m, pre.seed, source, sample_seed),
                                 fused_stats, hold=True)    # the sums and rows stay there
    pre.whole = stats["sample"]["thr"] == 1.0
    stats["sample"].update(seed=sample_seed, held=pre.held)
    return stats, pre


def _discover(request, first, ddf, meta, part: PartitionDesign, ledger):
    """The levels stage on the workers: level counts in one pass, released on the client
    exactly as :func:`dpstats.pipeline.levels.discover_levels` releases them."""
    cols = first.discover
    eps, delta = levels_budget(request)
    hists = reduce_frame(ddf, LevelsPass(part, tuple(first.design.variables), cols))["levels"]
    released = private_levels(hists, eps, delta, request.rng, ledger, names=cols)
    codings = tuple(LevelCoding(c, r.levels, pooled_name(r.levels) if r.pooled else None)
                    for c, r in zip(cols, released, strict=True))
    design = build_design(request.formula, apply_coding(meta, codings), warn_levels=False)
    if request.kind == "glm":
        design = binary_rows(design)
    design = replace(design, recode=codings, X=np.empty((0, len(design.columns))))
    return design, replace(part, columns=tuple(design.columns), codings=codings)


class _CallableModule(types.ModuleType):
    """This module, callable as the package's :func:`dpstats.dask.run`: importing it replaces
    the package attribute ``run`` (the function the API imports) with the module, so an
    ``import dpstats.dask.run`` before the API loads would otherwise break every fit."""

    def __call__(self, request) -> Outcome:
        from ..formula.frames import is_dask_frame
        from ..pipeline.run import run as in_memory
        return run_dask(request) if is_dask_frame(request.data) else in_memory(request)


sys.modules[__name__].__class__ = _CallableModule
