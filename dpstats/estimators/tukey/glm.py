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
from ..inference.tukey_bias import BIAS_SLOPE, BIAS_TARGET, glm_bias_slope
from ..inference.tukey_glm import (
    GLM_ROWS_PER_COLUMN,
    TUKEY_GLM_INFERENCE_SHARE,
    glm_tukey_inference,
    plan_glm_inference,
)
from ..outcome import Estimate
from .choose_m import SAFETY, cap_models, gate_models, models_needed
from .glm_bias import BIAS, median_bias_reduce, resolve_bias
from .identify import resolve_identify
from .linear import OPTIONS as LINEAR_OPTIONS
from .linear import fit as tukey_fit
from .linear import partition_labels

__all__ = ["estimate", "fit_logistic_models", "choose_m_glm", "bias_models",
           "ROWS_PER_COLUMN_GLM", "BIAS_SLOPE", "BIAS_TARGET", "OPTIONS", "COMMON"]

#: Preferred rows per column in each group for logistic fits (OLS uses 3).
ROWS_PER_COLUMN_GLM = 15.0


def choose_m_glm(n_noisy: float | None, p: int, eps_tukey: float, delta: float,
                 lemma: str = "8.5", accounting: str = "swap") -> int:
    """Number of models for logistic Tukey from the private row count and public p, eps, delta.

    ``m = max(n_hat / (ROWS_PER_COLUMN_GLM p), min(SAFETY * m_needed, n_hat / p))``: groups of
    about 15 rows per column unless the PTR test needs more models (``m_needed`` from the
    data-independent simulation of :func:`dpstats.estimators.tukey.choose_m.models_needed`).
    When groups of :data:`~dpstats.estimators.inference.tukey_glm.GLM_ROWS_PER_COLUMN` (10) rows
    per column reach the intervals' release gate (``m eps / p >= 250``), m rises to
    ``min(n_hat / (10 p), 2 m_gate)`` (the intervals' floor, as dp_lm's
    :func:`~dpstats.estimators.tukey.choose_m.gate_models`), and there m is at most
    ``max(m_bias, m_gate)`` (:func:`bias_models`: the median's residual bias grows as
    ``p^(4/3) m^1.5 / n``; 2,609 models at n = 2e5, p = 6, eps 0.95 instead of 3,158; 4,452 at
    n = 1e6, p = 11). Reads only public values and the released ``n_hat``.

    >>> choose_m_glm(40_000, 6, 1.0, 1e-5) >= 40_000 // (15 * 6)
    True
    >>> choose_m_glm(100_000, 6, 0.95, 1e-5), choose_m_glm(200_000, 6, 0.95, 1e-5)
    (1644, 2609)
    >>> choose_m_glm(1_000_000, 11, 0.95, 1e-5)
    4452
    """
    if n_noisy is None or not (n_noisy > 0):
        return 0
    needed = math.ceil(SAFETY * models_needed(p, eps_tukey, delta, lemma, accounting))
    m = max(n_noisy / (ROWS_PER_COLUMN_GLM * p), min(needed, n_noisy / p))
    small = n_noisy / (GLM_ROWS_PER_COLUMN * p)      # the most models of 10 rows per column
    gate = gate_models(p, eps_tukey, margin=1.0)
    if small >= gate:
        m = max(m, min(small, gate_models(p, eps_tukey)))
        m = min(m, max(bias_models(n_noisy, p), gate))     # the median's residual bias
    return cap_models(m)


def bias_models(n_noisy: float, p: int) -> float:
    """Most models whose median's residual bias stays within :data:`BIAS_TARGET` of its
    standard deviation: ``slope(p) sqrt(m) m p / n = BIAS_TARGET``
    (:func:`~dpstats.estimators.inference.tukey_bias.glm_median_bias`: groups of ``n / (m p)``
    rows per column, a slope that grows as ``p^(1/3)``; public: the released count and p).

    >>> round(bias_models(200_000, 6)), round(bias_models(100_000, 6))
    (2610, 1644)
    >>> round(bias_models(200_000, 11)), round(bias_models(200_000, 3))
    (1523, 4833)
    """
    return (BIAS_TARGET * max(float(n_noisy), 0.0) / (glm_bias_slope(p) * p)) ** (2.0 / 3.0)


