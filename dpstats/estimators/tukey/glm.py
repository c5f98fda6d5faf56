"""The Tukey-depth mechanism with propose-test-release for logistic regression.

002 (section 5) proposes extending the Tukey mechanism beyond linear regression: it only needs
non-private models that are vectors in R^p. This module is
:func:`dpstats.estimators.tukey.linear.estimate`
with one change, the per-group fit (passed to it as ``fitter``):

1. Each row draws a group label uniformly from {0..m-1} (one row changes one model).
2. A lightly ridge-regularised logistic regression on every group at once
   (:func:`dpstats._kernels.logistic.group_logistic`; the ridge keeps separable small groups
   finite and is data-independent).
3. Private centring (:mod:`dpstats.estimators.tukey.centre`): each model is re-parametrised by its
   log-odds at a privately released centre, a fixed linear map of that group's own model.
4. Scale-relative jitter, per-coordinate sort, log volumes of the depth regions, the PTR test
   (:func:`dpstats.mechanisms.ptr.ptr_check`), and if it passes the restricted exponential mechanism
   (:func:`dpstats.mechanisms.tukey_em.restricted_tukey_em`).

Neighbours: add/remove one row, which changes exactly one of the m models; every privacy
statement of :mod:`dpstats.estimators.tukey.linear` (sensitivity 1 of the depth and of the PTR
distance, the eps split of :func:`dpstats.mechanisms.ptr.ptr_parameters`) is about the models only,
not about how each was fitted, so it carries over unchanged. The estimator is (eps, delta)-DP.

Logistic fits need more rows per group than OLS (a group of a few rows per column is often
separable and its coefficients are then large and unstable), so ``m="auto"`` uses
:func:`choose_m_glm` rather than :func:`dpstats.estimators.tukey.choose_m.choose_m`. On a dask
frame (``engine=``) the rows are grouped by their random label by a shuffle and each group is
fitted on a worker (:mod:`dpstats.dask.shuffle`); everything else is unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.accountant import Ledger
from ...validation import Option, OptionSpec, validate_options
from ..outcome import Estimate
from .choose_m import SAFETY, cap_models, models_needed
from .linear import OPTIONS as LINEAR_OPTIONS
from .linear import estimate as tukey_estimate
from .linear import partition_labels

__all__ = ["estimate", "fit_logistic_models", "choose_m_glm", "ROWS_PER_COLUMN_GLM", "OPTIONS",
           "COMMON"]

#: Preferred rows per column in each group for logistic fits (OLS uses 3).
ROWS_PER_COLUMN_GLM = 15.0


def choose_m_glm(n_noisy: float | None, p: int, eps_tukey: float, delta: float,
                 lemma: str = "8.5", accounting: str = "swap") -> int:
    """Number of models for logistic Tukey from the private row count and public p, eps, delta.

    ``m = max(n_hat / (ROWS_PER_COLUMN_GLM p), min(SAFETY * m_needed, n_hat / p))``: groups of
    about 15 rows per column unless the PTR test needs more models (``m_needed`` from the
    data-independent simulation of :func:`dpstats.estimators.tukey.choose_m.models_needed`). Reads
    only public values and the released ``n_hat``.

    >>> choose_m_glm(40_000, 6, 1.0, 1e-5) >= 40_000 // (15 * 6)
    True
    """
    if n_noisy is None or not (n_noisy > 0):
        return 0
    needed = math.ceil(SAFETY * models_needed(p, eps_tukey, delta, lemma, accounting))
    return cap_models(max(n_noisy / (ROWS_PER_COLUMN_GLM * p), min(needed, n_noisy / p)))


def fit_logistic_models(X: np.ndarray, y: np.ndarray, m: int, rng: np.random.Generator,
                        ridge: float) -> np.ndarray:
    """Partition rows by random labels and fit a logistic regression per group: (m, p)."""
    from ..._kernels.logistic import group_logistic
    labels = partition_labels(X.shape[0], m, rng)
    return group_logistic(np.ascontiguousarray(X, dtype=np.float64),
                          np.ascontiguousarray(y, dtype=np.float64), labels, m, ridge)


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "m", "lemma", "accounting", "intercept_col",
                    "names", "stage", "engine"})
#: The options of the linear Tukey mechanism, and the ridge of the per-group logistic fits.
OPTIONS = OptionSpec(tuple(o for o in LINEAR_OPTIONS.options if o.name != "inference_share") + (
    Option("ridge", "real", 1e-6, range=(0.0, None),
           doc="per-group ridge on the unit-RMS scale, default 1e-6"),
))


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, m: int,
             lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
             centre: object = "auto", identify: str = "auto", ridge: float = 1e-6,
             names=None, stage: str = "regression", engine=None) -> Estimate:
    """Private logistic regression by the Tukey mechanism (subsample and aggregate).

    Parameters
    ----------
    X, y : arrays
        Design matrix and 0/1 label (rows are the privacy units).
    eps, delta : float
        Budget of this stage; :data:`~dpstats.estimators.tukey.centre.CENTRE_SHARE` of eps goes to
        the private centre (when centring), the rest is split between the PTR test and the
        exponential mechanism by :func:`dpstats.mechanisms.ptr.ptr_parameters`; all of delta is
        charged with the mechanism.
    m : int
        Number of models (public, or from :func:`choose_m_glm` on a private row count).
    lemma, accounting : str
        As in :func:`dpstats.estimators.tukey.linear.estimate`.
    intercept_col : int or None
        Index of the intercept column (centring needs one).
    centre : "auto", None or array
        ``"auto"``: private column medians (sensitivity-1 exponential mechanism per column,
        see :mod:`dpstats.estimators.tukey.centre`); an array: public centres; None: no centring.
    identify : {"auto", "regroup", "votes", "off"}
        As in :func:`dpstats.estimators.tukey.linear.estimate` (identification depends on
        the design only, so it is the same for logistic fits).
    ridge : float
        Ridge of every group's fit (see :mod:`dpstats._kernels.logistic`); public.
    names : sequence of str, optional
        Column names, for the ledger.
    engine : object, optional
        Dask statistics (:mod:`dpstats.dask.shuffle`: the rows shuffled by their random
        group label, each group's logistic fit on a worker); X and y have no rows.

    Returns
    -------
    Estimate
        ``released`` False (``params`` None, ``withheld`` says why) when there are too few
        models or PTR fails; the budget is still spent when PTR ran.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(60_000), rng.uniform(-2, 2, size=60_000)]
    >>> y = (rng.uniform(size=60_000) < 1 / (1 + np.exp(-(0.5 + X[:, 1])))).astype(float)
    >>> est = estimate(X, y, eps=5.0, delta=1e-5, rng=rng, m=600, intercept_col=0)
    >>> est.released, bool(np.abs(est.params - [0.5, 1.0]).max() < 0.2)
    (True, True)
    """
    ridge = validate_options(OPTIONS, {"lemma": lemma, "accounting": accounting,
                                       "centre": centre, "identify": identify,
                                       "ridge": ridge})["ridge"]

    def fitter(Xf, yf, labels, mf):
        from ..._kernels.logistic import group_logistic
        return group_logistic(np.ascontiguousarray(Xf, dtype=np.float64),
                              np.ascontiguousarray(yf, dtype=np.float64), labels, mf, ridge)

    return tukey_estimate(X, y, eps=eps, delta=delta, rng=rng, ledger=ledger, m=m,
                          lemma=lemma, accounting=accounting, intercept_col=intercept_col,
                          centre=centre, identify=identify, names=names, stage=stage,
                          fitter=fitter, inference_share=0.0,   # no logistic Tukey SEs yet
                          engine=None if engine is None else engine.logistic_groups(ridge))
