"""``dp_glm(method="auto")``: the binomial method chosen from public quantities and a released
row count, or a withheld fit when the rows cannot support any.

The choice reads only the released row count ``n_hat`` (passed in by the pipeline, or released
here with :data:`COUNT_SHARE` of the stage's eps through
:func:`dpstats.mechanisms.private_count`, sensitivity 1, eps-DP under add/remove one row), the
number of columns ``p`` (intercept included, after selection) and the stage's ``(eps, delta)``.
Branching on them is post-processing of released values, so the stage is ``(eps, delta)``-DP:
the count's eps plus what the chosen estimator spends (it gets the rest).

The rule (derived from the data-independent simulation of ``benchmarks/glm_auto_rule.py``,
results in ``benchmarks/results/glm_auto_rule.csv``; design note 28):

* ``n_hat < rows_needed(p, eps, delta)``: withhold (:attr:`Withheld.TOO_FEW_ROWS`), spending
  nothing more. Below that many rows, in simulation, not even the easiest problem (nearly
  separable, balanced classes) lets the private fit beat the majority class: what it would
  release is the majority class or noise.
* ``n_hat >= OBJPERT_CONSTANT (p / 6)^OBJPERT_POWER / mu`` (:func:`objpert_rows`; 1000 and
  0.5: about 2,260 / 3,190 / 3,910 / 5,290 released rows for 1 / 3 / 5 / 10 predictors at
  eps 1): objective perturbation (:mod:`.objpert`), whose noise shrinks with the data's
  curvature. Derived on the released coefficients' error, accuracy as a guard
  (``benchmarks/glm_auto_switch.py``, design note "auto's switch re-derived on coefficient
  error"; 61,440 paired fits of both methods through ``dp_glm``, n 2,000-20,000, p 1-10,
  eps 0.5-4, gaussian, skewed and binary covariates): the mean over 1,536 cells of
  log(median RMSE of the chosen method / the better method's) fell from 0.166 (the rule
  derived on accuracy, ``n_hat >= 1500 / mu``, note 28) to 0.093, and on a held-out set
  (other seeds, t(5), correlated and mixed covariates, random coefficient directions) from
  0.152 to 0.058; at n = 5,000, p = 5, eps 1 the median RMSE went from 0.236 (output
  perturbation) to 0.068. Output perturbation's public ridge shrinks the coefficients, which
  costs more the stronger the signal; objective perturbation's private bounds need rows,
  more of them the more columns;
* otherwise output perturbation with a private threshold (:mod:`.outpert`): in the
  simulation (``--part methods``) it was as accurate as DP-GD and more than Frank-Wolfe and
  the Tukey GLM (withheld below about 30,000 rows), without DP-GD's failures.

Both end with the same private threshold, whose candidates include the intercept-only
models, so neither loses to the majority class by more than the exponential mechanism's
error.
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms import private_count
from ..mechanisms.accountant import Ledger
from ..mechanisms.gdp import gdp_mu
from ..validation import OptionSpec, check_delta, check_eps
from . import objpert, outpert
from .outcome import Estimate, Withheld, withheld

__all__ = ["estimate", "early_withhold", "rows_needed", "objpert_rows", "choose",
           "ROWS_CONSTANT", "OBJPERT_CONSTANT", "OBJPERT_POWER", "COUNT_SHARE", "OPTIONS",
           "COMMON"]

#: ``rows_needed = ROWS_CONSTANT / mu`` (``mu`` the Gaussian-DP parameter of the regression
#: budget): the median over p in {2, 4, 8, 16} and eps in {0.5, 1, 2} of ``n_hat mu`` at the
#: smallest n where output perturbation beats the majority class on the easiest simulated
#: problem, nearly separable balanced classes (62.3; benchmarks/glm_auto_rule.py --part
#: rows_sep; 106.6 for a merely strong signal, --part rows). No dependence on p was visible.
ROWS_CONSTANT = 60.0
#: ``n_hat >= OBJPERT_CONSTANT (p / 6)^OBJPERT_POWER / mu`` runs objective perturbation (``p``
#: columns, intercept included): the rule that best matched the more accurate method's
#: coefficients over benchmarks/glm_auto_switch.py's grid (fewest cells failing its accuracy
#: and breakdown guards, then the mean log RMSE ratio; the best constant C per predictor count
#: rose with p: 450, 800, 1500, 1500 for 1, 3, 5, 10). Was 1500 and 0, derived on accuracy.
OBJPERT_CONSTANT = 1000.0
#: The switch's power of the number of columns ``p`` (intercept included), relative to 6.
OBJPERT_POWER = 0.5
#: Share of eps for a row count when the pipeline did not release one.
COUNT_SHARE = 0.05
#: The pipeline keywords :func:`estimate` takes.
COMMON = frozenset({"eps", "delta", "rng", "ledger", "intercept_col", "names", "bounds", "stage",
                    "known_x_bounds", "n_noisy", "engine"})
#: ``method="auto"`` takes no options (they would belong to whichever method it picks).
OPTIONS = OptionSpec(())


def rows_needed(p: int, eps: float, delta: float) -> int:
    """Rows (as a released lower-bound count) that ``method="auto"`` needs for ``p`` columns
    (intercept included) at the regression budget ``(eps, delta)``; public quantities only.
    The current rule does not depend on ``p`` (module docstring).

    >>> rows_needed(3, 1.0, 1e-5), rows_needed(3, 0.5, 1e-5) > rows_needed(3, 2.0, 1e-5)
    (224, True)
    """
    mu = gdp_mu(check_eps(eps), check_delta(delta))
    return int(math.ceil(ROWS_CONSTANT / mu))


def objpert_rows(p: int, eps: float, delta: float) -> int:
    """Released rows from which ``method="auto"`` runs objective perturbation for ``p`` columns
    (intercept included) at the regression budget ``(eps, delta)``:
    ``OBJPERT_CONSTANT (p / 6)^OBJPERT_POWER / mu``; public quantities only.

    >>> objpert_rows(6, 1.0, 1e-5) > objpert_rows(6, 2.0, 1e-5)
    True
    """
    mu = gdp_mu(check_eps(eps), check_delta(delta))
    return int(math.ceil(OBJPERT_CONSTANT * (p / 6.0) ** OBJPERT_POWER / mu))


def choose(n_noisy: float, p: int, eps: float, delta: float) -> tuple[str | None, str]:
    """The method ``"auto"`` runs (None: withhold) and why, from released and public values.

    >>> [choose(n, 6, 0.95, 1e-5)[0] for n in (100.0, 2_000.0, 5_000.0, 50_000.0)]
    [None, 'outpert', 'objpert', 'objpert']
    """
    need = rows_needed(p, eps, delta)
    n_txt = f"{max(n_noisy, 0.0):,.0f}"
    rich = objpert_rows(p, eps, delta)
    if n_noisy >= rich:
        return "objpert", (f"method='auto' chose objective perturbation ('objpert'): the "
                           f"private row count ({n_txt}) is at least {rich:,}, from where its "
                           f"coefficients were closer to the true ones than output "
                           f"perturbation's in simulation at eps = {eps:.3g} and {p} "
                           "columns; its private threshold can fall back to the majority "
                           "class.")
    if not n_noisy >= need:
        return None, (f"method='auto' withheld the fit: the private row count ({n_txt}, a lower "
                      f"bound) is below the {need:,} rows a private logistic regression needs "
                      f"at eps = {eps:.3g} (rule from simulation: below it the private fit "
                      "does not beat predicting the majority class).")
    return "outpert", (f"method='auto' chose output perturbation ('outpert'): the private row "
                       f"count ({n_txt}) is at least the {need:,} rows needed and below the "
                       f"{rich:,} from where objective perturbation's coefficients are "
                       f"closer to the true ones at eps = {eps:.3g} and {p} columns "
                       "(simulation); its private threshold can fall back to the majority "
                       "class.")


def early_withhold(n_noisy: float | None, p: int, eps: float, delta: float) -> Estimate | None:
    """The withheld estimate :func:`estimate` would return, decided by the pipeline from the
    released count before a selection stage spends anything (None: go on). ``eps`` is the
    regression budget :func:`estimate` will get, so both decide alike; reads released and
    public values only.

    >>> early_withhold(10.0, 3, 0.95, 1e-5).withheld.value, early_withhold(1e5, 3, 0.95, 1e-5)
    ('too_few_rows', None)
    """
    if n_noisy is None:
        return None
    method, why = choose(float(n_noisy), p, eps, delta)
    if method is not None:
        return None
    return withheld(p, Withheld.TOO_FEW_ROWS, details={
        "method": None, "why": why, "rows_needed": rows_needed(p, eps, delta),
        "n_noisy": float(n_noisy)})


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None,
             n_noisy: float | None = None, bounds: object = "auto",
             intercept_col: int | None = None, names=None, stage: str = "regression",
             known_x_bounds: dict | None = None, engine=None) -> Estimate:
    """Run the method chosen by :func:`choose`, or withhold (module docstring). ``engine``:
    dask statistics, passed to the chosen estimator (the pipeline releases the row count).

    Returns
    -------
    Estimate
        The chosen estimator's, with ``details["method"]`` (the chosen name, or None when
        withheld), ``details["why"]`` (the sentence a result shows) and
        ``details["rows_needed"]``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(200), rng.uniform(-1, 1, 200)]
    >>> y = (X[:, 1] > 0).astype(float)
    >>> est = estimate(X, y, eps=1.0, delta=1e-5, rng=rng, intercept_col=0)
    >>> est.released, est.withheld.value
    (False, 'too_few_rows')
    """
    eps, delta = check_eps(eps), check_delta(delta)
    eps_rest = eps
    if n_noisy is None:
        eps_n = eps * COUNT_SHARE
        n_noisy = private_count(np.asarray(X).shape[0], eps_n, rng, ledger, stage=f"{stage}: n")
        eps_rest = eps - eps_n
    p = np.asarray(X).shape[1]
    method, why = choose(float(n_noisy), p, eps_rest, delta)
    info = {"method": method, "why": why, "rows_needed": rows_needed(p, eps_rest, delta),
            "n_noisy": float(n_noisy)}
    if method is None:
        return withheld(p, Withheld.TOO_FEW_ROWS, details=info)
    module = objpert if method == "objpert" else outpert
    est = module.estimate(X, y, eps=eps_rest, delta=delta, rng=rng, ledger=ledger,
                          bounds=bounds, intercept_col=intercept_col, names=names,
                          stage=stage, known_x_bounds=known_x_bounds,
                          **({} if engine is None else {"engine": engine}),
                          **({"n_noisy": n_noisy} if method == "objpert" else {}))
    return Estimate(params=est.params, released=est.released, withheld=est.withheld,
                    clip=est.clip, dropped=est.dropped, details={**est.details, **info},
                    inference=est.inference)
