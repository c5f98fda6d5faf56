"""Experiments: run method configurations over data sets, trials and budgets; tidy results.

**For experiments, not for releases.** Every fit here is seeded (``random_state`` is derived
from ``seed``), so runs are reproducible and each result says it is not fit for release; the
test-set metric reads the held-out rows directly and is not private. Use it to compare methods
on data you may look at, as the papers' evaluations do.

>>> import dpstats as dp
>>> df = dp.lab.experiments.run({"tukey": {"select": None}}, "nba", trials=2, eps=[1.0, 4.0])
>>> list(df.columns)
['dataset', 'method', 'trial', 'eps', 'delta', 'metric', 'value', 'released', 'private', 'time']
>>> df.shape
(4, 10)
"""

from __future__ import annotations

import inspect
import math
import numbers
import time
import warnings
import zlib
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ..errors import DPStatsError, NotPrivateWarning, ValidationError
from ..validation import check_choice, check_delta, check_eps

__all__ = ["run", "summarise", "quantile", "COLUMNS"]

#: Columns of the tidy frame returned by :func:`run`.
COLUMNS = ["dataset", "method", "trial", "eps", "delta", "metric", "value", "released",
           "private", "time"]
#: Runs with at least this many fits show a progress bar by default (when tqdm is installed).
PROGRESS_MIN_FITS = 50
_CONTROLLED = ("eps", "delta", "random_state", "budget")


def _key(text: str) -> int:
    """A stable integer for a name (seeds must not depend on list order or Python's hash)."""
    return zlib.crc32(text.encode())


def _fitters() -> dict[str, Callable]:
    from ..api.glm import dp_glm
    from ..api.lm import dp_lm
    return {"lm": dp_lm, "glm": dp_glm}


def _configs(configs) -> list[tuple[str, object]]:
    """Normalise ``configs`` to ``[(name, dict-or-callable)]`` and check every entry."""
    items = list(configs.items()) if isinstance(configs, Mapping) else None
    if items is None:
        try:
            items = [tuple(c) for c in configs]
        except TypeError:
            items = None
    if not items or any(len(c) != 2 or not isinstance(c[0], str) for c in items):
        raise ValidationError(
            "configs must be a non-empty dict {name: spec} or a list of (name, spec) pairs; "
            "a spec is a dict of dp_lm keyword arguments (add 'model': 'glm' for dp_glm) or a "
            "callable fit(train, *, formula, eps, delta, random_state) -> result")
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ValidationError("configs: method names must be unique; rename the duplicates")
    fitters = _fitters()
    for name, spec in items:
        if callable(spec):
            continue
        if not isinstance(spec, Mapping):
            raise ValidationError(f"configs[{name!r}] must be a dict of dp_lm arguments or a "
                                  f"callable; got {type(spec).__name__}")
        model = spec.get("model", "lm")
        if model not in fitters:
            raise ValidationError(f"configs[{name!r}]['model'] must be 'lm' or 'glm'; got "
                                  f"{model!r}")
        bad = sorted(set(spec) & set(_CONTROLLED))
        if bad:
            raise ValidationError(f"configs[{name!r}] sets {bad}; the experiment controls "
                                  "these: pass eps=/delta=/seed= to run() instead")
        params = inspect.signature(fitters[model]).parameters
        unknown = sorted(set(spec) - set(params) - {"model"})
        if unknown:                  # allowed only as options of the chosen method
            _check_options(name, model, spec, unknown, params)
    return items


def _check_options(name: str, model: str, spec: Mapping, unknown: list, params) -> None:
    """Keys of a config that are not dp_lm/dp_glm arguments must be options of its method."""
    from ..estimators import METHODS
    from ..pipeline.request import GLM_METHODS, check_options
    method = spec.get("method", params["method"].default)
    opts = {key: spec[key] for key in unknown}
    try:
        check_choice(method, METHODS if model == "lm" else GLM_METHODS, "method")
        check_options(model, method, opts, 1e-5)
    except DPStatsError as err:
        raise ValidationError(f"configs[{name!r}]: {unknown} are not arguments of dp_{model} "
                              f"or options of method={method!r} ({err}); see "
                              f"help(dpstats.dp_{model})") from None


def _datasets(datasets) -> list[tuple[str, pd.DataFrame, str]]:
    """Normalise ``datasets`` to ``[(name, frame, formula)]``; bundled names load lazily."""
    from .. import datasets as bundled
    if isinstance(datasets, str):
        datasets = [datasets]
    if isinstance(datasets, Mapping):
        items = list(datasets.items())
    elif isinstance(datasets, list | tuple) and all(isinstance(d, str) for d in datasets):
        items = [(d, d) for d in datasets]
    else:
        items = []
    out = []
    for name, value in items:
        if isinstance(value, str):
            info = bundled.describe(value)       # raises for unknown names
            out.append((name, bundled.load(value), info["formula"]))
        elif (isinstance(value, tuple) and len(value) == 2
              and isinstance(value[0], pd.DataFrame) and isinstance(value[1], str)):
            out.append((name, value[0], value[1]))
        else:
            raise ValidationError(
                f"datasets[{name!r}] must be a bundled name (see dpstats.datasets.names()) or "
                "a (DataFrame, formula) pair, e.g. {'mine': (df, 'y ~ .')}")
    if not out:
        raise ValidationError("datasets must be a bundled name, a list of names, or a dict "
                              "{name: bundled name or (DataFrame, formula)}")
    return out


