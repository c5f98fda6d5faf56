"""The Tukey-depth mechanism with propose-test-release (002 Algorithm 2; 003 Lemma 8.5).

1. Each row draws a group label uniformly from {0..m-1}; adding or removing one row changes
   exactly one group and hence one model (shuffle-and-cut would shift every later group).
2. OLS on every group at once (:func:`dpstats._kernels.tukey.group_ols`), and which
   coefficients each group's rows identify (:func:`identified`). By default, when the design
   has a factor, the number of groups identifying the worst-identified coefficient is
   released (Laplace) and, when a level is rare, the rows are partitioned again into fewer,
   larger groups (:mod:`.identify`).
3. A tiny data-independent, scale-relative jitter breaks ties; models are sorted per coordinate,
   each voting only on the coefficients it identifies
   (:func:`dpstats.mechanisms.tukey_em.sort_with_neutral_votes`: same sensitivity-1 depth).
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

import dataclasses

import numpy as np

from ..._kernels.depth import log_depth_volumes, log_exact_volumes, max_depth
from ..._kernels.prepare import prepare
from ..._kernels.tukey_ols import uses_kernel
from ...errors import ValidationError
from ...mechanisms.accountant import Ledger
from ...mechanisms.plan import forfeit
from ...mechanisms.ptr import PAPER_NOTE, ptr_check, ptr_parameters
from ...mechanisms.sampling import random_groups, uniform_jitter
from ...mechanisms.tukey_em import restricted_tukey_em, sort_with_neutral_votes
from ...validation import Option, OptionSpec, validate_options
from ..inference.tukey import TUKEY_INFERENCE_SHARE as INFERENCE_SHARE
from ..inference.tukey import plan_inference, tukey_inference
from ..outcome import Estimate, Withheld
from .centre import CENTRE_SHARE, private_centre
from .identify import (
    ID_SHARE,
    IDENTIFY,
    regrouped_models,
    released_identified,
    resolve_identify,
)

__all__ = ["estimate", "fit", "fit_models", "jitter_sort", "MIN_MODELS", "OPTIONS", "COMMON"]

#: Fewest models for which the test can be run at all (t = floor(floor(m/2)/2) >= 1).
MIN_MODELS = 4
#: Relative and absolute size of the tie-breaking jitter.
_REL_JITTER = 2.0**-40
_ABS_JITTER = 1e-290


def partition_labels(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Independent uniform group labels in {0..m-1}, one per row (data-independent: drawn by
    :func:`dpstats.mechanisms.sampling.random_groups`)."""
    return random_groups(n, m, rng)


