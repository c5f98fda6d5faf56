"""The budget plan of a fit: which stages run, the eps of each, the ledger, the private row count.

Stages run in a fixed order (private n, selection, regression) and draw from the fit's RNG in
that order. A stage that does not run gets eps 0 and its share goes to the last stage that
runs (the regression; the selection in :func:`dpstats.select`), which gets what the earlier
stages left. The row count is released by :func:`dpstats.mechanisms.private_count`, which
draws the noise and charges the ledger; this module adds no noise itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..mechanisms import private_count
from ..mechanisms.accountant import Ledger
from .select import needs_row_count

__all__ = ["DEFAULT_SPLIT", "GLM_DEFAULT_SPLIT", "N_SHARE", "SELECT_SHARES", "BudgetPlan",
           "plan_budget", "needs_private_n"]

#: Default budget shares of dp_lm (003 section 4): private n, feature selection, regression.
DEFAULT_SPLIT = {"n": 0.05, "selection": 0.05, "regression": 0.90}
#: Default budget shares of dp_glm: private n, feature selection, regression. Selection gets
#: 15% instead of dp_lm's 5%: on a 0/1 label the selectors' scores are weaker, and at 5% they
#: often pick rare indicator columns, which cost accuracy for every method and make the Tukey
#: PTR test fail (a column that is all zero in a group gives a spike of identical model
#: coordinates). Measured on adult and default-credit (10 splits, eps 0.5 to 5): 15% was
#: better than or within noise of 5%, 10% and 25% for fw, dpgd and tukey; e.g. tukey on adult
#: at eps = 1 went from 4/10 PTR failures to none (benchmarks/logistic_accuracy.py).
GLM_DEFAULT_SPLIT = {"n": 0.05, "selection": 0.15, "regression": 0.80}
#: Share of eps that :func:`dpstats.select` spends on a private row count when the selector
#: needs one; the selection gets the rest.
N_SHARE = 0.10
#: The shares of :func:`dpstats.select` (no regression; the selection is the last stage).
SELECT_SHARES = {"n": N_SHARE, "selection": 1.0 - N_SHARE, "regression": 0.0}


@dataclass(frozen=True)
class BudgetPlan:
    """The eps of each stage (0 for a stage that does not run), the fit's ledger and the
    released row count (None when no stage needs it)."""

    ledger: Ledger
    eps_n: float
    eps_sel: float
    eps_reg: float
    n_noisy: float | None

    @property
    def split(self) -> dict[str, float]:
        """The eps of each stage, as reported in a result's ``split``."""
        return {"n": self.eps_n, "selection": self.eps_sel, "regression": self.eps_reg}


def needs_private_n(method: str | None, m: object, selector: str | None, groups) -> bool:
    """Whether a stage needs the released row count: the Tukey mechanism choosing its number
    of models (``m="auto"``), DP-GD (its step averages over it), or the selector.

    >>> needs_private_n("tukey", "auto", None, "auto"), needs_private_n("fw", 5, None, "auto")
    (True, False)
    """
    tukey_m = method == "tukey" and m == "auto"
    return tukey_m or method == "dpgd" or needs_row_count(selector, groups)


def plan_budget(request, n: int, selector: str | None) -> BudgetPlan:
    """Open the fit's ledger (on ``request.budget`` when given), share out ``request.eps`` and
    release the row count ``n`` when a stage needs it.

    ``selector`` is the selector that will run (None for none, ``"auto"`` while undecided).
    """
    eps, delta, shares = request.eps, request.delta, request.shares
    budget = request.budget
    ledger = budget.ledger_for(eps, delta) if budget is not None else Ledger(eps, delta)
    use_n = needs_private_n(request.method, request.m, selector, request.groups)
    eps_n = eps * shares["n"] if use_n else 0.0
    if request.kind == "select":                  # selection is the last stage: the rest
        eps_sel, eps_reg = eps - eps_n, 0.0
    else:                                         # unused shares go to the regression
        eps_sel = eps * shares["selection"] if selector else 0.0
        eps_reg = eps - eps_n - eps_sel
    n_noisy = private_count(n, eps_n, request.rng, ledger, stage="private n") if use_n else None
    return BudgetPlan(ledger=ledger, eps_n=eps_n, eps_sel=eps_sel, eps_reg=eps_reg,
                      n_noisy=n_noisy)
