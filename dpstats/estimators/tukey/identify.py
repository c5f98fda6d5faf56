"""Coefficients that a group's rows do not identify, and fewer, larger groups for rare levels.

A group of about 3p random rows often misses a rare factor level (diamonds' Fair cut, 3% of
rows, is absent from 58% of 18-row groups). Such a group knows nothing about that level's
effect, and, before this module, its minimum-norm model voted 0 for it: the cut effects came
out near 0 against OLS values of 1,100-1,800 (design note 8).

Two remedies, together ``identify="regroup"`` of
:func:`dpstats.estimators.tukey.linear.estimate` (what the default ``"auto"`` uses when the
design has a factor, see :func:`resolve_identify`):

1. **Votes only where identified.** Each group reports which coordinates its rows identify
   (:func:`dpstats._kernels.tukey_identify.group_identified`) and votes only in those, the others
   being neutral (:func:`dpstats.mechanisms.tukey_em.sort_with_neutral_votes`, which states
   the privacy argument: the depth score keeps sensitivity 1 and stays monotone under
   add/remove of one partial model, so PTR and the exponential mechanism are unchanged).
   ``identify="votes"`` stops here.
2. **Fewer models when a level is rare.** The median of group fits that each see one or two
   rows of a level is the median of a few skewed residuals, not their mean (diamonds, no
   privacy, 18-row groups: Good - Fair 806 against OLS 1,120). So the number of groups
   identifying the worst-identified coordinate, ``min_j m_j`` (sensitivity 1: one row changes
   one group's identification set, so every ``m_j`` moves by at most 1), is released with the
   Laplace mechanism (:data:`ID_SHARE` of the stage's eps, charged), and
   :func:`regrouped_models` turns it into a number of models: with ``rho`` the released
   fraction, a level absent from a group with probability ``1 - rho`` has about
   ``c = -m ln(1 - rho)`` rows (Poisson), and ``c / ROWS_PER_LEVEL`` groups give it about
   :data:`ROWS_PER_LEVEL` rows each (absent from ``e^-5 < 1%`` of them). m never falls below
   what PTR needs (:func:`dpstats.estimators.tukey.choose_m.models_needed`, times the same
   safety factor) nor rises. The new partition draws fresh labels; every choice reads only
   public values and the released count.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.accountant import Ledger
from ...mechanisms.additive import laplace
from .choose_m import SAFETY, models_needed

__all__ = ["IDENTIFY", "ID_SHARE", "ROWS_PER_LEVEL", "released_identified", "regrouped_models",
           "resolve_identify"]

#: ``"auto"`` (default, :func:`resolve_identify`); ``"regroup"``: identified votes and fewer
#: models for rare levels; ``"votes"``: identified votes only (no release); ``"off"``: every
#: model votes everywhere (before issue 15).
IDENTIFY = ("auto", "regroup", "votes", "off")
#: Share of the Tukey stage's eps spent on the released identification count.
ID_SHARE = 0.03
#: Expected rows of the rarest level per group that :func:`regrouped_models` aims for: a level
#: is then absent from ``e^-5`` (0.7%) of the groups, and the median of group fits is no longer
#: the median of one or two skewed residuals.
ROWS_PER_LEVEL = 5.0


def resolve_identify(identify: str, names) -> str:
    """``"auto"`` is ``"regroup"`` when a column is a factor's dummy (a coefficient name with
    ``[``, formulaic's ``g[T.level]``) or the names are unknown, else ``"off"``.

    Reads only the public column names. A purely numeric design keeps the old aggregation
    exactly: no eps spent on the count and no probe fit (the probe costs about one more group
    fit: 0.9 s CPU at n = 1e6, p = 20); its groups of about 3p continuous rows identify every
    coefficient anyway. A numeric 0/1 column with rare ones is the case this leaves out:
    ``identify="regroup"`` covers it.

    >>> resolve_identify("auto", ["Intercept", "carat", "cut[T.Good]"])
    'regroup'
    >>> resolve_identify("auto", ["Intercept", "x"]), resolve_identify("votes", ["x"])
    ('off', 'votes')
    """
    if identify != "auto":
        return identify
    if names is None or any("[" in str(name) for name in names):
        return "regroup"
    return "off"


def released_identified(ident: np.ndarray, eps: float, rng: np.random.Generator,
                        ledger: Ledger | None, stage: str) -> float:
    """``min_j #{groups identifying coordinate j} + Laplace(1/eps)`` (charged: eps, 0).

    Sensitivity 1 under add/remove one row: the row changes one group, whose identification set
    may change, so each count moves by at most 1 and so does their minimum.
    """
    count = float(np.asarray(ident, dtype=bool).sum(axis=0).min())
    return laplace(count, 1.0, eps, rng, ledger, stage=stage,
                   what="fewest Tukey groups identifying a coefficient")


def regrouped_models(noisy_count: float, m: int, p: int, eps_tukey: float, delta: float,
                     lemma: str = "8.5", accounting: str = "swap") -> tuple[int, bool]:
    """Number of models after the identification release, and whether identified votes can
    be used with it (public functions of the release).

    ``m1 = min(m, max(c / ROWS_PER_LEVEL, SAFETY * m_needed))`` with ``c = -m ln(1 - rho)``.
    Identified votes need a long enough depth ladder in the worst-identified coordinate: its
    expected ``m1 (1 - exp(-c / m1))`` identifying groups must reach ``m1 / 4 + m_needed / 2``:
    its ladder then rises about ``m_needed / 4`` above the restriction ``t = m1 / 4`` (its
    neutral votes give it ``H ~ m1 / 8``, its own models half their number), as a fully
    identified Gaussian cloud of ``m_needed`` models does; otherwise PTR would almost surely
    fail, and the fit (on the ``m1`` groups) falls back to every group voting (the aggregation
    before issue 15: released, but the rare level's effect is pulled towards 0). Diamonds'
    first 5,000 rows at eps = 2 (Fair 275 rows, 480 models, about 160 groups identifying):
    PTR failed 6/6 with identified votes, passes 4/6 with the fallback.

    >>> regrouped_models(1000.0, 3000, 6, 10.0, 1e-5)
    (244, True)
    >>> regrouped_models(2999.0, 3000, 6, 10.0, 1e-5)
    (3000, True)
    >>> regrouped_models(160.0, 480, 6, 2.0, 1e-5)
    (456, False)
    """
    rho = min(max(noisy_count / m, 0.0), 1.0)
    if rho >= 1.0 - math.exp(-ROWS_PER_LEVEL):
        return m, True
    rows = -m * math.log1p(-rho)                     # Poisson: P(absent) = exp(-rows / m)
    needed = models_needed(p, eps_tukey, delta, lemma, accounting)
    m1 = int(min(m, max(math.ceil(rows / ROWS_PER_LEVEL), math.ceil(SAFETY * needed))))
    identifying = m1 * -math.expm1(-rows / m1)
    return m1, identifying >= m1 / 4 + needed / 2
