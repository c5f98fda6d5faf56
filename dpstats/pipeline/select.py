"""The selection stage of the pipelines: which selector runs, and running it on a design.

Shared by :func:`dpstats.dp_lm`, :func:`dpstats.dp_glm` and :func:`dpstats.select`.
Orchestration only: the selectors' mechanisms add the noise and charge the ledger.

The ``select="auto"`` rule reads public quantities (the formula, ``k``, the selection budget)
and the released row count ``n_hat`` only:

* at most ``k`` candidate terms (formula terms other than the intercept; a factor is one
  term, :func:`candidate_terms`): no selection, and the
  selection share of the budget goes to the regression;
* otherwise SubLasso when its votes can beat its noise, DPKendall when they cannot. SubLasso's
  ``m = n_hat / p`` groups each vote once; a feature every group picks has ``m`` votes, and the
  one-shot Gumbel top-k adds noise of scale ``2 k / eps_sel``. With
  ``m >= AUTO_SNR * 2 k / eps_sel`` (``AUTO_SNR = 4``) the votes dominate and SubLasso is the
  better selector; below that DPKendall, whose scores grow with ``n`` rather than ``n / p``, is.
  Measured on the ten regression files at (ln 3, 1e-5): every threshold in (2.75, 4.3) makes the
  same choices, and each choice is the better of the two selectors on 9 of the 9 files that need
  selection except pol, where the two tie (benchmarks/selection_utility.py).
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from ..formula.numeric import INTERCEPT
from ..selection import SELECTORS, Selection, run_selector
from ..selection.sublasso import GROUPS

__all__ = ["SELECT_CHOICES", "resolve_selector", "selection_mode", "auto_selector",
           "needs_row_count", "run_selection", "selection_stage", "candidate_columns",
           "candidate_terms", "candidate_factor_terms", "selected_terms", "check_groups",
           "check_bounds_arg", "check_bounds_for", "bounds_for_kept"]

#: Values accepted by ``select=``.
SELECT_CHOICES = ("auto", None, *SELECTORS)
#: ``select="auto"`` prefers SubLasso when the most votes a feature can get (the number of
#: groups) is at least this many noise scales ``2 k / eps``.
AUTO_SNR = 4.0


def candidate_columns(columns, has_intercept: bool) -> list[int]:
    """Indices of the design columns that may be selected (all but the intercept)."""
    return [i for i, c in enumerate(columns) if not (has_intercept and c == INTERCEPT)]


def candidate_terms(design, candidates: list[int]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """``(term_of, names)``: the term ``0 .. T-1`` of each candidate column and the names of
    those T candidate terms (public: from the design's formula terms,
    :attr:`~dpstats.formula.design.Design.terms`). A design without term information, or a
    candidate column outside every term, counts as one term per column (named by the column).

    >>> from types import SimpleNamespace as NS
    >>> d = NS(columns=["Intercept", "x", "g[T.b]", "g[T.c]"], terms=("x", "g"),
    ...        term_of=(-1, 0, 1, 1))
    >>> candidate_terms(d, [1, 2, 3])
    ((0, 1, 1), ('x', 'g'))
    """
    given = tuple(getattr(design, "term_of", ()) or ())
    keys = [("t", given[j]) if given and given[j] >= 0 else ("c", j) for j in candidates]
    number: dict = {}
    names: list[str] = []
    for key, j in zip(keys, candidates, strict=True):
        if key not in number:
            number[key] = len(names)
            names.append(design.terms[key[1]] if key[0] == "t" else design.columns[j])
    return tuple(number[key] for key in keys), tuple(names)


def candidate_factor_terms(design, candidates: list[int]) -> tuple[bool, ...]:
    """Per candidate term (:func:`candidate_terms`), whether it is a factor's main effect
    (public: :attr:`~dpstats.formula.design.Design.term_factor`; False without term data)."""
    given = tuple(getattr(design, "term_of", ()) or ())
    flags = tuple(getattr(design, "term_factor", ()) or ())
    out: dict = {}
    for j in candidates:
        key = ("t", given[j]) if given and given[j] >= 0 else ("c", j)
        if key not in out:
            out[key] = bool(flags and key[0] == "t" and flags[key[1]])
    return tuple(out.values())


def selected_terms(design, candidates: list[int], selection: Selection | None) -> list[str]:
    """Names of the selected terms, in the selection's order ([] when none ran)."""
    if selection is None:
        return []
    names = candidate_terms(design, candidates)[1]
    return [names[t] for t in selection.terms]


