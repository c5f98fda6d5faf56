"""How many rows a model needs: :func:`rows_needed`, a public function of p, eps and delta.

Nothing here reads data or draws noise; every number is a deterministic function of public
quantities (design columns, eps, delta, the default budget shares), derived from the
data-independent simulation of ``benchmarks/auto_rule.py`` and the PTR analysis:

* **Tukey** (``"tukey"``): the released row count must give ``m = SAFETY * models_needed``
  models of at least ``p`` rows each (:mod:`dpstats.estimators.tukey.choose_m`: a Gaussian
  cloud of that many models clears the PTR threshold by 3 Laplace scales), times
  :data:`TUKEY_MARGIN` for model clouds that are heavier than Gaussian. In the simulation the
  PTR test passed in at least 90% of the problems whose row count reached this figure.
* **Bounded methods** (``"bas"``, ``"adassp"``, ``"fw"``, ``"dpgd"``): their private clipping
  bounds come from one Gaussian release of log-scale histograms of every column and the
  response (:func:`dpstats.estimators.bounds_release.histogram_bounds`). The fit is withheld
  when no octave of the response's histogram clears the noise threshold, so the criterion is
  :data:`BOUNDED_SPREAD` octaves' worth of rows at Boosted AdaSSP's octave threshold (the
  response's rows spread over that many octaves can still show one above it); in the
  simulation BAS was released in at least 90% of the problems that reached it.

A model can be *fitted* (released with high probability) at the counts above; it is
*supported* (fitted well enough that selecting fewer terms does not help,
:func:`support_count`) when the Tukey count is reached, or, for the bounded methods, when
``n_hat * eps_reg / p >= BAS_SUPPORT``. When it is not, a selected model of ``p`` columns is
fitted when ``n_hat * eps_reg / p >= BAS_TERM_SUPPORT`` (:func:`term_count`). Both constants
come from the simulation with real-data-like designs of ``benchmarks/auto_rule_real.py``
(skewed, heavy-tailed, collinear and 0/1 columns, factors, a few strong and many weak terms,
skewed, heavy-tailed and heteroscedastic errors; design note 37): BAS on every term lost
0.25 R^2 to OLS on average for ratios in (100, 300] while the best selected model lost 0.34 or
more, and 0.62 in (30, 100] against 0.47 with one term; of the rules "select below B, then
``BAS_TERM_SUPPORT`` rows x eps per column", B = 100 with 1000 had the smallest mean loss
(0.086 against 0.103 for the previous 300 / 300) and was within 0.03 of the best simulated
BAS configuration on 92.4% of the problems.
:func:`tukey_preferred_count` is where ``method="auto"`` prefers Tukey to BAS:
:data:`TUKEY_PREFERRED` times the PTR count (in the simulation Tukey lost to BAS by up to 0.2
on average just above the PTR count with linear means; with misspecified means, groups of up to
30 rows per column and BAS below 12 times it, ``benchmarks/auto_rule_misspec.py``).

``rows_needed`` counts rows of the data; the pipeline compares the *released* row count,
which is a lower bound (:func:`dpstats.mechanisms.private_count`), with
:func:`count_needed`, i.e. without the count's own margin.
"""

from __future__ import annotations

import functools
import math

from ..errors import ValidationError
from ..estimators.tukey.choose_m import SAFETY, models_needed
from ..mechanisms.gdp import CELLS_PER_OCTAVE, detection_threshold, gdp_mu, grid_cells
from ..validation import check_delta, check_eps
from .budget import DEFAULT_SPLIT

__all__ = ["rows_needed", "count_needed", "support_count", "term_count", "tukey_count",
           "tukey_reached", "supports",
           "tukey_preferred_count", "bounded_count", "TUKEY_MARGIN", "TUKEY_PREFERRED",
           "BOUNDED_SPREAD", "BAS_SUPPORT", "BAS_TERM_SUPPORT", "COUNT_ETA", "FEASIBLE_METHODS"]

