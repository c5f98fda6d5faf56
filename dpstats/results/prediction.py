"""Fitted means of new rows with standard errors and intervals (``get_prediction``).

The standard error of ``x_new' b`` is ``sqrt(x_new' V x_new)`` with ``V`` the released
coefficients' covariance (:mod:`dpstats.results.inference`). For a GLM these are on the link
scale (log-odds); ``summary_frame`` also maps the interval through the inverse link.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["PredictionResults", "prediction_results"]


@dataclass(frozen=True, eq=False)
class PredictionResults:
    """Fitted means of new rows (link scale for a GLM) and their standard errors."""

    predicted_mean: pd.Series
    se_mean: pd.Series
    dist: object
    link_inverse: object = None
    #: ``x' bias`` per row where the inference estimates a bias (intervals centred at
    #: ``predicted_mean - bias_mean``); None: centred at the fitted means.
    bias_mean: pd.Series | None = None

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """``1 - alpha`` intervals of the fitted means: columns ``lower``, ``upper``."""
        a = float(alpha)
        if not 0 < a < 1:
            from ..errors import ValidationError
            raise ValidationError(f"alpha must be in (0, 1), e.g. 0.05 for 95% intervals; "
                                  f"got {alpha!r}")
        q = float(self.dist.ppf(1 - a / 2))
        half = q * self.se_mean
        centre = self.predicted_mean - (0.0 if self.bias_mean is None else self.bias_mean)
        return pd.DataFrame({"lower": centre - half, "upper": centre + half})

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` (as statsmodels; for a
        GLM also ``prob``, ``prob_ci_lower``, ``prob_ci_upper`` through the inverse link)."""
        ci = self.conf_int(alpha)
        out = pd.DataFrame({"mean": self.predicted_mean, "mean_se": self.se_mean,
                            "mean_ci_lower": ci["lower"], "mean_ci_upper": ci["upper"]})
        if self.link_inverse is not None:
            for col, src in (("prob", "mean"), ("prob_ci_lower", "mean_ci_lower"),
                             ("prob_ci_upper", "mean_ci_upper")):
                out[col] = self.link_inverse(out[src].to_numpy())
        return out


def _without_correlations(X: np.ndarray, V: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Where coefficient correlations were not released (finite variances, NaN covariances:
    Tukey), ``sum_j |x_j| se_j``: the largest standard error of ``x' beta`` over every
    correlation (triangle inequality), so the interval is conservative, never too short.

    >>> V = np.array([[4.0, np.nan], [np.nan, 1.0]])
    >>> _without_correlations(np.array([[1.0, -2.0]]), V, np.array([0.0])).tolist()
    [4.0]
    """
    d = np.diag(V)
    ok = np.isfinite(d)
    unknown = ~np.isfinite(V) & ok[:, None] & ok[None, :]
    if not unknown.any():
        return se
    return np.abs(X) @ np.sqrt(np.where(ok, d, 0.0))


def prediction_results(result, newdata) -> PredictionResults:
    """:class:`PredictionResults` of ``result`` on ``newdata`` (DataFrame or dict)."""
    from ..formula.checks import _check_frame
    from ..formula.design import design_for_new_data
    newdata = _check_frame(newdata, "newdata")
    X = result._clipped(design_for_new_data(result.spec, newdata))
    beta = result.params.to_numpy()
    V = result.cov_params().to_numpy()
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X @ beta
        used = np.abs(X) > 0               # a coefficient without interval matters only if used
        Vz = np.where(np.isfinite(V), V, 0.0)
        se = np.sqrt(np.einsum("ij,jk,ik->i", X, Vz, X))
        se = _without_correlations(X, V, se)
        inf = result._inf()
        kept = np.array([c in inf.kept for c in result.params.index], dtype=bool)
        missing = ~np.isfinite(np.diag(V)) & kept if inf.kept else np.ones(len(beta), bool)
        se[(used & missing[None, :]).any(axis=1)] = np.nan
    if not result.released:
        mean = np.full(len(X), np.nan)
    index = newdata.index if len(newdata) == len(mean) else None
    bias = result._inf().bias
    shift = None if bias is None else pd.Series(X @ bias.to_numpy(), index=index, name="bias")
    inverse = None
    if getattr(result, "family", None) == "binomial":
        def inverse(v):
            return 1.0 / (1.0 + np.exp(-v))
    return PredictionResults(predicted_mean=pd.Series(mean, index=index, name="mean"),
                             se_mean=pd.Series(se, index=index, name="mean_se"),
                             dist=result._inf().dist(), link_inverse=inverse,
                             bias_mean=shift)
