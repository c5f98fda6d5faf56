"""The selection stage on a dask frame.

* **SubLasso** (the ``select="auto"`` choice whenever the released row count is large) is
  distributed exactly: random group labels on the workers (one client seed; each row's
  label a function of it and the row's global number, :mod:`dpstats.dask.numbering`),
  per-group sufficient statistics summed on the workers, each group's Lasso support from
  them (:mod:`dpstats.dask.pseudo`, on a worker), and only the vote counts come back,
  released by the same one-shot Gumbel top-k as in memory.
* **DPKendall** and **DP-SIS** run in memory on a uniform Bernoulli subsample: every row is
  kept independently with probability ``q = min(1, SAMPLE_ROWS / n_hat)``, ``n_hat`` the
  released row count (so ``q`` is public), and the selector runs unchanged on the sample with
  the full selection budget. Privacy: for every realisation of the (data-independent)
  sampling, adding or removing one row of the data adds or removes at most one row of the
  sample, so the selector's own (eps, delta) guarantee holds for the data (amplification by
  sampling, about ``q (e^eps - 1)``, is not claimed). Accuracy: that of the selector on about
  ``q n`` rows; below ``SAMPLE_ROWS`` released rows ``q = 1`` and it is the in-memory
  selector. These selectors need the released row count; an explicit ``select="kendall"`` on
  dask therefore also spends the private-n share, as ``select="auto"`` does.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import peel_topk
from ..pipeline.select import (
    auto_selector,
    candidate_factor_terms,
    candidate_terms,
    run_selection,
)
from ..selection import Selection
from ..selection.sublasso import n_groups
from .engine import Engine

__all__ = ["selection_stage", "sample_rate", "SAMPLE_ROWS", "SAMPLED"]

#: Rows (expected, from the released count) the sampled selectors run on.
SAMPLE_ROWS = 200_000
#: Selectors that run on a Bernoulli subsample.
SAMPLED = ("kendall", "sis")


def sample_rate(n_noisy: float) -> float:
    """The public sampling rate ``min(1, SAMPLE_ROWS / n_hat)``.

    >>> sample_rate(1e5), sample_rate(4e6)
    (1.0, 0.05)
    """
    return min(1.0, SAMPLE_ROWS / max(float(n_noisy), 1.0))


def selection_stage(request, design, candidates: list[int], selector, plan, ddf, part, stats,
                    notes: list[str]):
    """As :func:`dpstats.pipeline.select.selection_stage`, with the data on the workers."""
    p = len(design.columns)
    if selector == "auto":
        selector = auto_selector(plan.n_noisy, len(candidates), request.k, plan.eps_sel)
    if not selector:
        return selector, None, list(range(p))
    engine = Engine(ddf, part, stats, candidates)
    names = [design.columns[i] for i in candidates]
    if selector == "sublasso":
        sel = _sublasso(engine, len(candidates), request.k, plan.eps_sel, request.rng,
                        plan.ledger, plan.n_noisy, request.groups)
    else:
        q = sample_rate(plan.n_noisy)
        X, y = engine.sample(q, request.rng)
        term_of, _ = candidate_terms(design, candidates)
        sel = run_selection(selector, X, y, list(range(len(candidates))), k=request.k,
                            eps=plan.eps_sel, rng=request.rng, ledger=plan.ledger,
                            n_noisy=plan.n_noisy, groups=request.groups,
                            bounds=request.bounds, names=names, term_of=term_of,
                            factor_terms=candidate_factor_terms(design, candidates))
        if q < 1.0:
            notes.append(f"The {selector} selection ran on a uniform subsample (each row kept "
                         f"with probability {q:.3g}, from the released row count).")
    # terms as in memory (candidate_terms); SubLasso on dask votes per column, so a factor's
    # dummies are voted for one by one there (the selected terms are those of the columns)
    term_of = candidate_terms(design, candidates)[0]
    terms = sel.terms if selector != "sublasso" and sel.terms else tuple(
        dict.fromkeys(term_of[i] for i in sel.indices))
    selection = Selection(indices=tuple(candidates[i] for i in sel.indices), method=sel.method,
                          eps=sel.eps, ordered=sel.ordered, info=sel.info, terms=terms)
    keep = sorted(set(range(p)) - set(candidates) | set(selection.indices))
    return selector, selection, keep


def _sublasso(engine: Engine, d: int, k: int, eps: float, rng, ledger, n_noisy,
              groups) -> Selection:
    """:func:`dpstats.selection.sublasso.select` with the votes counted on the workers: the
    same number of groups (from the released row count), the same vote release (one-shot
    Gumbel top-k, l_inf sensitivity 1: one row changes one group's vote), charged alike."""
    m = n_groups(groups, n_noisy, d + 1)
    votes = np.asarray(engine.lasso_votes(m, k, rng), dtype=np.float64)
    idx = peel_topk(votes, k, 1.0, eps, rng, ledger, stage="selection",
                    what=f"SubLasso votes of {m} groups")
    return Selection(indices=tuple(int(i) for i in idx), method="sublasso", eps=eps,
                     ordered=True, info={"groups": m})
