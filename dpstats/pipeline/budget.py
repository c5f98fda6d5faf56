"""The budget plan of a fit: which stages run, the eps of each, the ledger, the private row count.

Stages run in a fixed order (category levels, private n, selection, regression) and draw from
the fit's RNG in that order. A stage that does not run gets eps 0 and its share goes to the
last stage that runs (the regression; the selection in :func:`dpstats.select`), which gets what
the earlier stages left. The levels stage (:mod:`dpstats.pipeline.levels`) runs only when the
formula reads category levels that were not declared; it takes its share of eps *and* of delta
(all of delta in :func:`dpstats.select`, where nothing else uses delta), and the regression
gets the rest of delta. Without it the arithmetic is exactly that of a fit without the stage.
The row count is released by :func:`dpstats.mechanisms.private_count`, which draws the noise and
charges the ledger; this module adds no noise itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..mechanisms import private_count
from ..mechanisms.accountant import Ledger
from .select import needs_row_count

__all__ = ["DEFAULT_SPLIT", "GLM_DEFAULT_SPLIT", "LEVELS_SHARE", "N_SHARE", "SELECT_SHARES",
           "BudgetPlan", "plan_budget", "replan", "needs_private_n", "open_ledger"]

#: Default share of eps and of delta for the private discovery of undeclared category levels
#: (:func:`dpstats.mechanisms.levels.private_levels`); only spent when the formula has such
#: levels, otherwise it goes to the regression. See docs/design-notes.md, note 21.
LEVELS_SHARE = 0.05
#: Default budget shares of dp_lm (003 section 4): category levels (only when some must be
#: discovered), private n, feature selection, regression (the rest: 90% without the levels
#: stage).
DEFAULT_SPLIT = {"levels": LEVELS_SHARE, "n": 0.05, "selection": 0.05, "regression": 0.85}
#: Default budget shares of dp_glm: private n, feature selection, regression. Selection gets
#: 15% instead of dp_lm's 5%: on a 0/1 label the selectors' scores are weaker, and at 5% they
#: often pick rare indicator columns, which cost accuracy for every method and make the Tukey
#: PTR test fail (a column that is all zero in a group gives a spike of identical model
#: coordinates). Measured on adult and default-credit (10 splits, eps 0.5 to 5): 15% was
#: better than or within noise of 5%, 10% and 25% for fw, dpgd and tukey; e.g. tukey on adult
#: at eps = 1 went from 4/10 PTR failures to none (benchmarks/logistic_accuracy.py). Re-derived
#: on synthetic data only for method="auto" (benchmarks/glm_auto_rule.py --part split, k = 5 of
#: 12 features): 15% had the largest median gain over the majority class of the shares 5%,
#: 10%, 15% and 25% (0.054 against 0.041, 0.035, 0.049).
GLM_DEFAULT_SPLIT = {"levels": LEVELS_SHARE, "n": 0.05, "selection": 0.15, "regression": 0.75}
#: Share of eps that :func:`dpstats.select` spends on a private row count when the selector
#: needs one; the selection gets the rest.
N_SHARE = 0.10
#: The shares of :func:`dpstats.select` (no regression; the selection is the last stage).
SELECT_SHARES = {"levels": LEVELS_SHARE, "n": N_SHARE,
                 "selection": 1.0 - N_SHARE - LEVELS_SHARE, "regression": 0.0}


@dataclass(frozen=True)
class BudgetPlan:
    """The eps of each stage (0 for a stage that does not run), the fit's ledger, the
    released row count (None when no stage needs it) and the delta left for the regression."""

    ledger: Ledger
    eps_n: float
    eps_sel: float
    eps_reg: float
    n_noisy: float | None
    eps_levels: float = 0.0
    delta_reg: float = 0.0

    @property
    def split(self) -> dict[str, float]:
        """The eps of each stage, as reported in a result's ``split`` (``"levels"`` only when
        that stage ran)."""
        out = {"levels": self.eps_levels} if self.eps_levels else {}
        return {**out, "n": self.eps_n, "selection": self.eps_sel, "regression": self.eps_reg}


def open_ledger(request) -> Ledger:
    """The fit's ledger, on ``request.budget`` when given (which checks that it can pay)."""
    budget = request.budget
    if budget is not None:
        return budget.ledger_for(request.eps, request.delta)
    return Ledger(request.eps, request.delta)


