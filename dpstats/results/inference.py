"""Standard errors, tests and confidence intervals of a released fit (statsmodels vocabulary).

:class:`CoefInference` is what a result keeps: the covariance of the released coefficients over
all design columns (NaN rows for terms not selected, withheld fits and methods without
inference), how it was obtained and what an interval covers. Everything in it is a released
value (the ``"inference"`` ledger stage) or post-processing of released values.
:class:`InferenceMixin` gives results ``bse``, ``tvalues``, ``pvalues``, ``conf_int``,
``cov_params`` and ``get_prediction``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["CoefInference", "InferenceMixin", "coef_columns", "SELECTION_NOTE"]

#: What an interval means after private selection (printed in the summary).
SELECTION_NOTE = ("Intervals are conditional on the selected terms: they cover the coefficients "
                  "of the model with those terms (the selection spent its own budget and is not "
                  "adjusted for); terms not selected have no interval. They do not cover the "
                  "full model's coefficients when an omitted term is correlated with a kept "
                  "one: in simulation (Boosted AdaSSP, the default there; 3 of 5 predictors "
                  "of correlation 0.5 selected, n = 20,000, eps = 1, 500 replications) they "
                  "covered 0.964 of the selected model's coefficients (0.951-0.991 per "
                  "coefficient) but 0.660 of the full model's (worst 0.266; "
                  "benchmarks/interval_coverage.py --selection).")


@dataclass(frozen=True, eq=False)
class CoefInference:
    """Uncertainty of the released coefficients.

    Attributes
    ----------
    cov : pandas.DataFrame
        Covariance over the design columns (NaN where a coefficient has no interval).
    method, reference : str
        How the covariance was obtained, and the reference.
    share : float
        Share of the regression's eps spent on the ``"inference"`` stage.
    covers : str
        What a 95% interval covers (one line).
    df : float or None
        Degrees of freedom of a t reference distribution; None: normal.
    sigma, r2, r2_adj : float or None
        Residual standard error, R^2 and adjusted R^2 derived from released values (None
        when not).
    reason : str or None
        Why there are no standard errors (None when there are).
    kept : tuple of str
        The columns the estimator fitted (the others are 0 by selection: no interval, and no
        variance in a prediction conditional on the selection).
    share_of : str
        ``"eps"``: ``share`` is of the regression's eps (ledger stage ``"inference"``);
        ``"mu^2"``: of the fit's Gaussian-DP plan (charged with the fit).
    cov_type : str
        "nonrobust" or "HC1" (a private sandwich), statsmodels' vocabulary.
    bias : pandas.Series or None
        The coefficients' estimated bias, from released values (post-processing): intervals
        and z statistics are centred at ``params - bias`` (``cov`` is the covariance about
        that centre). None: centred at ``params``.
    """

    cov: pd.DataFrame
    method: str = "none"
    reference: str = ""
    share: float = 0.0
    covers: str = ""
    df: float | None = None
    sigma: float | None = None
    r2: float | None = None
    reason: str | None = None
    kept: tuple[str, ...] = ()
    share_of: str = "eps"
    cov_type: str = "nonrobust"
    r2_adj: float | None = None
    bias: pd.Series | None = None

    @classmethod
    def none(cls, columns, reason: str | None) -> CoefInference:
        """No standard errors, for ``reason``."""
        nan = np.full((len(columns), len(columns)), np.nan)
        return cls(cov=pd.DataFrame(nan, index=list(columns), columns=list(columns)),
                   reason=reason)

    def dist(self):
        """The reference distribution (scipy frozen distribution)."""
        return stats.norm() if self.df is None else stats.t(self.df)


class InferenceMixin:
    """``bse``, ``tvalues``, ``pvalues``, ``conf_int``, ``cov_params`` and ``get_prediction``
    for a result with ``params`` and ``inference`` (a :class:`CoefInference` or None)."""

    def _inf(self) -> CoefInference:
        inf = getattr(self, "inference", None)
        return inf if inf is not None else CoefInference.none(self.params.index, None)

    def _centre(self) -> pd.Series:
        """Where intervals and z statistics are centred: ``params`` minus the estimated bias
        (:attr:`CoefInference.bias`; none: ``params``)."""
        bias = self._inf().bias
        return self.params if bias is None else self.params - bias.to_numpy()

    @property
    def params_bias_corrected(self) -> pd.Series:
        """The intervals' centres: ``params`` minus the estimated bias where the inference
        estimates one (dp_glm's objective perturbation, design note 57), else ``params``.

        Post-processing of released values. At large n the ridge's bias can exceed 1.96
        standard errors, so ``params`` may lie outside its own interval while this centre
        does not; the summary then says so.
        """
        return self._centre().rename("bias_corrected")

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the released coefficients (NaN where there is no interval)."""
        return self._inf().cov.copy()

    @property
    def bse(self) -> pd.Series:
        """Standard errors (NaN for terms not selected, withheld fits, methods without
        inference)."""
        return pd.Series(np.sqrt(np.diag(self._inf().cov.to_numpy())), index=self.params.index,
                         name="bse")

    @property
    def tvalues(self) -> pd.Series:
        """``params / bse`` (a z statistic: the reference distribution is normal); where the
        inference estimates a bias, ``(params - bias) / bse``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self._centre() / self.bse).rename("z")

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of ``coef = 0`` from ``tvalues``."""
        z = self.tvalues.to_numpy()
        return pd.Series(2 * self._inf().dist().sf(np.abs(z)), index=self.params.index,
                         name="P>|z|")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """``1 - alpha`` confidence intervals: a DataFrame indexed like ``params`` with
        columns ``lower`` and ``upper`` (NaN where there is no interval).

        Parameters
        ----------
        alpha : float
            In (0, 1); 0.05 gives 95% intervals.
        """
        q = _quantile(self._inf(), alpha)
        half, centre = q * self.bse, self._centre()
        return pd.DataFrame({"lower": centre - half, "upper": centre + half},
                            index=self.params.index)

    def get_prediction(self, newdata):
        """Fitted means of user-supplied rows with their standard errors and intervals.

        ``newdata`` is used as given (not a private release of the training data); AdaSSP and
        BAS clip it to the released box, as ``predict`` does. Returns a
        :class:`~dpstats.results.prediction.PredictionResults` (``predicted_mean``,
        ``se_mean``, ``conf_int(alpha)``, ``summary_frame(alpha)``). Where coefficient
        correlations are not released (NaN off the diagonal) the standard error is
        ``sum_j |x_j| se_j``, the largest over every correlation: conservative intervals.
        """
        from .prediction import prediction_results
        return prediction_results(self, newdata)


def _quantile(inf: CoefInference, alpha: float) -> float:
    a = float(alpha)
    if not 0 < a < 1:
        from ..errors import ValidationError
        raise ValidationError(f"alpha must be in (0, 1), e.g. 0.05 for 95% intervals; "
                              f"got {alpha!r}")
    return float(inf.dist().ppf(1 - a / 2))


def coef_columns(result, alpha: float = 0.05) -> dict[str, list[float]]:
    """The coefficient-table columns ``std err``, ``z``, ``P>|z|``, ``[0.025``, ``0.975]``
    of a result (NaN where there is no interval or nothing was released)."""
    ci = result.conf_int(alpha)
    released = bool(result.released)
    nan = [float("nan")] * len(result.params)

    def col(values) -> list[float]:
        return [float(v) for v in values] if released else nan

    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    return {"std err": col(result.bse), "z": col(result.tvalues), "P>|z|": col(result.pvalues),
            lo: col(ci["lower"]), hi: col(ci["upper"])}


def inference_facts(result) -> list[tuple[str, str]]:
    """Header facts: how the standard errors were obtained (the fit statistics, residual
    standard error and R^2, are :func:`dpstats.results.facts.fit_statistics`)."""
    inf = getattr(result, "inference", None)
    if inf is None or not result.released:
        return []
    if inf.reason is not None:
        return [("Std. errors:", "none (see notes)")]
    how = ("Tukey: spread of group models" if inf.method.startswith("Tukey") else "bootstrap")
    return [("Std. errors:", f"{how}, {inf.share:.0%} of {inf.share_of}")]


def inference_notes(result) -> list[str]:
    """Notes saying how the standard errors were obtained and what the intervals cover (or
    why there are none)."""
    inf = getattr(result, "inference", None)
    if inf is None or not result.released:
        return []
    if inf.reason is not None:
        if inf.reason.startswith("intervals not released"):        # the release gate
            return [f"No standard errors: {inf.reason}."]
        return [f"No standard errors or intervals: {inf.reason}."]
    budget = (f"the inference release took {inf.share:.0%} of the regression's eps (ledger "
              f"stage 'inference')" if inf.share_of == "eps" else
              f"the inference release was a part of the fit's Gaussian-DP plan with "
              f"{inf.share:.0%} of its mu^2 (charged with the fit)")
    centred = ("" if inf.bias is None else " They are centred at coef minus the estimated "
               "bias (released values only), not at coef.")
    return [f"Standard errors: {inf.method} ({inf.reference}); {budget}. Intervals "
            f"and p-values use the normal reference distribution.{centred} A 95% interval "
            f"covers {inf.covers}."] + _outside_note(result)


def _outside_note(result, most: int = 4) -> list[str]:
    """A note naming the terms whose ``coef`` lies outside its own (bias-centred) interval,
    with the intervals' centres (released values only)."""
    if result._inf().bias is None:
        return []
    ci, coef, centre = result.conf_int(), result.params, result.params_bias_corrected
    lo, hi = ci["lower"].to_numpy(), ci["upper"].to_numpy()
    out = [name for name, c, a, b in zip(coef.index, coef.to_numpy(), lo, hi, strict=True)
           if np.isfinite(a) and np.isfinite(b) and not a <= c <= b]
    if not out:
        return []
    shown = ", ".join(f"{name} {centre[name]:.4g}" for name in out[:most])
    more = f" and {len(out) - most} more" if len(out) > most else ""
    return [f"For {len(out)} term(s) the estimated bias is larger than the interval's "
            f"half-width, so coef lies outside its own interval; the intervals' centres "
            f"(params_bias_corrected) are {shown}{more}."]
