"""Privacy accounting: charges, per-fit ledgers and shared budgets.

The ledger is the single source of truth for what a fit spent. Only the mechanisms in
:mod:`dpstats.mechanisms` call :meth:`Ledger.charge`; a summary prints the ledger it was given
and nothing else.

Composition is *basic* (sequential): a list of (eps_i, delta_i)-DP releases is
(sum eps_i, sum delta_i)-DP. :func:`advanced_composition` gives the tighter bound of
Dwork, Rothblum and Vadhan for k homogeneous releases when a method needs it.

Examples
--------
>>> b = Budget(eps=2.0, delta=1e-5)
>>> led = b.ledger_for(eps=1.0, delta=1e-6, label="fit 1")
>>> _ = led.charge("laplace", eps=0.5, stage="private n")
>>> b.spent
(0.5, 0.0)
>>> b.remaining
(1.5, 1e-05)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BudgetExceededError, PrivacyParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Charge", "Ledger", "Budget", "split_budget", "advanced_composition"]

#: Relative slack allowed when comparing sums of floating-point budget shares.
_TOL = 1e-9


@dataclass(frozen=True)
class Charge:
    """One noisy release and its privacy cost.

    Attributes
    ----------
    stage : str
        Pipeline stage, e.g. ``"private n"``, ``"selection"``, ``"regression"``.
    mechanism : str
        Name of the mechanism that made the release, e.g. ``"laplace"``.
    eps, delta : float
        Privacy cost of this release under add/remove-one-row neighbours.
    detail : str
        Public description (sensitivity, what was released).
    label : str
        Which fit the charge belongs to (useful in a shared :class:`Budget`).
    """

    stage: str
    mechanism: str
    eps: float
    delta: float
    detail: str = ""
    label: str = ""


class Ledger:
    """The charges of one fit, capped at the (eps, delta) the fit was given.

    Parameters
    ----------
    eps, delta : float
        Cap for this ledger. A charge that would exceed the cap raises
        :class:`BudgetExceededError` (this means a bug in dpstats, not user error: fits
        divide their budget before spending it).
    label : str
        Name stamped on every charge.
    parent : Budget, optional
        Shared budget that receives a copy of every charge as it happens.
    """

    def __init__(self, eps: float = math.inf, delta: float = 1.0, *, label: str = "",
                 parent: Budget | None = None) -> None:
        self.eps_cap = float(eps)
        self.delta_cap = float(delta)
        self.label = label
        self._parent = parent
        self._charges: list[Charge] = []
        self._stage = ""

    # -- recording -------------------------------------------------------------------------
    def set_stage(self, stage: str) -> None:
        """Set the stage name used by later charges that do not name one."""
        self._stage = stage

    def charge(self, mechanism: str, eps: float, delta: float = 0.0, *, stage: str | None = None,
               detail: str = "") -> Charge:
        """Record one release; called by mechanisms only.

        Raises
        ------
        BudgetExceededError
            If the charge does not fit under this ledger's cap or the parent budget.
        """
        eps, delta = float(eps), float(delta)
        if not (eps >= 0 and math.isfinite(eps)) or not (0 <= delta < 1):
            raise PrivacyParameterError(
                f"a mechanism tried to charge eps={eps!r}, delta={delta!r}; charges need "
                "0 <= eps < inf and 0 <= delta < 1")
        s_eps, s_delta = self.spent
        # written as "not (fits)" so that a NaN cap refuses every charge instead of none
        if not (s_eps + eps <= self.eps_cap * (1 + _TOL) + _TOL) or \
                not (s_delta + delta <= self.delta_cap * (1 + _TOL) + 1e-300):
            raise BudgetExceededError(
                f"charge of (eps={eps:.4g}, delta={delta:.3g}) for {mechanism} would exceed this "
                f"fit's budget (eps={self.eps_cap:.4g}, delta={self.delta_cap:.3g}); "
                f"already spent ({s_eps:.4g}, {s_delta:.3g})")
        c = Charge(stage or self._stage or "release", mechanism, eps, delta, detail, self.label)
        if self._parent is not None:
            self._parent._record(c)
        self._charges.append(c)
        return c

    # -- reading ---------------------------------------------------------------------------
    @property
    def charges(self) -> tuple[Charge, ...]:
        """All charges in the order they were made."""
        return tuple(self._charges)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) by basic composition."""
        return (math.fsum(c.eps for c in self._charges),
                math.fsum(c.delta for c in self._charges))

    def to_frame(self) -> pd.DataFrame:
        """The charges as a DataFrame with columns stage, mechanism, eps, delta, detail."""
        import pandas as pd
        cols = ["stage", "mechanism", "eps", "delta", "detail"]
        return pd.DataFrame([{k: getattr(c, k) for k in cols} for c in self._charges],
                            columns=cols)

    def __len__(self) -> int:
        return len(self._charges)

    def __repr__(self) -> str:
        e, d = self.spent
        return f"Ledger({len(self)} charges, spent eps={e:.4g}, delta={d:.3g})"