def _check_run_args(trials, test_size, eps, delta, seed) -> tuple[list[float], float]:
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral) or trials < 1:
        raise ValidationError(f"trials must be an integer >= 1; got {trials!r}")
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) \
            or not 0.0 < float(test_size) < 1.0:
        raise ValidationError(f"test_size must be a fraction in (0, 1) such as 0.1; got "
                              f"{test_size!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValidationError(f"seed must be a non-negative integer; got {seed!r}")
    eps_list = [eps] if isinstance(eps, numbers.Real) else list(eps)
    if not eps_list:
        raise ValidationError("eps must be a number or a non-empty list of numbers")
    return [check_eps(e) for e in eps_list], check_delta(delta)


def _progress(total: int, progress: bool | None):
    if progress is False or (progress is None and total < PROGRESS_MIN_FITS):
        return None
    try:
        from tqdm import tqdm
    except ImportError as err:
        if progress is None:
            return None
        raise ImportError("progress=True needs tqdm: pip install dpstats[plot] "
                          "(or pip install tqdm)") from err
    return tqdm(total=total, desc="dpstats fits", unit="fit")


def _split(n: int, test_size: float, seed: int, dataset: str, trial: int):
    """Row positions of a seeded random train/test split (same for every method and eps)."""
    rng = np.random.default_rng([seed, _key(dataset), trial])
    perm = rng.permutation(n)
    n_test = min(max(1, round(test_size * n)), n - 1)
    return perm[n_test:], perm[:n_test]


def _fit(spec, train, formula, eps, delta, random_state):
    if callable(spec):
        return spec(train, formula=formula, eps=eps, delta=delta, random_state=random_state)
    kwargs = {k: v for k, v in spec.items() if k not in ("model", "formula")}
    fitter = _fitters()[spec.get("model", "lm")]
    with warnings.catch_warnings():
        # non-private baselines (method="ols", accounting="paper") warn on every fit; the
        # frame's ``private`` column says it once
        if kwargs.get("method") == "ols" or kwargs.get("accounting") == "paper":
            warnings.simplefilter("ignore", NotPrivateWarning)
        return fitter(spec.get("formula", formula), train, eps=eps, delta=delta,
                      random_state=random_state, **kwargs)


def _score(fit, test, metric) -> tuple[str, float]:
    if callable(metric):
        name = getattr(metric, "__name__", "metric")
        return name, (float(metric(fit, test)) if fit.released else math.nan)
    name = "accuracy" if getattr(fit, "family", None) else "r2"
    if not fit.released:
        return name, (-math.inf if name == "r2" else math.nan)
    return name, float(fit.score(test))


def run(configs, datasets, *, trials: int = 10, test_size: float = 0.1, eps=1.0,
        delta: float = 1e-5, seed: int = 0, metric="auto",
        progress: bool | None = None) -> pd.DataFrame:
    """Fit every configuration on random train/test splits of every data set; tidy results.

    For experiments only: fits are seeded from ``seed`` (reproducible, not fit for release)
    and the metric is computed on held-out rows without privacy.

    Parameters
    ----------
    configs : dict or list of (str, spec)
        Method name -> spec. A spec is a dict of :func:`dpstats.dp_lm` keyword arguments
        (``{"method": "adassp", "select": "kendall", "k": 5}``); ``"model": "glm"`` fits
        :func:`dpstats.dp_glm` instead and ``"formula"`` overrides the data set's formula. Or a
        callable ``fit(train, *, formula, eps, delta, random_state) -> result`` returning an
        object with ``released`` and ``score(test)``. ``eps``, ``delta``, ``random_state`` and
        ``budget`` are set by the experiment and may not appear in a spec.
    datasets : str, list of str or dict
        Bundled names (their suggested formula from :func:`dpstats.datasets.describe`), or a
        dict ``{name: bundled name or (DataFrame, formula)}``.
    trials : int, default 10
        Random splits per data set; every method and eps sees the same split in a trial.
    test_size : float, default 0.1
        Share of rows held out for the metric.
    eps : float or list of float
        Total budget of each fit; a list gives one fit per value (utility-vs-eps curves).
    delta : float, default 1e-5
    seed : int, default 0
        Master seed. Splits depend on (seed, data set name, trial); a fit's noise on (seed,
        data set, trial, method name, eps), so adding a method or data set changes nothing
        else.
    metric : "auto" or callable
        ``"auto"``: ``fit.score(test)``, i.e. R^2 for ``dp_lm`` (``metric="r2"``) and accuracy
        for ``dp_glm`` (``metric="accuracy"``). A callable ``metric(fit, test) -> float`` is
        recorded under its ``__name__``.
    progress : bool or None
        Show a tqdm progress bar. None (default): when there are at least 50 fits and tqdm is
        installed; True: always (needs tqdm: ``pip install dpstats[plot]``); False: never.

    Returns
    -------
    pandas.DataFrame
        One row per fit, columns :data:`COLUMNS`: ``dataset, method, trial, eps, delta,
        metric, value, released, private, time`` (wall seconds; a first fit may include numba
        compilation: compare medians). A fit that released nothing (a failed PTR) has
        ``released=False`` and, as in the papers, ``value=-inf`` for R^2 (NaN otherwise).
        ``private`` is False for non-private baselines (``method="ols"``, and the Tukey
        mechanism with ``accounting="paper"``).

    Raises
    ------
    ValidationError
        Bad configs, data sets or arguments (checked before anything is fitted). A
        :class:`~dpstats.errors.DPStatsError` raised by a fit is re-raised naming the data
        set, method and trial.
    """
    eps_list, delta = _check_run_args(trials, test_size, eps, delta, seed)
    if not (metric == "auto" or callable(metric)):
        raise ValidationError(f"metric must be 'auto' or a callable metric(fit, test); got "
                              f"{metric!r}")
    items = _configs(configs)
    data = _datasets(datasets)
    bar = _progress(len(data) * trials * len(items) * len(eps_list), progress)
    rows = []
    try:
        for dname, frame, formula in data:
            for trial in range(trials):
                tr, te = _split(len(frame), float(test_size), seed, dname, trial)
                train, test = frame.iloc[tr], frame.iloc[te]
                for mname, spec in items:
                    for e in eps_list:
                        rows.append(_one(dname, mname, spec, train, test, formula, trial, e,
                                         delta, seed, metric))
                        if bar is not None:
                            bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows, columns=COLUMNS)