def fit_logistic_models(X: np.ndarray, y: np.ndarray, m: int, rng: np.random.Generator,
                        ridge: float) -> np.ndarray:
    """Partition rows by random labels and fit a logistic regression per group: (m, p)."""
    from ..._kernels.logistic import group_logistic
    labels = partition_labels(X.shape[0], m, rng)
    return group_logistic(np.ascontiguousarray(X, dtype=np.float64),
                          np.ascontiguousarray(y, dtype=np.float64), labels, m, ridge)


def _fitter(ridge: float, median: bool):
    """``fitter(X, y, labels, m)``: every group's logistic fit, median-bias reduced when
    ``median`` (:mod:`.glm_bias`); each model depends on its own group's rows only."""
    def fitter(Xf, yf, labels, mf):
        from ..._kernels.logistic import group_logistic
        Xc = np.ascontiguousarray(Xf, dtype=np.float64)
        yc = np.ascontiguousarray(yf, dtype=np.float64)
        models = group_logistic(Xc, yc, labels, mf, ridge)
        return median_bias_reduce(Xc, yc, labels, mf, models) if median else models
    return fitter


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "m", "lemma", "accounting", "intercept_col",
                    "names", "stage", "engine", "n_noisy"})
#: The options of the linear Tukey mechanism (with the logistic inference share), the ridge
#: of the per-group logistic fits and their bias correction.
OPTIONS = OptionSpec(tuple(o for o in LINEAR_OPTIONS.options if o.name != "inference_share") + (
    Option("ridge", "real", 1e-6, range=(0.0, None),
           doc="per-group ridge on the unit-RMS scale, default 1e-6"),
    Option("inference_share", "real", TUKEY_GLM_INFERENCE_SHARE, range=(0.0, 1.0),
           closed=(True, False),
           doc="share of eps for the intervals (estimators/inference/tukey_glm.py); 0: none"),
    Option("bias", "choice", "auto", choices=BIAS,
           doc="median bias reduction of every group fit (estimators/tukey/glm_bias.py); "
               "'auto': when the fit releases intervals"),
))


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, m: int,
             lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
             centre: object = "auto", identify: str = "auto", ridge: float = 1e-6,
             names=None, stage: str = "regression", engine=None,
             inference_share: float = TUKEY_GLM_INFERENCE_SHARE, bias: str = "auto",
             n_noisy=None) -> Estimate:
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
    inference_share, n_noisy : float, float or None
        Share of eps for the intervals (8%, stage ``"inference"``, from the PTR test and the
        exponential mechanism; :mod:`~dpstats.estimators.inference.tukey_glm`: gated; on
        dask from the first pass's row subsample); the released row count (the gate reads it).
    bias : {"auto", "median", "none"}
        Median bias reduction of every group fit (Kenne Pagui, Salvan and Sartori 2017;
        :mod:`.glm_bias`); ``"auto"``: when the plan releases intervals.
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
    opts = validate_options(OPTIONS, {"lemma": lemma, "accounting": accounting,
                                      "centre": centre, "identify": identify, "ridge": ridge,
                                      "inference_share": inference_share, "bias": bias})
    ridge = opts["ridge"]
    ident = "off" if engine is not None else resolve_identify(identify, names)
    plan = plan_glm_inference(inference_share, eps, int(m), X.shape[1], ident,
                              engine is not None, n_noisy)
    median = resolve_bias(bias, plan.eps > 0) == "median"
    return tukey_fit(X, y, eps=eps, delta=delta, rng=rng, ledger=ledger, m=m, lemma=lemma,
                     accounting=accounting, intercept_col=intercept_col, centre=centre,
                     identify=identify, names=names, stage=stage, fitter=_fitter(ridge, median),
                     inference_share=inference_share, n_noisy=n_noisy,
                     inference=(lambda *args: plan, glm_tukey_inference),
                     engine=None if engine is None else engine.logistic_groups(ridge, median))