#: Multiplier on the rows of ``SAFETY * models_needed`` models of ``p`` rows (simulation:
#: PTR pass rate >= 90% above it; benchmarks/auto_rule.py).
TUKEY_MARGIN = 1.0
#: Octaves of the response's histogram that the rows are assumed to spread over (simulation:
#: BAS released in >= 90% of problems above it; benchmarks/auto_rule.py).
BOUNDED_SPREAD = 8.0
#: Multiplier on :func:`tukey_count` from which ``method="auto"`` prefers Tukey to BAS
#: (benchmarks/auto_rule_misspec.py, design note 39: with misspecified means, Tukey with groups
#: of up to 30 rows per column lost 0.009 more than BAS between 4 and 8 x the PTR count and
#: less from 8 x on; of the rules "Tukey from T x", T = 12 had the smallest mean loss over the
#: misspecified problems and their linear control together; 4 before, from linear means only,
#: benchmarks/auto_rule_real.py).
TUKEY_PREFERRED = 12.0
#: Released rows times regression eps per design column at and above which the bounded
#: methods fit every term without selection (benchmarks/auto_rule_real.py: below it, a model
#: of few selected terms was better on average; above it, every term was).
BAS_SUPPORT = 100.0
#: Released rows times regression eps per design column of a *selected* model fitted by a
#: bounded method (benchmarks/auto_rule_real.py: the k rule with the smallest mean loss).
BAS_TERM_SUPPORT = 1000.0
#: Failure probability of the private row count's lower bound (its default ``eta``).
COUNT_ETA = 1e-4
#: Methods :func:`rows_needed` knows.
FEASIBLE_METHODS = ("auto", "tukey", "bas", "adassp", "fw", "dpgd")
#: Boosted AdaSSP's share of mu^2 for its histograms (weights 1, 0.1, 2, 1 of
#: :data:`dpstats.estimators.bas.DEFAULTS`).
_BAS_HIST_SHARE = 1.0 / 4.1


@functools.lru_cache(maxsize=1024)
def tukey_count(p: int, eps_reg: float, delta: float) -> int:
    """Released row count at which the Tukey mechanism's PTR test passes with high
    probability: ``TUKEY_MARGIN * SAFETY * models_needed(p, eps_reg, delta) * p``, made
    non-decreasing in ``p``.

    >>> tukey_count(3, 1.0, 1e-5) <= tukey_count(6, 1.0, 1e-5)
    True
    """
    own = math.ceil(TUKEY_MARGIN * SAFETY * models_needed(p, eps_reg, delta) * p)
    return own if p <= 1 else max(own, tukey_count(p - 1, eps_reg, delta))


def tukey_preferred_count(p: int, eps_reg: float, delta: float) -> int:
    """Released row count from which ``method="auto"`` prefers Tukey to BAS:
    :data:`TUKEY_PREFERRED` times :func:`tukey_count`.

    >>> tukey_preferred_count(6, 1.0, 1e-5) == 12 * tukey_count(6, 1.0, 1e-5)
    True
    """
    return math.ceil(TUKEY_PREFERRED * tukey_count(int(p), float(eps_reg), float(delta)))


def tukey_reached(n_hat: float, p: int, eps_reg: float, delta: float,
                  factor: float = 1.0) -> bool:
    """``n_hat >= ceil(factor * tukey_count(p))``, without computing :func:`tukey_count` for a
    large ``p`` when the count of ``min(p, 40)`` columns (a lower bound: the count is
    non-decreasing in p) already rules it out; the simulation behind :func:`tukey_count` costs
    seconds per column at a few hundred columns.

    >>> tukey_reached(tukey_preferred_count(6, 1.0, 1e-5), 6, 1.0, 1e-5, TUKEY_PREFERRED)
    True
    >>> tukey_reached(3_000, 300, 1.0, 1e-5)
    False
    """
    probe = min(int(p), 40)
    if n_hat < math.ceil(factor * tukey_count(probe, float(eps_reg), float(delta))):
        return False
    return n_hat >= math.ceil(factor * tukey_count(int(p), float(eps_reg), float(delta)))


def supports(n_hat: float, p: int, eps_reg: float, delta: float, method: str = "auto",
             per_column: float = BAS_SUPPORT) -> bool:
    """``n_hat >= support_count(p, eps_reg, delta, method, per_column)``, checking the bounded
    methods' figure first so that ``"auto"`` computes the Tukey count only when needed.

    >>> supports(1e6, 21, 1.0, 1e-5), supports(1_000, 21, 1.0, 1e-5)
    (True, False)
    """
    if method == "tukey":
        return tukey_reached(n_hat, p, eps_reg, delta)
    bounded = max(bounded_count(p, eps_reg, delta), math.ceil(per_column * p / eps_reg))
    if n_hat >= bounded:
        return True
    return method == "auto" and tukey_reached(n_hat, p, eps_reg, delta, TUKEY_PREFERRED)


def bounded_count(p: int, eps_reg: float, delta: float) -> int:
    """Released row count at which the bounded methods' private response bounds are found with
    high probability: :data:`BOUNDED_SPREAD` times the octave threshold of Boosted AdaSSP's
    histogram release (``p`` histograms: the non-intercept columns and the response).

    >>> bounded_count(5, 1.0, 1e-5) < bounded_count(5, 0.5, 1e-5)
    True
    """
    mu = gdp_mu(eps_reg, delta) * math.sqrt(_BAS_HIST_SHARE)
    k = max(int(p), 1)
    sigma = math.sqrt(k) / mu * math.sqrt(CELLS_PER_OCTAVE)
    return math.ceil(BOUNDED_SPREAD * detection_threshold(sigma, k * grid_cells(CELLS_PER_OCTAVE)))