def resolve_selector(select, n_candidates: int, k: int) -> tuple[str | None, str | None]:
    """Selector to run (``"auto"`` still to be decided by :func:`auto_selector`) or None, and
    a note explaining a skipped selection (or None).

    >>> resolve_selector("auto", 3, 5)
    (None, None)
    >>> resolve_selector("auto", 8, 5)
    ('auto', None)
    >>> resolve_selector("sublasso", 4, 5)[0] is None
    True
    """
    if select is None:
        return None, None
    if n_candidates <= k:
        if select == "auto":
            return None, None
        return None, (f"select={select!r} skipped: the formula has {n_candidates} candidate "
                      f"terms, not more than k={k}; its budget share went to the regression.")
    return select, None


def selection_mode(select, selects_all: bool, k: int | None) -> str | None:
    """Whether and how ``dp_lm`` selects before the private row count is known: None (the
    formula is fitted as written), ``"auto"`` or the named selector.

    ``select="auto"`` selects only when the formula uses ``.`` (``selects_all``, read from the
    formula text by :func:`dpstats.pipeline.auto.formula_selects`) or ``k`` is given; an
    explicit formula is fitted as written. How many terms (``k=None``) is decided after the
    row count (:func:`dpstats.pipeline.auto.decide`).

    >>> selection_mode("auto", False, None), selection_mode("auto", True, None)
    (None, 'auto')
    >>> selection_mode("kendall", False, None), selection_mode("auto", False, 3)
    ('kendall', 'auto')
    """
    if select is None:
        return None
    if select == "auto" and not selects_all and k is None:
        return None
    return select


def auto_selector(n_noisy: float, n_candidates: int, k: int, eps_sel: float) -> str:
    """The ``select="auto"`` choice from the released row count and public quantities.

    >>> auto_selector(48_000.0, 9, 5, 0.055), auto_selector(12_000.0, 40, 5, 0.055)
    ('sublasso', 'kendall')
    """
    votes = n_noisy / (n_candidates + 1)
    return "sublasso" if votes >= AUTO_SNR * 2.0 * k / eps_sel else "kendall"


def needs_row_count(selector: str | None, groups) -> bool:
    """Whether the selector needs a released row count (SubLasso sizes its groups with it, and
    the ``"auto"`` rule reads it)."""
    return selector == "auto" or (selector == "sublasso" and isinstance(groups, str))


def _columns(X: np.ndarray, idx: list[int]) -> np.ndarray:
    """``X[:, idx]``, as a view (no copy of the data) when ``idx`` is a run of columns.

    >>> X = np.arange(6.0).reshape(2, 3)
    >>> np.shares_memory(_columns(X, [1, 2]), X), _columns(X, [0, 2]).tolist()
    (True, [[0.0, 2.0], [3.0, 5.0]])
    """
    if idx and list(idx) == list(range(idx[0], idx[0] + len(idx))):
        return X[:, idx[0]:idx[0] + len(idx)]
    return X[:, idx]