def levels_budget(request) -> tuple[float, float]:
    """``(eps, delta)`` of the levels stage: the share ``shares["levels"]`` of eps and of
    delta (:func:`dpstats.select`: all of delta, which nothing else uses).

    >>> from types import SimpleNamespace as NS
    >>> levels_budget(NS(kind="lm", eps=2.0, delta=1e-5, shares={"levels": 0.25}))
    (0.5, 2.5e-06)
    >>> levels_budget(NS(kind="select", eps=2.0, delta=1e-6, shares={"levels": 0.25}))
    (0.5, 1e-06)
    """
    share = request.shares["levels"]
    delta = request.delta if request.kind == "select" else request.delta * share
    return request.eps * share, delta


def needs_private_n(method: str | None, m: object, selector: str | None, groups) -> bool:
    """Whether a stage needs the released row count: the Tukey mechanism choosing its number
    of models (``m="auto"``), DP-GD (its step averages over it), dp_glm's ``method="auto"``
    (it decides from it), or the selector.

    >>> needs_private_n("tukey", "auto", None, "auto"), needs_private_n("fw", 5, None, "auto")
    (True, False)
    """
    tukey_m = method in ("tukey", "auto") and m == "auto"
    return tukey_m or method in ("dpgd", "auto") or needs_row_count(selector, groups)


def plan_budget(request, n: int, selector: str | None, ledger: Ledger | None = None,
                levels: tuple[float, float] = (0.0, 0.0), *, force_n: bool = False) -> BudgetPlan:
    """Open the fit's ledger (on ``request.budget`` when given) unless the levels stage already
    did (``ledger``, with that stage's ``levels = (eps, delta)``), share out ``request.eps``
    and release the row count ``n`` when a stage needs it.

    ``selector`` is the selector that will run (None for none, ``"auto"`` while undecided);
    ``force_n`` releases the row count even when no stage named so far needs it (``dp_lm``'s
    automatic method and number of terms read it: :mod:`dpstats.pipeline.auto`).
    """
    eps, shares = request.eps, request.shares
    ledger = open_ledger(request) if ledger is None else ledger
    eps_lv, delta_lv = levels
    use_n = force_n or needs_private_n(request.method, request.m, selector, request.groups)
    eps_n = eps * shares["n"] if use_n else 0.0
    if request.kind == "select":                  # selection is the last stage: the rest
        eps_sel, eps_reg = eps - eps_lv - eps_n, 0.0
    else:                                         # unused shares go to the regression
        eps_sel = eps * shares["selection"] if selector else 0.0
        eps_reg = eps - eps_lv - eps_n - eps_sel
    delta_reg = request.delta - delta_lv if delta_lv else request.delta
    n_noisy = private_count(n, eps_n, request.rng, ledger, stage="private n") if use_n else None
    return BudgetPlan(ledger=ledger, eps_n=eps_n, eps_sel=eps_sel, eps_reg=eps_reg,
                      n_noisy=n_noisy, eps_levels=eps_lv, delta_reg=delta_reg)


def replan(plan: BudgetPlan, request, selector: str | None, *, spend: bool = True) -> BudgetPlan:
    """The plan once the selector is decided after the row count (``dp_lm``'s automatic
    number of terms): the same ledger, count and levels share, with the selection's share
    given to the regression when no selector runs (the arithmetic of :func:`plan_budget`).
    ``spend=False`` (a fit withheld after the count) leaves the later stages at 0."""
    eps, shares = request.eps, request.shares
    eps_sel = eps * shares["selection"] if selector and spend else 0.0
    eps_reg = eps - plan.eps_levels - plan.eps_n - eps_sel if spend else 0.0
    return BudgetPlan(ledger=plan.ledger, eps_n=plan.eps_n, eps_sel=eps_sel, eps_reg=eps_reg,
                      n_noisy=plan.n_noisy, eps_levels=plan.eps_levels,
                      delta_reg=plan.delta_reg)