def count_needed(p: int, eps_reg: float, delta: float, method: str = "auto") -> int:
    """The released row count a fit of ``p`` columns needs with ``method`` at the regression
    budget ``(eps_reg, delta)``; ``"auto"``: the smallest over the methods it chooses from.

    >>> count_needed(3, 1.0, 1e-5, "auto") == min(count_needed(3, 1.0, 1e-5, "tukey"),
    ...                                           count_needed(3, 1.0, 1e-5, "bas"))
    True
    """
    if method == "tukey":
        return tukey_count(int(p), float(eps_reg), float(delta))
    if method == "auto":
        return min(tukey_count(int(p), float(eps_reg), float(delta)),
                   bounded_count(p, eps_reg, delta))
    return bounded_count(p, eps_reg, delta)


def support_count(p: int, eps_reg: float, delta: float, method: str = "auto",
                  per_column: float = BAS_SUPPORT) -> int:
    """The released row count at which ``method`` fits ``p`` columns well enough that no
    selection is needed: Tukey's :func:`tukey_count`; for the bounded methods also
    ``per_column * p / eps_reg`` (:data:`BAS_SUPPORT`); ``"auto"``: the smaller of
    :func:`tukey_preferred_count` and the bounded figure.

    >>> support_count(11, 1.0, 1e-5, "bas") >= count_needed(11, 1.0, 1e-5, "bas")
    True
    """
    bounded = max(bounded_count(p, eps_reg, delta), math.ceil(per_column * p / eps_reg))
    if method == "tukey":
        return tukey_count(int(p), float(eps_reg), float(delta))
    if method == "auto":
        return min(tukey_preferred_count(p, eps_reg, delta), bounded)
    return bounded


def term_count(p: int, eps_reg: float, delta: float, method: str = "auto") -> int:
    """The released row count at which ``method`` fits a *selected* model of ``p`` columns:
    :func:`support_count` with :data:`BAS_TERM_SUPPORT` rows x eps per column for the bounded
    methods (the k rule of ``select="auto"``).

    >>> term_count(3, 1.0, 1e-5, "bas") >= support_count(3, 1.0, 1e-5, "bas")
    True
    """
    return support_count(p, eps_reg, delta, method, BAS_TERM_SUPPORT)


def rows_needed(p: int, eps: float, delta: float = 1e-5, method: str = "auto") -> int:
    """Rows of data that ``dp_lm`` needs to fit ``p`` design columns at ``(eps, delta)``.

    A deterministic public function (no data, no privacy cost): the rows at which the method's
    private steps succeed with high probability in the simulation of
    ``benchmarks/auto_rule.py``, plus the margin of the private row count (a lower bound,
    ``ln(1 / (2 * 1e-4)) / eps_n`` rows below the truth). Assumes ``dp_lm``'s default budget
    split without selection and without category levels to discover (5% of eps for the row
    count, the rest for the regression). ``dp_lm(method="auto")`` withholds a fit (and spends
    only the row count's share) when its released row count is below the ``"auto"`` figure
    for the smallest model the formula allows.

    Parameters
    ----------
    p : int
        Number of design columns fitted, the intercept included (``y ~ x1 + x2``: 3).
    eps, delta : float
        Total budget of the fit.
    method : {"auto", "tukey", "bas", "adassp", "fw", "dpgd"}
        ``"tukey"``: rows for the PTR test to pass with high probability (the number of models
        of :func:`dpstats.estimators.tukey.choose_m.choose_m`, with at least p rows each);
        the bounded methods: rows for their private response bounds to be found;
        ``"auto"``: the smaller of the two (what ``method="auto"`` needs).

    Returns
    -------
    int
        Rows needed (always positive).

    Examples
    --------
    >>> import dpstats as dp
    >>> dp.rows_needed(3, eps=1.0) <= dp.rows_needed(3, eps=1.0, method="tukey")
    True
    >>> dp.rows_needed(10, eps=1.0, method="tukey") > dp.rows_needed(10, eps=3.0, method="tukey")
    True
    """
    eps, delta = check_eps(eps), check_delta(delta)
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise ValidationError(f"p must be a positive integer (design columns, the intercept "
                              f"included); got {p!r}")
    if method not in FEASIBLE_METHODS:
        raise ValidationError(f"method must be one of {list(FEASIBLE_METHODS)}; got {method!r}")
    shares = DEFAULT_SPLIT
    eps_n = eps * shares["n"]
    eps_reg = eps - eps_n
    margin = math.log(1.0 / (2.0 * COUNT_ETA)) / eps_n
    return max(1, math.ceil(count_needed(p, eps_reg, delta, method) + margin))