def group_fits(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """OLS on every group of rows (labels in ``[0, m)``): an (m, p) array."""
    from ..._kernels.tukey_ols import group_ols  # numpy below a public size, numba above
    return group_ols(np.ascontiguousarray(X, dtype=np.float64),
                     np.ascontiguousarray(y, dtype=np.float64), labels, m)


def fit_models(X: np.ndarray, y: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Partition rows by random labels and fit OLS on every group: an (m, p) array."""
    return group_fits(X, y, partition_labels(X.shape[0], m, rng), m)


def identified(X: np.ndarray, labels: np.ndarray, m: int, c: np.ndarray | None,
               intercept_col: int | None) -> np.ndarray:
    """Which coordinates of each (re-parametrised) model its group's rows identify: (m, p).

    The coordinates are the slopes and, with a centre ``c``, the prediction at ``c`` in place
    of the intercept (``e_intercept + c``), see
    :func:`dpstats._kernels.tukey_identify.group_identified`: a function of each group's own rows.
    """
    from ..._kernels.tukey_identify import group_identified
    F = np.eye(X.shape[1])
    if c is not None:
        F[intercept_col] += c
    return group_identified(np.ascontiguousarray(X, dtype=np.float64), labels, m, F)


def _jitter(models: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = uniform_jitter(models.shape, rng)
    return models + (np.abs(models) * _REL_JITTER + _ABS_JITTER) * u


def jitter_sort(models: np.ndarray, rng: np.random.Generator,
                ident: np.ndarray | None = None, t: int = 0) -> np.ndarray:
    """Break ties with jitter relative to each entry's own scale, then sort every coordinate.

    The jitter of a model depends only on that model and on data-independent uniforms, so each
    jittered model is still a function of its own group alone (the uniforms come from
    :func:`dpstats.mechanisms.sampling.uniform_jitter`). With ``ident`` (which coordinates
    each group identifies) a model votes only where it identifies, plus the neutral votes of
    :func:`dpstats.mechanisms.tukey_em.sort_with_neutral_votes` (restriction ``t``); when
    every coordinate is identified that is the plain sort.
    """
    jittered = _jitter(models, rng)
    if ident is None or ident.all():
        return np.sort(jittered, axis=0)
    return sort_with_neutral_votes(jittered, ident, t)


def _check_centre(value: object, name: str) -> object:
    if isinstance(value, str) and value != "auto":
        raise ValidationError(f"{name} must be 'auto', None or an array of public centres; got "
                              f"{value!r}")
    return value


#: The pipeline keywords :func:`estimate` takes (see :data:`dpstats.estimators.COMMON_KEYWORDS`).
COMMON = frozenset({"eps", "delta", "rng", "ledger", "m", "lemma", "accounting", "intercept_col",
                    "names", "stage", "fitter", "engine", "n_noisy"})
#: The Tukey mechanism's options.
OPTIONS = OptionSpec((
    Option("lemma", "choice", "8.5", choices=("8.5", "3.6"), doc="distance lemma for PTR"),
    Option("accounting", "choice", "swap", choices=("swap", "paper"),
           doc="how one row changes the models, for the PTR accounting"),
    Option("centre", "any", "auto", check=_check_centre,
           doc="'auto' (private medians), None, or an array of public centres"),
    Option("identify", "choice", "auto", choices=IDENTIFY,
           doc="groups vote only on coefficients they identify; 'regroup' also uses fewer "
               "models when a level is rare; 'auto': 'regroup' with a factor, else 'off' "
               "(see estimators/tukey/identify.py)"),
    Option("inference_share", "real", INFERENCE_SHARE, range=(0.0, 1.0), closed=(True, False),
           doc="share of eps for the private spread of the group models (standard errors; "
               "estimators/inference/tukey.py); 0: none"),
))


def _centre(X, centre, intercept_col, eps: float, rng, ledger, names,
            stage: str, cells=None, m: int = 0) -> tuple[np.ndarray | None, float]:
    """The centre of the columns (or None) and the eps its private release took. The cells are
    counted by the numba kernel when the group OLS takes its kernel too (public: ``m``, p)."""
    if intercept_col is None or X.shape[1] <= 1 or centre is None:
        return None, 0.0
    if isinstance(centre, str):
        eps_c = CENTRE_SHARE * eps
        kernel = cells is None and uses_kernel(m, X.shape[1])
        if kernel:
            prepare(("tukey",))     # the compile notice first (public m and p), as group_ols
        return private_centre(X, intercept_col, eps_c, rng, ledger, names=names,
                              stage=stage, cells=cells, kernel=kernel), eps_c
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


def _recentre(models: np.ndarray, m: int, c, intercept_col) -> dict:
    """The public facts of the fit; with a centre ``c``, each model re-parametrised in place by
    its prediction at ``c`` (a fixed linear map of one group's model), after the fit: centring
    before it changes rank-deficient groups' minimum-norm solutions (nyc_garbage median test
    R^2 0.44 instead of 0.49)."""
    D = max_depth(m)
    facts = {"m": m, "max_depth": D, "details": {"t": D // 2}}
    if c is not None:
        facts["details"]["centre"] = c
        models[:, intercept_col] += models @ c
    return facts


def _with_inference(est: Estimate, plan, X, y, models, c, intercept_col, params, n_noisy, rng,
                    ledger, names, ident=None, engine=None, infer=tukey_inference) -> Estimate:
    """``est`` with the standard errors of :mod:`dpstats.estimators.inference.tukey` (stage
    ``"inference"``, ``plan.eps``; after the release: adaptive composition). ``ident``: which
    coordinates each group identifies, and in which the groups vote only where they identify
    (factor designs); ``engine``: a dask frame's rows,
    :meth:`~dpstats.dask.methods.MethodsEngine.tukey_rows`."""
    if not est.released or plan.share <= 0:
        return est
    inf = infer(X, y, models, est.params, c, intercept_col, plan=plan, n_hat=n_noisy,
                          multiplier=params.multiplier, monotone=params.monotone, rng=rng,
                          ledger=ledger, names=names, ident=ident,
                          rows=None if engine is None else engine.tukey_rows())
    return dataclasses.replace(est, inference=inf)


def _group_models(X, y, m: int, c, intercept_col, fit, identify: str, eps_id: float,
                  ptr_args: tuple, rng, ledger, stage: str):
    """``(m, models, identified, voting)``: the group fits on random labels and, unless
    ``identify`` is ``"off"``, which coefficients each group identifies; with ``eps_id`` the
    released identification counts may call for a fresh partition into fewer, larger groups
    (:func:`.identify.regrouped_models`; ``ptr_args = (eps, delta, lemma, accounting)``);
    ``voting``: the coefficients whose groups vote only where identified, a public function
    of the released counts (None: no release)."""
    labels = partition_labels(X.shape[0], m, rng)
    models = fit(X, y, labels, m)
    ident = identified(X, labels, m, c, intercept_col) if identify != "off" else None
    voting = None
    if eps_id:
        noisy = released_identified(ident, eps_id, rng, ledger, stage)
        m_new, votes = regrouped_models(noisy, m, X.shape[1], *ptr_args)
        voting = np.asarray(votes, dtype=bool)     # public: a function of the release
        if m_new < m:      # a fresh partition into fewer, larger groups
            m = m_new
            labels = partition_labels(X.shape[0], m, rng)
            models = fit(X, y, labels, m)
            ident = identified(X, labels, m, c, intercept_col)
        ident[:, ~votes] = True    # too rarely identified for PTR: every group votes there
    return m, models, ident, voting


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, m: int,
             lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
             centre: object = "auto", identify: str = "auto", names=None,
             stage: str = "regression", fitter=None, engine=None,
             inference_share: float = INFERENCE_SHARE, n_noisy=None) -> Estimate:
    """Private linear regression by the Tukey mechanism.

    Parameters
    ----------
    X, y, eps, delta : arrays, float
        Design, label; budget of the stage (:func:`dpstats.mechanisms.ptr.ptr_parameters`).
    m : int
        Number of models (public, or derived from a private row count).
    lemma, accounting : {"8.5", "3.6"}, {"swap", "paper"}
        PTR's distance lemma; ``"swap"`` (default) is sound for the random-label partition
        (one row changes one model), ``"paper"`` reproduces 002/003 and is **not**
        (eps, delta)-DP here (see :func:`dpstats.mechanisms.ptr.ptr_parameters`).
    intercept_col : int or None
        The intercept column (centring needs it).
    identify : {"auto", "regroup", "votes", "off"}
        ``"votes"``: a group votes only on the coefficients its rows identify (a factor level
        absent from it, a column constant in it: :mod:`.identify`); ``"regroup"`` also
        releases how many groups identify the worst-identified coefficient
        (:data:`~.identify.ID_SHARE` of eps, Laplace) and refits on fewer, larger groups when a
        level is rare (:func:`~.identify.regrouped_models`; ``Estimate.m`` is the number used);
        ``"off"``: every group votes on every coefficient (before issue 15); ``"auto"``
        (default): ``"regroup"`` when a column name is a factor's dummy (``g[T.a]``) or
        ``names`` is None, else ``"off"`` (:func:`~.identify.resolve_identify`: public names).
    centre : "auto", None or array
        ``"auto"``: private column medians (:mod:`dpstats.estimators.tukey.centre`), an array:
        a public centre, None: raw columns. Coefficients are on the original scale.
    names, stage : sequence of str, str
        Column names and stage for the ledger.
    fitter : callable, optional
        ``fitter(X, y, labels, m) -> (m, p)`` per-group fits (default :func:`group_fits`, OLS;
        each model must depend on its own group's rows only).
    engine : object, optional
        Dask statistics (:mod:`dpstats.dask`): centre counts, group fits; no rows (and
        ``identify="off"``).
    inference_share, n_noisy : float, float or None
        Share of eps for standard errors (stage ``"inference"``, taken from the mechanism;
        :mod:`dpstats.estimators.inference.tukey`), and the released row count if any.

    Returns
    -------
    Estimate
        ``m``, ``max_depth``; ``details``: ``t``, ``centre`` (not the sampled depth). Withheld
        for too few models, a failed PTR test or zero volume (budget spent once PTR ran).
    """
    return fit(X, y, eps=eps, delta=delta, rng=rng, ledger=ledger, m=m, lemma=lemma,
               accounting=accounting, intercept_col=intercept_col, centre=centre,
               identify=identify, names=names, stage=stage, fitter=fitter, engine=engine,
               inference_share=inference_share, n_noisy=n_noisy)


def fit(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
        rng: np.random.Generator, ledger: Ledger | None = None, m: int,
        lemma: str = "8.5", accounting: str = "swap", intercept_col: int | None = None,
        centre: object = "auto", identify: str = "auto", names=None,
        stage: str = "regression", fitter=None, engine=None,
        inference_share: float = INFERENCE_SHARE, n_noisy=None, inference=None) -> Estimate:
    """:func:`estimate`, with ``inference = (plan, infer)``: the inference's planner and
    procedure (default :func:`~dpstats.estimators.inference.tukey.plan_inference` and
    :func:`~dpstats.estimators.inference.tukey.tukey_inference`; the logistic variant,
    :mod:`.glm`, passes its own)."""
    validate_options(OPTIONS, {"lemma": lemma, "accounting": accounting, "centre": centre,
                               "identify": identify, "inference_share": inference_share})
    m, t = int(m), max_depth(int(m)) // 2
    if m < MIN_MODELS or t < 1:
        return Estimate(params=None, released=False, withheld=Withheld.TOO_FEW_MODELS,
                        m=m, max_depth=max_depth(m), details={"t": t})
    eps_stage = eps
    identify = "off" if engine is not None else resolve_identify(identify, names)
    c, eps_c = _centre(X, centre, intercept_col, eps, rng, ledger, names, stage,
                       None if engine is None else engine.cells, m)
    eps_id = ID_SHARE * eps_stage if identify == "regroup" else 0.0
    plan_fn, infer = (plan_inference, tukey_inference) if inference is None else inference
    plan = plan_fn(inference_share, eps_stage, m, X.shape[1], identify, engine is not None)
    eps -= eps_c + eps_id + plan.eps
    params = ptr_parameters(eps, delta, accounting)
    if engine is not None:     # dask: labels drawn per partition, the group fits on workers
        models, ident, id_share = engine.fit_models(X, y, m, rng), None, None
    else:
        m, models, ident, id_share = _group_models(
            X, y, m, c, intercept_col, group_fits if fitter is None else fitter, identify,
            eps_id, (eps_stage, delta, lemma, accounting), rng, ledger, stage)
    facts = _recentre(models, m, c, intercept_col)
    t = facts["details"]["t"]
    S = jitter_sort(models, rng, ident, t)
    est = _ptr_release(S, t, params, delta, lemma, c, intercept_col, rng, ledger, stage, facts)
    return _with_inference(est, plan, X, y, models, c, intercept_col, params, n_noisy, rng,
                           ledger, names, None if ident is None else (ident, id_share), engine,
                           infer)