def run_selection(selector: str, X: np.ndarray, y: np.ndarray, candidates: list[int], *,
                  k: int, eps: float, rng, ledger, n_noisy=None, groups="auto",
                  bounds="auto", names=None, term_of=None, factor_terms=None,
                  stage: str = "selection") -> Selection:
    """Run ``selector`` on the candidate columns, picking ``k`` terms (``term_of``: the term
    of each candidate, default one per column); returned indices refer to design columns, and
    ``terms`` to the candidate terms."""
    cols = [names[i] for i in candidates] if names is not None else None
    sel = run_selector(selector, _columns(X, candidates), y, k=k, eps=eps, rng=rng, ledger=ledger,
                       n_noisy=n_noisy, groups=groups, bounds=bounds, columns=cols,
                       term_of=term_of, factor_terms=factor_terms, stage=stage)
    mapped = tuple(candidates[i] for i in sel.indices)
    return Selection(indices=mapped, method=sel.method, eps=sel.eps, ordered=sel.ordered,
                     info=sel.info, terms=sel.terms or sel.indices)


def selection_stage(request, design, candidates: list[int], selector: str | None, plan):
    """The selection stage of a fit: decide ``"auto"`` from the released row count, run the
    selector on the candidate terms (:func:`candidate_terms`: all dummies of a factor are one
    term) with the plan's selection budget, and return ``(selector, selection, keep)``: the
    selector that ran (None for none), its :class:`~dpstats.selection.Selection` (or None) and
    the design columns kept (every column of a selected term; the non-candidates, e.g. the
    intercept, are always kept)."""
    p = len(design.columns)
    if selector == "auto":
        selector = auto_selector(plan.n_noisy, len(candidates), request.k, plan.eps_sel)
    if not selector:
        return selector, None, list(range(p))
    selection = run_selection(selector, design.X, design.y, candidates, k=request.k,
                              eps=plan.eps_sel, rng=request.rng, ledger=plan.ledger,
                              n_noisy=plan.n_noisy, groups=request.groups,
                              bounds=request.bounds, names=design.columns,
                              term_of=candidate_terms(design, candidates)[0],
                              factor_terms=candidate_factor_terms(design, candidates))
    keep = sorted(set(range(p)) - set(candidates) | set(selection.indices))
    return selector, selection, keep


def check_groups(groups) -> object:
    """Validate ``groups=`` (SubLasso) without touching data, by SubLasso's declared option
    (:data:`dpstats.selection.sublasso.GROUPS`; its released row count is checked when the
    selector runs)."""
    return GROUPS.parse(groups)


def check_bounds_arg(bounds: object) -> object:
    """Type check of ``bounds=`` before anything else (the values are checked against the
    design's columns by :func:`check_bounds_for` before any budget is charged)."""
    if (isinstance(bounds, str) and bounds == "auto") or isinstance(bounds, tuple | list | dict):
        return bounds
    raise ValidationError(f"bounds must be 'auto' (private bounds), a pair (lo, hi) or a dict "
                          f"{{'x': ..., 'y': ...}} of public bounds; got {bounds!r}")


def check_bounds_for(bounds: object, columns, candidates: list[int]) -> None:
    """Validate public ``bounds`` against the candidate columns (charges nothing)."""
    if isinstance(bounds, str):
        return
    from ..mechanisms.bounds import parse_bounds
    parse_bounds(bounds, len(candidates), columns=[columns[i] for i in candidates])


def bounds_for_kept(bounds: object, columns, candidates: list[int], keep: list[int]):
    """Public ``bounds`` restricted to the kept non-intercept columns (a ``Bounds``), or
    ``"auto"`` unchanged. Validated already by :func:`check_bounds_for`."""
    if isinstance(bounds, str):
        return bounds
    from ..mechanisms.bounds import Bounds, parse_bounds
    b = parse_bounds(bounds, len(candidates), columns=[columns[i] for i in candidates])
    pos = {c: i for i, c in enumerate(candidates)}
    kept = [pos[j] for j in keep if j in pos]

    def pick(a):
        return None if a is None else np.asarray(a)[kept].copy()

    return Bounds(pick(b.x_lo), pick(b.x_hi), b.y_lo, b.y_hi, source=b.source)
