"""The result of :func:`dpstats.dp_glm`: a :class:`~dpstats.results.lm.DPLMResult` with a family.

Like every dpstats result it is frozen and holds released values and public metadata only.
``predict`` and ``score`` evaluate the released coefficients on data the *user* supplies; their
outputs are not private releases of the training data and never appear in a summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from ..errors import PredictionError, ValidationError
from .lm import DPLMResult

__all__ = ["DPGLMResult", "code_binary_label"]

_TYPES = ("response", "link")


def code_binary_label(values: pd.Series, levels: tuple) -> pd.Series:
    """Code a two-level response as 0.0 / 1.0: ``levels[0]`` -> 0, ``levels[1]`` -> 1.

    Missing values stay missing (the row is then dropped like any incomplete row); a value
    that is neither level becomes NaN as well, so callers check for it.

    >>> code_binary_label(pd.Series(["no", "yes", None]), ("no", "yes")).tolist()
    [0.0, 1.0, nan]
    """
    mapping = {levels[0]: 0.0, levels[1]: 1.0}
    return pd.Series(values, copy=False).astype(object).map(mapping).astype(np.float64)


@dataclass(frozen=True, eq=False)
class DPGLMResult(DPLMResult):
    """A differentially private generalised linear model fit (``family="binomial"``: logistic).

    Every attribute of :class:`~dpstats.results.lm.DPLMResult` (``params`` on the link (log-odds)
    scale, ``selected``, ``ptr``, ``released``, ``spent``, ``ledger``, ``n_noisy``, ...), plus:

    Attributes
    ----------
    family : str
        ``"binomial"`` (logit link).
    response_levels : tuple or None
        For a two-level categorical response, its (public, declared) levels: the first is
        coded 0 and the second 1. None when the response was numeric 0/1 or boolean.
    auto_choice : str or None
        With ``method="auto"``: the method it ran (``method`` says the same), or None when it
        withheld the fit; the notes say why (from the released row count and public values).
        None when a method was given.
    """

    family: str = "binomial"
    response_levels: tuple | None = None
    auto_choice: str | None = None

    def summary(self):
        """As :meth:`DPLMResult.summary`; with ``method="auto"`` the Method line says so."""
        out = super().summary()
        if self.auto_choice is not None or self.unreleased_reason == "too_few_rows":
            out.facts = [(k, f"{v} (chosen by method='auto')" if k == "Method:" else v)
                         for k, v in out.facts]
        return out

    def _design(self, newdata: pd.DataFrame) -> np.ndarray:
        from ..formula.design import design_for_new_data
        return design_for_new_data(self.spec, newdata)

    def predict(self, newdata: pd.DataFrame, type: str = "response") -> pd.Series:
        """Predicted probabilities (``type="response"``) or log-odds (``type="link"``).

        Evaluates the released coefficients on user-supplied data (not a private release).
        Methods fitted on clipped inputs (dpgd, and any estimator that releases a clipping
        box) clip the new inputs to the released box first. Rows with missing inputs get NaN;
        when nothing was released every prediction is NaN.

        Raises
        ------
        ValidationError
            ``type`` is neither ``"response"`` nor ``"link"``.
        """
        if not (isinstance(type, str) and type in _TYPES):
            raise ValidationError(f"type={type!r} is not known; use type='response' "
                                  "(probabilities) or type='link' (log-odds)")
        from ..formula.checks import _check_frame
        newdata = _check_frame(newdata, "newdata")
        with np.errstate(over="ignore", invalid="ignore"):  # inf inputs give inf/NaN rows
            eta = self._clipped(self._design(newdata)) @ self.params.to_numpy()
        out = expit(eta) if type == "response" else eta
        index = newdata.index if len(newdata) == len(out) else None
        return pd.Series(out, index=index, name="probability" if type == "response" else "link")

    def _coded(self, newdata: pd.DataFrame) -> pd.DataFrame:
        """``newdata`` with a two-level categorical response coded 0/1 as at fit time."""
        from ..formula.checks import _check_frame
        newdata = _check_frame(newdata, "newdata")
        label = self.spec.label
        if label not in newdata.columns:
            return newdata
        col = newdata[label]
        if self.response_levels is not None:
            coded = code_binary_label(col, self.response_levels)
            if bool((coded.isna() & col.notna()).any()):
                raise PredictionError(f"the response {label!r} in `newdata` has values other "
                                      f"than the two fitted levels; recode or drop those rows")
            return newdata.assign(**{label: coded})
        if pd.api.types.is_bool_dtype(col.dtype) or str(col.dtype) == "boolean":
            return newdata.assign(**{label: col.astype("Float64").astype(np.float64)})
        return newdata

    def score(self, newdata: pd.DataFrame) -> float:
        """Accuracy on user-supplied data: the share of rows whose predicted probability is on
        the same side of 0.5 as the label (probability >= 0.5 predicts 1).

        Not private: it reads ``newdata`` directly, so use it on data you may look at (e.g. a
        public test set). NaN when nothing was released.

        Raises
        ------
        PredictionError
            No complete rows, or a response that is not coded like the fitted one.
        """
        from ..formula.design import response_for_new_data
        X, y = response_for_new_data(self.spec, self._coded(newdata))
        if not np.isin(y, (0.0, 1.0)).all():
            raise PredictionError(f"score(newdata): the response {self.spec.label!r} must be "
                                  "coded 0/1 (or with the fitted two levels)")
        if not self.released:
            return float("nan")
        pred = (self._clipped(X) @ self.params.to_numpy()) >= 0.0   # probability >= 0.5
        return float(np.mean(pred == (y == 1.0)))

    def __repr__(self) -> str:
        status = self._status()
        e, d = self.spent
        return (f"<DPGLMResult {self.formula!r} family={self.family} method={self.method}"
                f"{self._l1()} {status}; spent eps={e:.4g}, delta={d:.3g}>")
