"""The result of :func:`dpstats.select`: the selected terms and the ledger, nothing else.

Like every result it holds released values and public metadata only: no scores, no row count
(only the private estimate, when one was released), no data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..mechanisms.accountant import Charge
from .lm import charges_frame, charges_total

__all__ = ["SelectionResult"]

_NAMES = {"kendall": "DPKendall (003 Alg. 1)", "sublasso": "SubLasso votes (003 Alg. 2)",
          "sis": "DP-SIS, canonical Lipschitz top-k (004 Alg. 1)"}


@dataclass(frozen=True, eq=False)
class SelectionResult:
    """Privately selected terms of a formula.

    Attributes
    ----------
    selected : list of str
        Selected terms of the formula (a factor by its term name, e.g. ``cut`` or
        ``C(cut, levels=[...])``, with all its dummy columns; a numeric term by its column);
        in selection order when ``ordered`` (DPKendall, SubLasso), else a set listed in
        formula order (DP-SIS: the order inside the set is not released).
    method : str
        Selector that ran.
    k : int
        Number of terms selected.
    candidates : int
        Number of candidate terms (the formula's terms other than the intercept; a factor is
        one term however many levels it has; public).
    eps : float
        Budget of the call.
    charges : tuple of Charge
        One entry per noisy release.
    n_noisy : float or None
        Private row count, when the selector needed one.
    private : bool
        False when category levels were read from the data (``levels="data"``): then the
        selection is NOT differentially private.
    """

    selected: list[str]
    method: str
    k: int
    candidates: int
    eps: float
    charges: tuple[Charge, ...]
    formula: str
    label: str
    ordered: bool = True
    n_noisy: float | None = None
    seeded: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    private: bool = True

    @property
    def spent(self) -> tuple[float, float]:
        """(eps, delta) charged by this call."""
        return charges_total(self.charges)

    @property
    def ledger(self) -> pd.DataFrame:
        """The charges: stage, mechanism, eps, delta, detail."""
        return charges_frame(self.charges)

    def summary(self):
        """A :class:`~dpstats.results.summary.Summary` (text with ``print``, HTML in a notebook)."""
        from .facts import SEEDED
        from .format import _eps_delta, _fmt_n, format_number
        from .summary import Summary
        facts = [("Formula:", self.formula), ("Response:", self.label),
                 ("Selector:", _NAMES.get(self.method, self.method)),
                 ("k / candidates:", f"{self.k} of {self.candidates} terms"),
                 ("n (private lower bound):", _fmt_n(self.n_noisy)),
                 ("Budget spent:", _eps_delta(*self.spent)),
                 ("Randomness:", SEEDED if self.seeded else "OS CSPRNG"),
                 ("Privacy guarantee:", "(eps, delta)-DP, add/remove one row: "
                  + _eps_delta(*self.spent) if self.private
                  else "NONE — category levels read from the data (levels='data')")]
        ledger = self.ledger.assign(eps=lambda d: d.eps.astype(float),
                                    delta=lambda d: d.delta.astype(float))
        label = f"{self.method}, k={self.k}, eps={format_number(self.eps)}"
        badges = [("seeded", "seeded")] if self.seeded else []
        title, banner = "Differentially private feature selection", None
        if not self.private:
            title = "Non-private feature selection"
            banner = "NOT PRIVATE — category levels read from the data (levels='data')"
            badges.insert(0, ("notprivate", "NOT PRIVATE"))
        return Summary(title, facts, {"ledger": ledger}, spent=self.spent,
                       selected=self.selected, selection_label=label, notes=list(self.notes),
                       badges=badges, ordered=self.ordered, banner=banner)

    def __repr__(self) -> str:
        status = "" if self.private else " NOT PRIVATE"
        return (f"<SelectionResult {self.method} k={self.k}{status}: {self.selected}; spent "
                f"eps={self.spent[0]:.4g}>")

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().as_html()