class Budget:
    """A privacy budget shared across several fits.

    Pass it to ``dp_lm(..., budget=b)``: the fit checks that its (eps, delta) fits in
    ``b.remaining`` *before* touching the data, and every release it makes is recorded here.

    Parameters
    ----------
    eps : float
        Total epsilon, > 0 and finite.
    delta : float
        Total delta, in [0, 1).

    Examples
    --------
    >>> b = Budget(1.0, 1e-5)
    >>> b.check(0.6, 5e-6)
    >>> b.remaining
    (1.0, 1e-05)
    """

    def __init__(self, eps: float, delta: float = 0.0) -> None:
        from ..validation import check_delta, check_eps
        self.eps = check_eps(eps)
        self.delta = check_delta(delta, allow_zero=True)
        self._charges: list[Charge] = []
        self._n_ledgers = 0

    def _record(self, charge: Charge) -> None:
        s_eps, s_delta = self.spent
        if not (s_eps + charge.eps <= self.eps * (1 + _TOL) + _TOL) or \
                not (s_delta + charge.delta <= self.delta * (1 + _TOL) + 1e-300):
            raise BudgetExceededError(
                f"the shared Budget cannot pay (eps={charge.eps:.4g}, delta={charge.delta:.3g}); "
                f"remaining is {self.remaining}")
        self._charges.append(charge)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) charged so far (basic composition)."""
        return (math.fsum(c.eps for c in self._charges),
                math.fsum(c.delta for c in self._charges))

    @property
    def remaining(self) -> tuple[float, float]:
        """What is left: (eps, delta)."""
        e, d = self.spent
        return (max(self.eps - e, 0.0), max(self.delta - d, 0.0))

    def check(self, eps: float, delta: float) -> None:
        """Raise :class:`BudgetExceededError` unless (eps, delta) fits in what remains.

        Raises :class:`PrivacyParameterError` when eps or delta is not a number >= 0.
        """
        for name, val in (("eps", eps), ("delta", delta)):
            if isinstance(val, bool) or not isinstance(val, numbers.Real) or val < 0:
                raise PrivacyParameterError(f"Budget.check needs {name} as a number >= 0; got "
                                            f"{val!r}")
        r_eps, r_delta = self.remaining
        eps_short = not (eps <= r_eps * (1 + _TOL) + _TOL)
        delta_short = not (delta <= r_delta * (1 + _TOL) + 1e-300)
        if eps_short or delta_short:
            raise BudgetExceededError(_shortfall_message(eps, delta, r_eps, r_delta,
                                                         eps_short, delta_short))

    def ledger_for(self, eps: float, delta: float, label: str = "") -> Ledger:
        """Check (eps, delta) fits, then return a fit ledger that reports to this budget."""
        self.check(eps, delta)
        self._n_ledgers += 1
        return Ledger(eps, delta, label=label or f"fit {self._n_ledgers}", parent=self)

    @property
    def ledger(self) -> pd.DataFrame:
        """All charges across fits, with a ``fit`` column."""
        import pandas as pd
        cols = ["label", "stage", "mechanism", "eps", "delta", "detail"]
        df = pd.DataFrame([{k: getattr(c, k) for k in cols} for c in self._charges],
                          columns=cols)
        return df.rename(columns={"label": "fit"})

    def __repr__(self) -> str:
        e, d = self.spent
        return (f"Budget(eps={self.eps:.4g}, delta={self.delta:.3g}; "
                f"spent eps={e:.4g}, delta={d:.3g})")


def _shortfall_message(eps: float, delta: float, r_eps: float, r_delta: float,
                       eps_short: bool, delta_short: bool) -> str:
    """Say which of eps and delta ran out, with the numbers and the fix."""
    parts = []
    if eps_short:
        parts.append(f"eps ran out (asked {eps:.4g}, {r_eps:.4g} left)")
    if delta_short:
        parts.append(f"delta ran out (asked {delta:.3g}, {r_delta:.3g} left)")
    fixes = []
    if eps_short:
        fixes.append(f"pass eps <= {r_eps:.4g}")
    if delta_short:
        fixes.append(f"pass delta <= {r_delta:.3g}" if r_delta > 0
                     else "pass delta=0 where the method allows it")
        fixes[-1] += (" (each fit asks for its own delta: give each fit its share of the "
                      "Budget's delta, e.g. delta=5e-6 for each of two fits of a 1e-5 Budget)")
    return (f"this fit asks for eps={eps:.4g}, delta={delta:.3g} but the Budget has only "
            f"eps={r_eps:.4g}, delta={r_delta:.3g} left: {' and '.join(parts)}; "
            f"{' and '.join(fixes)}, or start a new Budget (which means accepting a larger "
            "total privacy loss)")


def split_budget(eps: float, shares: Mapping[str, float]) -> dict[str, float]:
    """Divide ``eps`` among stages by ``shares`` (non-negative, summing to 1).

    Examples
    --------
    >>> split_budget(1.0, {"n": 0.05, "selection": 0.05, "regression": 0.9})
    {'n': 0.05, 'selection': 0.05, 'regression': 0.9}
    """
    vals = {k: float(v) for k, v in shares.items()}
    bad = {k: v for k, v in vals.items() if not (v >= 0 and math.isfinite(v))}
    if bad:
        raise PrivacyParameterError(f"split shares must be finite and >= 0; got {bad}")
    total = math.fsum(vals.values())
    if abs(total - 1.0) > 1e-6:
        raise PrivacyParameterError(
            f"split shares must sum to 1; they sum to {total:.6g}: {vals}")
    return {k: eps * v for k, v in vals.items()}


def advanced_composition(eps_each: float, delta_each: float, k: int,
                         delta_slack: float) -> tuple[float, float]:
    """Total cost of k (eps_each, delta_each)-DP releases by advanced composition.

    Returns ``(eps_total, delta_total)`` with
    ``eps_total = sqrt(2 k ln(1/delta_slack)) eps + k eps (e^eps - 1)`` and
    ``delta_total = k delta_each + delta_slack`` (Dwork, Rothblum & Vadhan 2010), capped at the
    basic-composition bound ``k * eps_each``.
    """
    if k < 1 or not (0 < delta_slack < 1):
        raise PrivacyParameterError("advanced_composition needs k >= 1 and 0 < delta_slack < 1")
    adv = math.sqrt(2 * k * math.log(1 / delta_slack)) * eps_each \
        + k * eps_each * math.expm1(eps_each)
    return min(adv, k * eps_each), k * delta_each + delta_slack
