"""Choosing the number of Tukey models from public quantities and a private row count.

Two forces pull on m. The PTR test wants *many* models: its distance statistic compares volumes
of depth regions, and it passes only once m is large compared with p and 1/eps. Utility wants
*large groups*: each group's OLS on ``n / m`` rows is a small-sample estimate, and the median of
the group estimates is not the full-data estimate. With a linear mean the gap is only noise
(groups of exactly p rows are often rank deficient and their minimum-norm models shrink towards
zero; about three rows per column avoid that). Under misspecification (a nonlinear mean in a
skewed column, a response bounded on one side, a rare 0/1 column with heteroscedastic errors)
it is a bias: a small group's OLS estimates a leverage-weighted small-sample version of the
population projection, the distribution of the group estimates is skewed, and their median
stays away from their mean however many groups there are; it shrinks only as groups grow.

Because the PTR statistic is a ratio of box volumes, it does not depend on the scale of any
coordinate, only on the shape of the cloud of models. :func:`models_needed` therefore simulates
a data-independent Gaussian cloud of m models in p dimensions (a function of p, eps and delta
only: no data, no privacy cost) and finds the smallest m whose distance clears the PTR threshold
with a margin. :func:`choose_m` then takes

    m = min(max(n_hat / (R p),  min(needed, n_hat / p)),  CAP_MULTIPLE * needed),
    needed = safety * m_needed,   R = ROWS_PER_COLUMN,

so the released row count ``n_hat`` and public p, eps, delta are all it reads: the models PTR
needs (with its safety margin), in groups as large as the rows allow, up to ``R`` rows per model
per column; more models only beyond ``R p needed`` rows. ``R`` comes from the data-independent
simulation of misspecified regressions in ``benchmarks/auto_rule_misspec.py`` (design note 39;
it was 3 before). The cap (:data:`CAP_MULTIPLE`, from ``benchmarks/tukey_models_cap.py``): once
m is far above what PTR needs, more models no longer make the release more accurate, while the
groups get smaller; it now binds only above ``R p CAP_MULTIPLE needed`` rows. m never exceeds
:data:`MAX_MODELS`: at a tiny eps the released count can be far above any real n.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..._kernels.depth import log_depth_volumes, log_exact_volumes, max_depth
from ...mechanisms.ptr import distance_to_unsafety, ptr_parameters

__all__ = ["choose_m", "models_needed", "ROWS_PER_COLUMN", "SAFETY", "MAX_MODELS", "cap_models",
           "CAP_MULTIPLE", "models_cap", "GATE_ROWS_PER_COLUMN", "GATE_INDEX", "GATE_MARGIN",
           "gate_models"]

#: Most rows per model per regression column once PTR's need is met: groups grow up to this
#: before the number of models does (benchmarks/auto_rule_misspec.py, design note 39: under a
#: misspecified mean Tukey's loss to OLS shrank with the group size, and did not grow under a
#: linear one; 3 before, from the ten regression files).
ROWS_PER_COLUMN = 30.0
#: Fewest rows per model per column ``choose_m`` accepts to open the intervals' release gate:
#: when the rule above gives fewer models than the gate needs (``m eps / p >= TUKEY_THRESHOLD``)
#: and the rows allow groups of at least this size, m is raised to what the gate needs (design
#: note 42). Between the 3 rows per column under which
#: the intervals were calibrated and the 30 of the misspecification rule.
GATE_ROWS_PER_COLUMN = 5.0
#: The intervals' release gate, ``m eps / p >= GATE_INDEX``: the committed
#: :data:`dpstats.estimators.inference.gate.TUKEY_THRESHOLD` (a test keeps them equal; a
#: separate constant so that a coverage study which opens the gate does not change m).
GATE_INDEX = 250.0
#: ``choose_m`` aims at this multiple of the gate's index, not the gate itself: at the gate
#: (m = 1,579 at n = 1e5, p = 5, eps = 1) the intervals covered 0.942 (worst coefficient
#: 0.918, 200 reps); at twice it, see design note 42. Where groups of
#: :data:`GATE_ROWS_PER_COLUMN` rows per column allow less than the margin but at least the
#: gate, m is the most such groups (as the logistic rule; it was the gate itself: at 1e6 x 20
#: the window counts' noise then withheld 7% of the coefficients' and most intercepts'
#: intervals, design note "The Tukey intervals at 1e6 x 20: the counts' noise").
GATE_MARGIN = 2.0
#: Multiplier on the simulated number of models, for heavier-than-Gaussian real model clouds.
SAFETY = 1.5
#: Most Tukey models dpstats fits (a public cap; reached by data sets of more than
#: 3 p MAX_MODELS rows, or by a row count released at a tiny eps).
MAX_MODELS = 2 ** 20
#: Most models ``choose_m`` takes, as a multiple of what PTR needs (``SAFETY * models_needed``):
#: beyond it the groups grow instead (benchmarks/tukey_models_cap.py, design note 34).
CAP_MULTIPLE = 64
#: Margin over the PTR threshold, in units of the Laplace scale 1/eps_ptr.
_MARGIN_SCALES = 3.0


def _gaussian_distance(m: int, p: int, multiplier: float, log_delta_lemma: float, lemma: str,
                       seed: int = 12345) -> int:
    rng = np.random.default_rng(seed)  # data-independent simulation, not a release
    S = np.sort(rng.standard_normal((m, p)), axis=0)
    logV = log_depth_volumes(S)
    t = max_depth(m) // 2
    return distance_to_unsafety(logV, log_exact_volumes(logV), t, multiplier, lemma=lemma,
                                log_delta_lemma=log_delta_lemma)


@functools.lru_cache(maxsize=256)
def models_needed(p: int, eps_tukey: float, delta: float, lemma: str = "8.5",
                  accounting: str = "swap", m_max: int = 2_000_000) -> int:
    """Smallest m for which Gaussian-shaped models pass PTR with a margin (a public function).

    Parameters
    ----------
    p : int
        Number of regression columns.
    eps_tukey, delta : float
        Budget of the Tukey stage (split in halves for PTR and the exponential mechanism).
    """
    prm = ptr_parameters(eps_tukey, delta, accounting)
    need = prm.threshold + _MARGIN_SCALES / prm.eps_ptr

    def ok(m: int) -> bool:
        return _gaussian_distance(m, p, prm.multiplier, prm.log_delta_lemma, lemma) >= need

    lo, hi = 8, 64
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > m_max:
            return m_max
    while hi - lo > max(2, hi // 50):
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def choose_m(n_noisy: float, p: int, eps_tukey: float, delta: float, lemma: str = "8.5",
             accounting: str = "swap") -> int:
    """Number of models for ``m="auto"`` from the private row count and public p, eps, delta.

    >>> choose_m(20_000, 6, 1.0, 1e-5) == math.ceil(1.5 * models_needed(6, 1.0, 1e-5))
    True
    >>> choose_m(100_000, 6, 1.0, 1e-5) == gate_models(6, 1.0)   # opens the intervals' gate
    True
    >>> choose_m(1_000_000, 6, 1.0, 1e-5)   # 30 rows per model per column
    5555
    >>> choose_m(1e8, 6, 1.0, 1e-5) == models_cap(6, 1.0, 1e-5)
    True
    """
    if not (n_noisy > 0):
        return 0
    needed = math.ceil(SAFETY * models_needed(p, eps_tukey, delta, lemma, accounting))
    m = max(n_noisy / (ROWS_PER_COLUMN * p), min(needed, n_noisy / p))
    room = n_noisy / (GATE_ROWS_PER_COLUMN * p)    # the most models of 5 rows per column
    if room >= gate_models(p, eps_tukey, 1.0):     # the gate with its margin, or as near it
        m = max(m, min(room, gate_models(p, eps_tukey)))     # as such groups allow
    return cap_models(min(m, CAP_MULTIPLE * needed))


def gate_models(p: int, eps_tukey: float, margin: float = GATE_MARGIN) -> int:
    """Models at which Tukey's intervals pass the release gate with a margin
    (``m eps / p >= margin * threshold``, :func:`dpstats.estimators.inference.gate.tukey_passes`;
    public).

    >>> gate_models(6, 1.0), gate_models(6, 1.0, margin=1.0)
    (3000, 1500)
    """
    return math.ceil(margin * GATE_INDEX * p / eps_tukey)


def models_cap(p: int, eps_tukey: float, delta: float, lemma: str = "8.5",
               accounting: str = "swap") -> int:
    """Most models :func:`choose_m` takes for p columns at this budget (a public function):
    :data:`CAP_MULTIPLE` times what PTR needs, and at most :data:`MAX_MODELS`.

    >>> models_cap(6, 1.0, 1e-5) == 64 * math.ceil(1.5 * models_needed(6, 1.0, 1e-5))
    True
    """
    needed = math.ceil(SAFETY * models_needed(p, eps_tukey, delta, lemma, accounting))
    return cap_models(CAP_MULTIPLE * needed)


def cap_models(m: float) -> int:
    """``floor(m)`` capped at :data:`MAX_MODELS` (``m`` may be huge or infinite).

    >>> cap_models(12.7), cap_models(float("inf")) == MAX_MODELS
    (12, True)
    """
    return int(math.floor(min(m, MAX_MODELS)))
