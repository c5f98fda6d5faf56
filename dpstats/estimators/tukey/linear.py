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

Neighbours: add/remove one row. The whole estimator is (eps, delta)-DP (002 Theorem 3.10) under
the default ``accounting="swap"``; ``accounting="paper"`` is not (see :func:`estimate`).
"""

from __future__ import annotations

import numpy as np

from ..._kernels.depth import log_depth_volumes, log_exact_volumes, max_depth
from ...errors import ValidationError
from ...mechanisms.accountant import Ledger
from ...mechanisms.plan import forfeit
from ...mechanisms.ptr import PAPER_NOTE, ptr_check, ptr_parameters
from ...mechanisms.sampling import random_groups, uniform_jitter
from ...mechanisms.tukey_em import restricted_tukey_em
from ...validation import Option, OptionSpec, validate_options
from ..outcome import Estimate, Withheld
from .centre import CENTRE_SHARE, private_centre

__all__ = ["estimate", "fit_models", "jitter_sort", "MIN_MODELS", "OPTIONS", "COMMON"]

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


def _check_centre(value: object, name: str) -> object:
    if isinstance(value, str) and value != "auto":
        raise ValidationError(f"{name} must be 'auto', None or an array of public centres; got "
                              f"{value!r}")
    return value


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "m", "lemma", "accounting", "intercept_col",
                    "names", "stage", "fitter"})
#: The Tukey mechanism's options.
OPTIONS = OptionSpec((
    Option("lemma", "choice", "8.5", choices=("8.5", "3.6"), doc="distance lemma for PTR"),
    Option("accounting", "choice", "swap", choices=("swap", "paper"),
           doc="how one row changes the models, for the PTR accounting"),
    Option("centre", "any", "auto", check=_check_centre,
           doc="'auto' (private medians), None, or an array of public centres"),
))


def _centre(X, centre, intercept_col, eps: float, rng, ledger, names,
            stage: str, cells=None) -> tuple[np.ndarray | None, float]:
    """The centre of the columns (or None) and the eps its private release took."""
    if intercept_col is None or X.shape[1] <= 1 or centre is None:
        return None, 0.0
    if isinstance(centre, str):
        eps_c = CENTRE_SHARE * eps
        return private_centre(X, intercept_col, eps_c, rng, ledger, names=names,
                              stage=stage, cells=cells), eps_c
    c = np.asarray(centre, dtype=np.float64).copy()
    c[intercept_col] = 0.0
    return c, 0.0


def _ptr_release(S, t: int, params, delta: float, lemma: str, c, intercept_col, rng, ledger,
                 stage: str, facts: dict) -> Estimate:
    """PTR test on the sorted models ``S``; if it passes, the restricted exponential mechanism
    and the map back to the original parametrisation (post-processing)."""
    logV = log_depth_volumes(S)
    logW = log_exact_volumes(logV)
    report = ptr_check(logV, logW, t=t, params=params, rng=rng, ledger=ledger, lemma=lemma,
                       stage=stage)
    note = PAPER_NOTE if params.accounting == "paper" else ""
    if not report.passed:
        forfeit(ledger, "restricted exponential", params.eps_em, delta, stage=stage,
                detail="not run: PTR failed (its share counts as spent)" + note)
        return Estimate(params=None, released=False, withheld=Withheld.PTR_FAILED, ptr=report,
                        **facts)
    # the depth the mechanism samples stays inside it: only the point is released
    point = restricted_tukey_em(S, t, params.eps_em, rng, ledger, delta=delta,
                                monotone=params.monotone, stage=stage, note=note)
    if point is None:
        return Estimate(params=None, released=False, withheld=Withheld.ZERO_VOLUME, ptr=report,
                        **facts)
    if c is not None:  # back to the original parametrisation (post-processing)
        point = point.copy()
        point[intercept_col] -= float(c @ point)
    return Estimate(params=point, released=True, ptr=report, **facts)


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, m: int,
             lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
             centre: object = "auto", names=None, stage: str = "regression",
             fitter=None, engine=None) -> Estimate:
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
        whole model: it is **not** (eps, delta)-DP here (its ledger entry says so, and
        ``dp_lm``/``dp_glm`` mark such fits NOT PRIVATE). See
        :func:`dpstats.mechanisms.ptr.ptr_parameters`.
    intercept_col : int or None
        Index of the intercept column; centring needs one (it absorbs the shift).
    centre : "auto", None or array
        ``"auto"`` spends :data:`~dpstats.estimators.tukey.centre.CENTRE_SHARE` of ``eps`` on
        private column medians and fits the groups on centred columns (see
        :mod:`dpstats.estimators.tukey.centre`); an array is a public centre; None fits raw
        columns. The released coefficients are always on the original scale.
    names : sequence of str, optional
        Column names, for the ledger.
    stage : str
        Ledger stage.
    fitter : callable, optional
        ``fitter(X, y, m, rng) -> (m, p) models``, the non-private per-group fit; default
        :func:`fit_models` (OLS). The privacy analysis only needs each model to depend on its
        own group's rows, so other fits (e.g. logistic, :mod:`.glm`) plug in here.
    engine : object, optional
        Distributed statistics (:mod:`dpstats.dask`): ``engine.cells`` gives the centre's
        value counts and ``engine.fit_models`` the group fits; ``X`` and ``y`` then have no
        rows and only give the shape. The releases are the same.

    Returns
    -------
    Estimate
        ``m`` and ``max_depth`` (public functions of m); ``details``: ``t`` and the
        ``centre``. The depth the mechanism sampled is not part of it (it is not released).
        Not released (``params`` None, ``withheld`` says why) for too few models, a failed
        PTR test or zero volume; the budget is still spent once PTR ran.
    """
    validate_options(OPTIONS, {"lemma": lemma, "accounting": accounting, "centre": centre})
    m = int(m)
    D = max_depth(m)
    t = D // 2
    facts = {"m": m, "max_depth": D, "details": {"t": t}}
    params = ptr_parameters(eps, delta, accounting)
    if m < MIN_MODELS or t < 1:
        return Estimate(params=None, released=False, withheld=Withheld.TOO_FEW_MODELS, **facts)
    c, eps_c = _centre(X, centre, intercept_col, eps, rng, ledger, names, stage,
                       None if engine is None else engine.cells)
    if eps_c:
        eps -= eps_c
        params = ptr_parameters(eps, delta, accounting)
    if c is not None:
        facts["details"]["centre"] = c
    if engine is not None:
        fitter = engine.fit_models
    models = (fit_models if fitter is None else fitter)(X, y, m, rng)
    if c is not None:
        # Re-parametrise each model by its prediction at c: a fixed linear map of each group's
        # own model, so one row still changes one model. Done after the fit, not by fitting on
        # X - c: the two agree for full-rank groups, but with rank-deficient groups (one-hot
        # columns plus an intercept) centring first changes the minimum-norm solutions
        # (nyc_garbage median test R^2 0.44 instead of 0.49).
        models[:, intercept_col] += models @ c
    S = jitter_sort(models, rng)
    return _ptr_release(S, t, params, delta, lemma, c, intercept_col, rng, ledger, stage, facts)
