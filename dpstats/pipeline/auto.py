"""``method="auto"`` and the automatic number of terms of ``dp_lm``: one decision after the
private row count, from public quantities and released values only.

Inputs: the released row count ``n_hat``, the design's number of columns and candidate terms
(formula and declared schema), eps and delta with the budget shares, and whether the formula
asks for selection (``.`` in it, or an explicit ``select=``). Nothing else is read, so two data
sets with the same released count and schema get the same method and k.

The rule was read from data-independent simulations: ``benchmarks/auto_rule.py`` (266
problems, n 1e3..1e6, p 1..40, eps 0.1..10, Gaussian, log-normal and dummy covariates,
Gaussian errors; the PTR and bounds feasibility counts) and ``benchmarks/auto_rule_real.py``
(real-data-like designs: skewed, heavy-tailed, collinear, 0/1 and count columns, factors, a few
strong and many weak terms, Gaussian, t3, skewed and heteroscedastic errors, R^2 0.05..0.9;
the number of terms; design note 37) and ``benchmarks/auto_rule_misspec.py`` (misspecified
conditional means; the Tukey/BAS boundary):

* **Tukey where it is both PTR-safe and more accurate than BAS**: ``n_hat`` at least
  :func:`~dpstats.pipeline.feasibility.tukey_preferred_count` (12 x the count at which its
  PTR test passes with high probability). Just above the PTR count Tukey lost to BAS by up
  to 0.2 R^2 on average (collinear columns, heavy-tailed and heteroscedastic errors). With a
  misspecified mean (``benchmarks/auto_rule_misspec.py``: a nonlinear term in a skewed
  column, a censored response, a rare 0/1 column; design note 39) the median of small-group
  fits is biased, less so as the groups grow (:mod:`dpstats.estimators.tukey.choose_m`: up to
  30 rows per model per column); with those groups Tukey still lost to BAS below 8 x the PTR
  count, and "Tukey from 12 x" had the smallest mean loss over misspecified and linear
  problems together. Factors are treated like numeric columns (since Tukey's identified
  votes, design note 25; :data:`FACTORS_TO_BAS` restores the older rule that sent every
  design with categorical terms to BAS).
* **Otherwise Boosted AdaSSP** when its private bounds are found with high probability
  (:func:`~dpstats.pipeline.feasibility.bounded_count`); AdaSSP never beat BAS on average.
  Where only Tukey's PTR count is reached (tiny p at a large eps), Tukey.
* **Otherwise no method can fit**: the fit is withheld right after the row count
  (:data:`dpstats.withheld.Withheld.TOO_FEW_ROWS`; ``method="auto"`` only: a method the user
  names runs, and its own mechanisms withhold, as before).

Terms: with ``select="auto"`` and a ``.`` in the formula, no selection when the rows support
every column (:func:`~dpstats.pipeline.feasibility.support_count`: Tukey preferred, or
``n_hat * eps_reg / p >= BAS_SUPPORT = 100``); otherwise ``k`` is the largest number of terms
whose model gets ``BAS_TERM_SUPPORT = 1000`` released rows x eps per column
(:func:`~dpstats.pipeline.feasibility.term_count`), with the selection's share taken out: a
few strong terms fitted well beat many fitted badly. An explicit ``k`` wins; an explicit
formula without ``.`` is fitted as written unless a selector is named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..formula.parse import _expand_dot, _split_formula
from .feasibility import (
    BAS_TERM_SUPPORT,
    COUNT_ETA,
    TUKEY_PREFERRED,
    bounded_count,
    count_needed,
    supports,
    tukey_count,
    tukey_reached,
)

__all__ = ["AutoChoice", "decide", "choose_method", "choose_k", "ptr_pass_probability",
           "formula_selects", "AUTO_METHODS", "PASS_SLOPE", "PASS_CENTRE", "FACTORS_TO_BAS"]

#: The methods ``method="auto"`` chooses from, in order of preference where feasible.
AUTO_METHODS = ("tukey", "bas")
#: Whether a design with dummy columns of categorical terms always goes to BAS. False since
#: Tukey's identified votes (design note 25): in benchmarks/auto_rule_real.py, from the
#: preferred count on, Tukey's loss was at most BAS's + 0.005 on 13 of 13 problems with a
#: factor (mean -0.005), as without one (45 problems, mean -0.006).
FACTORS_TO_BAS = False
#: Predicted PTR pass probability: logistic in ``log(n_hat / tukey_count)`` with this centre
#: and slope (fitted to the pass rates of benchmarks/auto_rule.py).
PASS_CENTRE = math.log(0.78)
PASS_SLOPE = 7.0


@dataclass(frozen=True)
class AutoChoice:
    """What the decision after the private row count gave.

    ``method`` is the method to run (None: no method can fit, the fit is withheld); ``k`` the
    number of terms to select (None: no selection); ``p`` the columns fitted; ``eps_reg`` the
    regression's eps; ``reason`` the public sentence for the summary (None when the user fixed
    the method); ``rows_needed`` the rows of data the smallest model needs when ``method`` is
    None.
    """

    method: str | None
    k: int | None
    p: int
    eps_reg: float
    reason: str | None = None
    rows_needed: int | None = None


def formula_selects(formula: str) -> bool:
    """Whether ``select="auto"`` may select terms: the formula's right-hand side uses ``.``
    (all other columns). An explicit list of terms is fitted as written.

    >>> formula_selects("y ~ ."), formula_selects("y ~ a + np.log(b)"), formula_selects("y ~ . - a")
    (True, False, True)
    """
    _, rhs = _split_formula(formula)
    return _expand_dot(rhs, ["_"]) != rhs


def ptr_pass_probability(n_hat: float, p: int, eps_reg: float, delta: float) -> float:
    """Predicted probability that the Tukey PTR test passes (public: released count, p, eps).

    >>> ptr_pass_probability(1e6, 6, 1.0, 1e-5) > 0.99
    True
    >>> ptr_pass_probability(100, 6, 1.0, 1e-5) < 1e-9
    True
    """
    if not n_hat > 0 or not tukey_reached(4.0 * n_hat, p, eps_reg, delta):
        return 0.0      # below a quarter of the PTR count: < 0.001 (and no costly count)
    z = PASS_SLOPE * (math.log(n_hat / tukey_count(p, eps_reg, delta)) - PASS_CENTRE)
    return 0.0 if z < -40 else 1.0 / (1.0 + math.exp(-min(z, 40.0)))


def choose_method(n_hat: float, p: int, eps_reg: float, delta: float,
                  dummies: bool = False) -> str | None:
    """Tukey from :func:`~dpstats.pipeline.feasibility.tukey_preferred_count` (not with
    ``dummies``: columns of categorical terms), else BAS from its
    :func:`~dpstats.pipeline.feasibility.bounded_count`, else Tukey from its PTR count, else
    None (no method can fit).

    >>> choose_method(200_000, 6, 1.0, 1e-5), choose_method(3_000, 6, 1.0, 1e-5)
    ('tukey', 'bas')
    >>> choose_method(200_000, 6, 1.0, 1e-5, dummies=True)
    'bas'
    >>> choose_method(20, 6, 1.0, 1e-5) is None
    True
    """
    if not dummies and tukey_reached(n_hat, p, eps_reg, delta, TUKEY_PREFERRED):
        return "tukey"
    if n_hat >= bounded_count(p, eps_reg, delta):
        return "bas"
    if not dummies and tukey_reached(n_hat, p, eps_reg, delta):
        return "tukey"
    return None


def choose_k(n_hat: float, n_candidates: int, intercept: int, eps_reg: float, delta: float,
             method: str = "auto") -> int:
    """Largest number of terms (1..n_candidates) whose selected model ``method`` fits well at
    ``eps_reg`` with the released count (:func:`~dpstats.pipeline.feasibility.term_count`; 1
    when none does).

    >>> choose_k(20_000, 30, 1, 1.0, 1e-5, "tukey") < choose_k(200_000, 30, 1, 1.0, 1e-5, "tukey")
    True
    """
    best = 1
    for k in range(1, n_candidates + 1):
        if supports(n_hat, k + intercept, eps_reg, delta, method, BAS_TERM_SUPPORT):
            best = k
        else:
            break
    return best


def decide(*, n_hat: float, p_full: int, n_candidates: int, intercept: int, eps_all: float,
           eps_sel: float, eps_n: float, delta: float, method: str, selection: str | None,
           k: int | None, dummies: bool = False) -> AutoChoice:
    """Method and number of terms of a ``dp_lm`` fit, from the released count ``n_hat`` and
    public quantities (``eps_all``: the regression's eps without selection; ``eps_sel``: the
    selection's share; ``selection``: None (fitted as written), ``"auto"`` (``.`` with
    ``select="auto"``) or a selector's name; ``k``: the user's, or None; ``dummies``: the
    design has columns of categorical terms).

    >>> c = decide(n_hat=500_000, p_full=11, n_candidates=10, intercept=1, eps_all=0.95,
    ...            eps_sel=0.05, eps_n=0.05, delta=1e-5, method="auto", selection="auto", k=None)
    >>> c.method, c.k, c.p
    ('tukey', None, 11)
    """
    dummies = dummies and FACTORS_TO_BAS
    kind = method if method != "auto" else ("bas" if dummies else "auto")
    chosen_k = k
    if selection is not None and k is None:
        if selection == "auto" and supports(n_hat, p_full, eps_all, delta, kind):
            chosen_k = None
        else:
            chosen_k = choose_k(n_hat, n_candidates, intercept, eps_all - eps_sel, delta, kind)
    selects = selection is not None and chosen_k is not None and chosen_k < n_candidates
    p = chosen_k + intercept if selects else p_full
    eps_reg = eps_all - eps_sel if selects else eps_all
    smallest = 1 + intercept if selection is not None else p_full
    eps_small = eps_all - eps_sel if selection is not None and smallest < p_full else eps_all
    if method == "auto" and not supports(n_hat, smallest, eps_small, delta, "auto", 0.0) \
            and not tukey_reached(n_hat, smallest, eps_small, delta):
        need = count_needed(smallest, eps_small, delta, "auto")
        rows = max(1, math.ceil(need + math.log(1.0 / (2.0 * COUNT_ETA)) / eps_n))
        return AutoChoice(None, None, smallest, eps_small, _infeasible_reason(
            smallest, eps_small, rows), rows_needed=rows)
    if method != "auto":
        return AutoChoice(method, chosen_k if selects else None, p, eps_reg)
    chosen = choose_method(n_hat, p, eps_reg, delta, dummies) or "bas"
    return AutoChoice(chosen, chosen_k if selects else None, p, eps_reg,
                      _reason(chosen, n_hat, p, eps_reg, delta, dummies))


def _fmt_count(n_hat: float) -> str:
    if not n_hat >= 1:
        return "< 1"
    digits = max(0, int(math.floor(math.log10(n_hat))) - 1)
    return f"{round(n_hat, -digits):,.0f}"


def _reason(method: str, n_hat: float, p: int, eps_reg: float, delta: float,
            dummies: bool = False) -> str:
    """The summary's explanation of an automatic choice (released and public values only)."""
    where = (f"with n_hat \u2248 {_fmt_count(n_hat)} and {p} column{'s' * (p != 1)} at "
             f"regression eps {eps_reg:.3g}")
    if dummies:
        return (where + "; the design has dummy columns of categorical terms, where BAS beat "
                "Tukey at every row count in simulation")
    prob = ptr_pass_probability(n_hat, p, eps_reg, delta)
    shown = (f"~{prob:.2f}" if 0.01 <= prob <= 0.99 else
             ("> 0.99" if prob > 0.99 else "< 0.01"))
    head = where + ", Tukey's PTR test "
    if method == "tukey":
        return head + f"passes with probability {shown}"
    if tukey_reached(n_hat, p, eps_reg, delta):
        return (head + f"would pass with probability {shown}, but below "
                f"{TUKEY_PREFERRED:g} x its rows BAS was more accurate in simulation")
    return head + f"would pass with probability {shown}"


def _infeasible_reason(p: int, eps_reg: float, rows: int) -> str:
    return (f"no method can fit {p} column{'s' * (p != 1)} at regression eps "
            f"{eps_reg:.3g}; about {rows:,} rows are needed")