def _one(dname, mname, spec, train, test, formula, trial, e, delta, seed, metric) -> dict:
    state = np.random.SeedSequence([seed, _key(dname), trial, _key(mname), _key(repr(e))])
    t0 = time.perf_counter()
    try:
        fit = _fit(spec, train, formula, e, delta, state)
    except DPStatsError as err:
        raise type(err)(f"experiment {mname!r} on {dname!r} (trial {trial}, eps={e:g}): "
                        f"{err}") from err
    seconds = time.perf_counter() - t0
    name, value = _score(fit, test, metric)
    return {"dataset": dname, "method": mname, "trial": trial, "eps": e, "delta": delta,
            "metric": name, "value": value, "released": bool(fit.released),
            "private": bool(getattr(fit, "private", True)), "time": seconds}


def quantile(values, q: float) -> float:
    """Linear-interpolation quantile that treats ``-inf`` (a failed release) as a value.

    Interpolating towards ``-inf`` gives ``-inf`` (NumPy would give NaN); NaN is ignored.

    >>> quantile([-math.inf, 0.5, 0.7, 0.9], 0.5), quantile([-math.inf, 0.5, 0.7], 0.25)
    (0.6, -inf)
    """
    a = np.sort(np.asarray(values, dtype=np.float64))
    a = a[~np.isnan(a)]
    if a.size == 0:
        return math.nan
    pos = q * (a.size - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if lo == hi:
        return float(a[lo])
    if math.isinf(a[lo]) or math.isinf(a[hi]):
        return float(a[lo]) if math.isinf(a[lo]) else float(a[hi])
    return float(a[lo] + (pos - lo) * (a[hi] - a[lo]))


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles, release rate and median time per (dataset, method, eps, metric).

    Failed releases count as ``-inf`` (R^2) in the quantiles, so a method that fails in more
    than half the trials has median ``-inf``, as in the papers' tables.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`run`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, method, eps, metric, median, q25, q75, released, time, trials``.
    """
    missing = set(COLUMNS) - set(getattr(df, "columns", ()))
    if missing:
        raise ValidationError(f"summarise(df) needs the output of experiments.run; missing "
                              f"columns {sorted(missing)}")
    g = df.groupby(["dataset", "method", "eps", "metric"], sort=False)
    out = g["value"].agg(median=lambda v: quantile(v, 0.5), q25=lambda v: quantile(v, 0.25),
                         q75=lambda v: quantile(v, 0.75))
    out["released"] = g["released"].mean()
    out["time"] = g["time"].median()
    out["trials"] = g.size()
    return out.reset_index()
