"""Shared last step of ``dp_lm`` and ``dp_glm``: released coefficients, notes and result fields.

Only released values and public metadata go into a result; this module is post-processing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..estimators.inference import NO_INFERENCE
from ..estimators.inference.gate import GATED
from ..results.inference import SELECTION_NOTE, CoefInference
from ..results.lm import SelectionReport
from ..withheld import withheld_note
from .grid_notes import warn_grid_edge
from .select import candidate_columns, selected_terms

__all__ = ["released_params", "result_fields", "coef_inference"]


def _clip_box(est, p: int, keep: list[int]):
    """The released clipping box over all design columns (None when the method has none)."""
    if est.clip is None:
        return None
    full_lo, full_hi = np.full(p, -np.inf), np.full(p, np.inf)
    full_lo[keep], full_hi[keep] = est.clip
    return full_lo, full_hi


def released_params(est, design, keep, notes: list, bounds, names, m_used, *,
                    stacklevel: int = 5):
    """Coefficients over all design columns (0 for unselected, NaN when nothing was released),
    the clipping box, and notes explaining a release that did not happen. ``stacklevel`` points
    a warning at the user's call (user -> dp_lm -> finish -> here -> the warning)."""
    p = len(design.columns)
    params = pd.Series(np.nan, index=design.columns, name="coef")
    clip = None
    if est.released:
        params[:] = 0.0
        params.iloc[keep] = est.params
        clip = _clip_box(est, p, keep)
        warn_grid_edge(notes, clip, design.columns, bounds, est.dropped, names,
                       stacklevel=stacklevel)
    else:
        note = withheld_note(est.withheld, m=m_used)
        if note:
            notes.append(note)
    return params, clip


def result_fields(*, design, selection, k, est, ledger, selector, n_noisy, seeded, split,
                  notes, private: bool = True, accounting: str | None = None) -> dict:
    """Keyword arguments shared by :class:`DPLMResult` and :class:`DPGLMResult`.

    ``selected`` lists the selected *terms* (a factor by its term name, e.g. ``cut``, never a
    single dummy), in selection order.

    ``private`` is False for a fit whose analysis does not hold (the Tukey mechanism with
    ``accounting="paper"``, or category levels read from the data); ``accounting`` is the Tukey
    fit's PTR accounting (public). The Tukey depth the mechanism sampled is not a field (it is
    not released)."""
    candidates = candidate_columns(design.columns, design.has_intercept)
    selected = selected_terms(design, candidates, selection)
    report = (SelectionReport(method=selection.method, k=k, selected=tuple(selected),
                              eps=selection.eps, ordered=selection.ordered)
              if selection else None)
    return dict(charges=ledger.charges, released=est.released, private=private,
                selector=selector, k=k if selector else None, selected=selected,
                selection=report, ptr=est.ptr, accounting=accounting,
                n_noisy=n_noisy, m=est.m, max_depth=est.max_depth,
                seeded=seeded, split=split, notes=tuple(notes),
                unreleased_reason=None if est.withheld is None else est.withheld.value,
                l1_radius=_l1_radius(est))


def _l1_radius(est) -> float | None:
    """The L1 radius of a Frank-Wolfe estimate (public: an argument or its default)."""
    details = getattr(est, "details", None) or {}
    radius = details.get("radius")
    return None if radius is None else float(radius)


#: Why AdaSSP with a positive released ridge has no standard errors (released value only).
RIDGE_REASON = ("AdaSSP's released adaptive ridge is positive (too few rows for this eps and "
                "number of columns): its bias depends on the unknown coefficients, so no "
                "interval would cover; more rows, a larger eps or fewer columns (or "
                "method='bas') give intervals")


def coef_inference(est, columns, keep: list[int], method: str, options, selected: bool):
    """The result's :class:`~dpstats.results.inference.CoefInference` from the estimate's
    (kept columns only; NaN elsewhere), or none with the public reason."""
    columns = list(columns)
    if not est.released:
        return CoefInference.none(columns, "nothing was released")
    inf = est.inference
    if inf is None:
        variant = (options or {}).get("variant")
        share = (options or {}).get("inference_share")
        reason = ("inference_share=0: no standard errors were asked for" if share == 0 else
                  NO_INFERENCE.get("paper" if variant == "paper" else method,
                                   f"method {method!r} releases no standard errors"))
        return CoefInference.none(columns, reason)
    stats = {"sigma": inf.sigma, "r2": inf.r2, "r2_adj": inf.r2_adj}  # given even without SEs
    if inf.method == "ridge":
        return replace(CoefInference.none(columns, RIDGE_REASON), **stats)
    if inf.method.startswith(GATED):          # the release gate (estimators/inference/gate)
        return replace(CoefInference.none(columns, inf.method[len(GATED):]), **stats)
    if inf.method == "none":
        return CoefInference.none(columns, "the released statistics do not support standard "
                                           "errors for this fit (e.g. no intercept column)")
    cov = np.full((len(columns), len(columns)), np.nan)
    cov[np.ix_(keep, keep)] = inf.cov
    bias = None
    if getattr(inf, "bias", None) is not None:         # intervals centred at params - bias
        bias = pd.Series(0.0, index=columns, name="bias")
        bias.iloc[keep] = inf.bias
    covers = inf.covers + (". " + SELECTION_NOTE if selected else "")
    return CoefInference(cov=pd.DataFrame(cov, index=columns, columns=columns), bias=bias,
                         method=inf.method, reference=inf.reference, share=inf.share,
                         covers=covers, df=inf.df, kept=tuple(columns[i] for i in keep),
                         cov_type=inf.cov_type, share_of=getattr(inf, "share_of", "eps"),
                         **stats)
