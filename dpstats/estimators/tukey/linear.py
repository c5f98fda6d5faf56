"""The Tukey-depth mechanism with propose-test-release (002 Algorithm 2; 003 Lemma 8.5).

1. Each row draws a group label uniformly from {0..m-1}; adding or removing one row changes
   exactly one group and hence one model (shuffle-and-cut would shift every later group).
2. OLS on every group at once (:func:`dpstats._kernels.tukey.group_ols`).
3. A tiny data-independent, scale-relative jitter breaks ties; models are sorted per coordinate.
4. Log volumes of the depth regions; the PTR test (:func:`dpstats.mechanisms.ptr.ptr_check`).
5. If PTR passes, the restricted exponential mechanism picks a depth >= t and a uniform point of
   exactly that depth (:func:`dpstats.mechanisms.tukey_em.restricted_tukey_em`).

The eps split between steps 4 and 5 and the delta bookkeeping come from
:func:`dpstats.mechanisms.ptr.ptr_parameters` (30% / 70% under the default "swap" accounting, halves
under "paper").

Neighbours: add/remove one row. The whole estimator is (eps, delta)-DP (002 Theorem 3.10).
"""

from __future__ import annotations

import numpy as np

from ..._kernels.depth import log_depth_volumes, log_exact_volumes, max_depth
from ...errors import ValidationError
from ...mechanisms.accountant import Ledger
from ...mechanisms.plan import forfeit
from ...mechanisms.ptr import ptr_check, ptr_parameters
from ...mechanisms.sampling import random_groups, uniform_jitter
from ...mechanisms.tukey_em import restricted_tukey_em
from .. import Estimate
from .centre import CENTRE_SHARE, private_centre

__all__ = ["estimate", "fit_models", "jitter_sort", "MIN_MODELS"]

#: Fewest models for which the test can be run at all (t = floor(floor(m/2)/2) >= 1).
MIN_MODELS = 4
#: Relative and absolute size of the tie-breaking jitter.
_REL_JITTER = 2.0**-40
_ABS_JITTER = 1e-290


def partition_labels(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Independent uniform group labels in {0..m-1}, one per row (data-independent: drawn by
    :func:`dpstats.mechanisms.sampling.random_groups`)."""
    return random_groups(n, m, rng)


def fit_models(X: np.ndarray, y: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Partition rows by random labels and fit OLS on every group: an (m, p) array."""
    from ..._kernels.tukey import group_ols
    labels = partition_labels(X.shape[0], m, rng)
    return group_ols(np.ascontiguousarray(X, dtype=np.float64),
                     np.ascontiguousarray(y, dtype=np.float64), labels, m)


def jitter_sort(models: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Break ties with jitter relative to each entry's own scale, then sort every coordinate.

    The jitter of a model depends only on that model and on data-independent uniforms, so each
    jittered model is still a function of its own group alone (the uniforms come from
    :func:`dpstats.mechanisms.sampling.uniform_jitter`).
    """
    u = uniform_jitter(models.shape, rng)
    jittered = models + (np.abs(models) * _REL_JITTER + _ABS_JITTER) * u
    return np.sort(jittered, axis=0)


def check_options(centre: object = "auto") -> None:
    """Validate the Tukey options (touches no data, charges nothing).

    >>> check_options(None)
    """
    if isinstance(centre, str) and centre != "auto":
        raise ValidationError(f"centre must be 'auto', None or an array of public centres; got "
                              f"{centre!r}")


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, m: int,
             lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
             centre: object = "auto", names=None, stage: str = "regression",
             fitter=None, **_: object) -> Estimate:
    """Private linear regression by the Tukey mechanism.

    Parameters
    ----------
    X, y : arrays
        Design matrix and label (rows are the privacy units).
    eps, delta : float
        Budget for this stage, split between the PTR test and the exponential mechanism by
        :func:`dpstats.mechanisms.ptr.ptr_parameters`; the whole delta is charged with the
        mechanism.
    m : int
        Number of models (public, or derived from a private row count).
    lemma : {"8.5", "3.6"}
        Distance lemma for PTR.
    accounting : {"swap", "paper"}
        ``"swap"`` (default) is sound for the random-label partition, where one row changes one
        model; ``"paper"`` reproduces 002/003, whose analysis needs one row to add or remove a
        whole model. See :func:`dpstats.mechanisms.ptr.ptr_parameters`.
    intercept_col : int or None
        Index of the intercept column; centring needs one (it absorbs the shift).
    centre : "auto", None or array
        ``"auto"`` spends :data:`~dpstats.estimators.tukey.centre.CENTRE_SHARE` of ``eps`` on
        private column medians and fits the groups on centred columns (see
        :mod:`dpstats.estimators.tukey.centre`); an array is a public centre; None fits raw columns.
        The released coefficients are always on the original scale.
    names : sequence of str, optional
        Column names, for the ledger.
    fitter : callable, optional
        ``fitter(X, y, m, rng) -> (m, p) models``, the non-private per-group fit; default
        :func:`fit_models` (OLS). The privacy analysis only needs each model to depend on its
        own group's rows, so other fits (e.g. logistic, :mod:`.tukey_glm`) plug in here.

    Returns
    -------
    Estimate
        ``released`` False (and ``params`` None) when PTR fails; the budget is still spent.
    """
    m = int(m)
    D = max_depth(m)
    t = D // 2
    info = {"m": m, "max_depth": D, "t": t}
    params = ptr_parameters(eps, delta, accounting)
    if m < MIN_MODELS or t < 1:
        info["reason"] = "too_few_models"
        return Estimate(params=None, released=False, ptr=None, info=info)
    check_options(centre)
    c = None
    if intercept_col is not None and X.shape[1] > 1 and centre is not None:
        if isinstance(centre, str):
            eps_c = CENTRE_SHARE * eps
            c = private_centre(X, intercept_col, eps_c, rng, ledger, names=names, stage=stage)
            eps -= eps_c
            params = ptr_parameters(eps, delta, accounting)
        else:
            c = np.asarray(centre, dtype=np.float64).copy()
            c[intercept_col] = 0.0
        info["centre"] = c
    models = (fit_models if fitter is None else fitter)(X, y, m, rng)
    if c is not None:
        # Re-parametrise each model by its prediction at c: a fixed linear map of each group's
        # own model, so one row still changes one model. Done after the fit, not by fitting on
        # X - c: the two agree for full-rank groups, but with rank-deficient groups (one-hot
        # columns plus an intercept) centring first changes the minimum-norm solutions
        # (nyc_garbage median test R^2 0.44 instead of 0.49).
        models[:, intercept_col] += models @ c
    S = jitter_sort(models, rng)
    logV = log_depth_volumes(S)
    logW = log_exact_volumes(logV)
    report = ptr_check(logV, logW, t=t, params=params, rng=rng, ledger=ledger, lemma=lemma,
                       stage=stage)
    if not report.passed:
        forfeit(ledger, "restricted exponential", params.eps_em, delta, stage=stage,
                detail="not run: PTR failed (its share counts as spent)")
        info["reason"] = "ptr_failed"
        return Estimate(params=None, released=False, ptr=report, info=info)
    point, depth = restricted_tukey_em(S, t, params.eps_em, rng, ledger, delta=delta,
                                       monotone=params.monotone, stage=stage)
    if point is None:
        info["reason"] = "zero_volume"
        return Estimate(params=None, released=False, ptr=report, info=info)
    info["depth"] = depth
    if c is not None:  # back to the original parametrisation (post-processing)
        point = point.copy()
        point[intercept_col] -= float(c @ point)
    return Estimate(params=point, released=True, ptr=report, info=info)
