"""The result of :func:`dpstats.dp_lm` (:class:`DPLMResult`, also the base of ``dp_glm``'s).

Results are frozen and hold **released values and public metadata only**: no rows, residuals,
true row count, data bounds or raw selection scores. ``predict`` and ``score`` evaluate the
released coefficients on data the *user* supplies; their outputs are not private releases of the
training data and never appear in a summary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import PredictionError
from ..formula.numeric import INTERCEPT
from ..mechanisms.accountant import Charge
from ..mechanisms.ptr import PTRReport
from .inference import InferenceMixin

__all__ = ["PTRReport", "SelectionReport", "DPLMResult"]


def charges_total(charges) -> tuple[float, float]:
    """(eps, delta) of a list of charges under basic composition."""
    return (math.fsum(c.eps for c in charges), math.fsum(c.delta for c in charges))


def charges_frame(charges) -> pd.DataFrame:
    """Charges as a DataFrame: stage, mechanism, eps, delta, detail."""
    cols = ["stage", "mechanism", "eps", "delta", "detail"]
    return pd.DataFrame([{k: getattr(c, k) for k in cols} for c in charges], columns=cols)


@dataclass(frozen=True)
class SelectionReport:
    """Which terms a private selector picked, in selection order, and what it cost."""

    method: str
    k: int
    selected: tuple[str, ...]
    eps: float
    ordered: bool = True


@dataclass(frozen=True)
class FitSpec:
    """Data-free description of the design, enough to rebuild X for new data (``recode``: the
    released levels of columns whose levels were discovered privately; ``variables``: the data
    columns used, response first, by their full names)."""

    formula: str
    expanded: str
    label: str
    columns: tuple[str, ...]
    has_intercept: bool
    model_spec: object
    levels_from_data: tuple[str, ...] = ()
    recode: tuple = ()
    variables: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    term_of: tuple[int, ...] = ()

    @property
    def spec(self) -> object:
        """The formulaic model spec of the right-hand side (holds no rows)."""
        return self.model_spec

    def column_ranks(self, selected) -> dict[str, int]:
        """Selection rank of every column of each selected term (and of the term's name), so
        that all dummies of a selected factor are marked together.

        >>> FitSpec("y ~ x + g", "y ~ x + g", "y", ("Intercept", "x", "g[T.b]"), True, None,
        ...         terms=("x", "g"), term_of=(-1, 0, 1)).column_ranks(["g"])
        {'g': 1, 'g[T.b]': 1}
        """
        rank = {name: i + 1 for i, name in enumerate(selected)}
        for col, t in zip(self.columns, self.term_of, strict=False):
            if t >= 0 and self.terms[t] in rank:
                rank[col] = rank[self.terms[t]]
        return rank


@dataclass(frozen=True, eq=False)
class DPLMResult(InferenceMixin):
    """A differentially private linear model fit.

    Attributes
    ----------
    params : pandas.Series
        Released coefficients indexed by design-matrix column (Intercept first). All NaN when
        nothing was released (``released`` is False). Columns not selected are 0.
    selected : list of str
        Selected terms in selection order (``[]`` when no selection ran).
    ptr : PTRReport or None
        The PTR check, when the method has one.
    released : bool
        False when nothing was released (PTR failed, too few rows, ...;
        ``unreleased_reason`` says why).
    private : bool
        False for the non-private baseline ``method="ols"`` and for the Tukey mechanism with
        ``accounting="paper"`` (not (eps, delta)-DP; kept to reproduce the papers).
    spent : tuple of float
        (eps, delta) charged by this fit.
    n_noisy : float or None
        The privately estimated row count, when one was released.
    """

    params: pd.Series
    spec: FitSpec
    method: str
    eps: float
    delta: float
    charges: tuple[Charge, ...]
    released: bool
    private: bool = True
    selector: str | None = None
    k: int | None = None
    selected: list[str] = field(default_factory=list)
    selection: SelectionReport | None = None
    ptr: PTRReport | None = None
    n_noisy: float | None = None
    m: int | None = None
    max_depth: int | None = None
    #: PTR accounting of a Tukey fit ("swap", or "paper": not private); None otherwise.
    accounting: str | None = None
    seeded: bool = False
    split: dict | None = None
    notes: tuple[str, ...] = ()
    #: Why nothing was released (None when released): a code ("ptr_failed", "too_few_models",
    #: "zero_volume") or a sentence from the estimator.
    unreleased_reason: str | None = None
    #: Released clipping box ``(lo, hi)`` over the design columns for methods that fit the
    #: winsorised predictor (AdaSSP, BAS); ``predict`` and ``score`` clip inputs to it.
    clip: tuple | None = None
    #: The L1 radius of a Frank-Wolfe fit (public, on the [-1, 1] scale); None otherwise.
    l1_radius: float | None = None
    #: Why ``method="auto"`` chose ``method`` (from the released row count and public values
    #: only; :mod:`dpstats.pipeline.auto`); None when the method was given.
    method_choice: str | None = None
    #: Standard errors and what the intervals cover
    #: (:class:`~dpstats.results.inference.CoefInference`); None: none (e.g. ``"ols"``).
    inference: object | None = None

    # -- budget ----------------------------------------------------------------------------
    @property
    def spent(self) -> tuple[float, float]:
        """(eps, delta) actually charged by this fit (basic composition of its ledger)."""
        return charges_total(self.charges)

    @property
    def ledger(self) -> pd.DataFrame:
        """The fit's charges: stage, mechanism, eps, delta, detail."""
        return charges_frame(self.charges)

    @property
    def formula(self) -> str:
        """The formula as written by the user."""
        return self.spec.formula

    # -- using the released model ----------------------------------------------------------
    def predict(self, newdata: pd.DataFrame) -> pd.Series:
        """Predictions ``X_new @ params`` for user-supplied data (not a private release).

        Rows with missing inputs get NaN. When nothing was released all predictions are NaN.
        Methods fitted on clipped inputs (AdaSSP, BAS) clip ``X_new`` to the released box first;
        for the others a row with an infinite input gets a non-finite prediction. ``newdata``
        may be a DataFrame or a dict of equal-length columns.
        """
        from ..formula.checks import _check_frame
        from ..formula.design import design_for_new_data
        newdata = _check_frame(newdata, "newdata")
        X = self._clipped(design_for_new_data(self.spec, newdata))
        with np.errstate(over="ignore", invalid="ignore"):  # inf inputs give inf/NaN rows
            pred = X @ self.params.to_numpy()
        index = newdata.index if len(newdata) == len(pred) else None
        return pd.Series(pred, index=index, name="predicted")

    def score(self, newdata: pd.DataFrame) -> float:
        """R^2 of the released model on user-supplied data with the label column.

        Not private: it reads ``newdata`` directly, so use it on data you may look at
        (e.g. a public test set). NaN when the model was not released.
        """
        from ..formula.design import response_for_new_data
        X, y = response_for_new_data(self.spec, newdata)  # checks newdata, finite values
        if y.size == 0:
            raise PredictionError("score(newdata): no complete rows to score; "
                                  "newdata needs the label and every model variable")
        if not self.released:
            return float("nan")
        resid = y - self._clipped(X) @ self.params.to_numpy()
        tss = float(np.sum((y - y.mean()) ** 2))
        return 1.0 - float(resid @ resid) / tss if tss > 0 else float("nan")

    def _clipped(self, X: np.ndarray) -> np.ndarray:
        if self.clip is None:
            return X
        return np.clip(X, self.clip[0], self.clip[1])

    def tidy(self, conf_level: float = 0.95) -> pd.DataFrame:
        """One row per design column, as R's broom: term, estimate, std_error, statistic (z),
        p_value, conf_low, conf_high (NaN where there is no interval), selected (and its
        selection rank; all columns of a selected factor share it)."""
        sel = self.spec.column_ranks(self.selected)
        ci = self.conf_int(1.0 - conf_level)
        se, z, pv = self.bse, self.tvalues, self.pvalues
        rows = []
        for name, est in self.params.items():
            rank = sel.get(name)
            rows.append({"term": name, "estimate": float(est), "std_error": float(se[name]),
                         "statistic": float(z[name]), "p_value": float(pv[name]),
                         "conf_low": float(ci.at[name, "lower"]),
                         "conf_high": float(ci.at[name, "upper"]),
                         "selected": (rank is not None) or not self.selected
                         or name == INTERCEPT,
                         "selection_rank": rank})
        return pd.DataFrame(rows, columns=["term", "estimate", "std_error", "statistic",
                                           "p_value", "conf_low", "conf_high", "selected",
                                           "selection_rank"])

    # -- display ---------------------------------------------------------------------------
    def summary(self):
        """A :class:`~dpstats.results.summary.Summary` that prints as text and renders as HTML."""
        from .summary import Summary
        return Summary.from_result(self)

    def plot(self, **kwargs):
        """Dot plot of the released coefficients with the selected terms marked.

        Draws released quantities only (never the data or the Tukey depth regions); see
        :func:`dpstats.results.plot.coef_plot` for the options. Needs matplotlib
        (``pip install dpstats[plot]``).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plot import coef_plot
        return coef_plot(self, **kwargs)

    def _status(self) -> str:
        """Release status for ``repr``, from released facts only: "PTR failed" only when a
        PTR report says so; otherwise the condition of the withheld reason code."""
        from ..withheld import short_reason
        if not self.private:
            return "NOT PRIVATE"
        if self.released:
            return "released"
        if self.ptr is not None and not self.ptr.passed:
            return "NOT released (PTR failed)"
        reason = short_reason(self.unreleased_reason)
        if reason == "PTR failed":      # a code without a PTR report: say no more than we know
            reason = None
        return f"NOT released ({reason})" if reason else "NOT released"

    def _l1(self) -> str:
        return "" if self.l1_radius is None else f" L1-constrained (radius {self.l1_radius:g})"

    def __repr__(self) -> str:
        status = self._status()
        e, d = self.spent
        return (f"<DPLMResult {self.formula!r} method={self.method}{self._l1()} {status}; "
                f"spent eps={e:.4g}, delta={d:.3g}>")

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().as_html()
