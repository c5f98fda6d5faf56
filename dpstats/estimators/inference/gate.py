"""The release gate of the AdaSSP / Boosted AdaSSP intervals: intervals only where simulation
shows that they cover, with a measured inflation of the bootstrap standard errors.

At small ``n * eps`` two things break the parametric bootstrap's intervals: the private
clipping box (released from a coarse histogram) may cut the data, so the fit targets the
coefficients of clipped data (clipping bias not in the interval), and the noise of the
released Gram matrix and bounds makes the solve non-linear in ways one plug-in does not
reproduce. Neither can be corrected from the released values, so below a threshold the
intervals are not released (standard errors NaN, the summary says why).

**The gate reads only public and released values**: the released row count ``n_hat`` (the
noisy intercept entry of the released Gram matrix), the fit's ``eps`` (public) and the number
of fitted columns ``k`` (public). Its index is ``n_hat * eps**a / k**b`` with
``(a, b) = FORM[kind]``, and the intervals are released when it is at least
``THRESHOLDS[kind]``. Both methods use ``n_hat * eps`` (``(1, 0)``): in the simulation the
number of columns did not make coverage worse (p = 10 covered at n*eps = 20,000 where p = 1
failed at 10,000), so dividing by ``k`` would gate the wrong cells.

**Derivation** (data-independent; ``benchmarks/interval_gate.py``, 100 replications per cell,
Gaussian and skewed covariates, n 2e3..5e4, eps 0.25..4, p 1..10, automatic private bounds;
results in benchmarks/results/coverage_gate.csv): with the standard errors multiplied by
``INFLATION[kind]``, the threshold is set above the largest n*eps of a cell covering < 0.93
and at or below the next cell that covers (see ``derive`` there). BAS: inflation 1.1, every
cell at n*eps 500-10,000 failed (0.08-0.89 at the open gate), every cell at 12,500-50,000
covered (0.935-0.975), threshold 11,875. AdaSSP: with skewed covariates it under-covered
(0.91 at n*eps = 20,000 even with inflation 1.2) and covered only at the largest cell
simulated (50,000: 0.968-0.975 with inflation 1.2), threshold 47,500; without inflation it
under-covered there too. Nothing beyond the simulated range is certified except by
``benchmarks/interval_coverage.py`` (n = 200,000).

**BAS's inflation is 1.05 (issue 16, session 14).** The 1.1 was measured when the bootstrap's
draws had fixed seeds. With per-fit seeds (``ssp.draw_seeds``) the same fits' intervals
(``benchmarks/bas_inflation.py`` on ``interval_coverage.py --raw`` fits at n*eps 20,000 and
80,000; ``interval_gate.py --combos`` at 8,000-16,000, Gaussian and skewed covariates, p 1-10)
covered 0.952-0.972 per cell at 1.05 and 0.961-0.983 at 1.1, whose best coefficient reached
0.987-1.000 at the threshold's cells: nothing needs 1.1 any more, at the threshold or above.
:func:`inflation` (a function of released ``n_hat`` and public values) falls linearly in
``log(n*eps)`` from ``INFLATION`` at the threshold to ``INFLATION_FLOOR`` at
``INFLATION_FULL``; for BAS both are 1.05 (a constant). AdaSSP's stays 1.2 (not re-derived).
Figures: docs/design-notes.md.

**AdaSSP's threshold rose to 390,000 (issue 16, session 9).** The derivation above had
Gaussian errors. AdaSSP releases ``X'y`` of the label clipped to its private range, and a
long error tail (heteroscedastic or t(3) errors) loses its extreme rows to that clip: the
fit targets the clipped label's coefficients. ``benchmarks/bas_clipping_bias.py --method
adassp`` measured that shift in AdaSSP standard errors (heteroscedastic errors, worst
coefficient): 1.25-1.35 at n*eps = 50,000, 1.10 at 80,000, 0.67-0.81 at 100,000, 0.48-0.58 at
160,000-200,000, 0.35 at 400,000-800,000. ``interval_coverage.py --cells tails`` (the
coefficient x1 of the heteroscedastic design): 0.869 at n = 20,000, eps = 4 (n*eps = 80,000,
500 replications; 0.901 with ``cov_type="HC1"``), 0.922 at n = 200,000, eps = 1
(200,000), 0.936 at n = 200,000, eps = 2 (400,000). The threshold sits above the largest
n*eps that under-covered and below the next cell, so that its noisy ``n_hat`` passes
(design note "AdaSSP's intervals and a label's tail").
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["THRESHOLDS", "FORM", "INFLATION", "INFLATION_FLOOR", "INFLATION_FULL", "inflation",
           "gate_index", "method_index", "passes",
           "gate_reason", "GATED", "TUKEY_THRESHOLD", "tukey_index", "tukey_passes",
           "tukey_gate_reason"]

#: Smallest :func:`method_index` at which a method's intervals are released (inf: never).
THRESHOLDS = {"adassp": 390_000.0, "bas": 11_875.0}
#: The method's index is ``n_hat * eps**a / k**b`` with ``(a, b) = FORM[kind]``.
FORM = {"adassp": (1, 0), "bas": (1, 0)}
#: Factor on the bootstrap standard errors of released intervals at the release threshold
#: (measured, see module doc) ...
INFLATION = {"adassp": 1.2, "bas": 1.05}
#: ... falling (linearly in ``log(index)``) to ``INFLATION_FLOOR[kind]`` at the index
#: ``INFLATION_FULL[kind]`` and above (:func:`inflation`).
INFLATION_FLOOR = {"adassp": 1.2, "bas": 1.05}
#: (Both ends 1.05 for BAS since session 14: with per-fit seeds 1.05 covered from n*eps 8,000
#: to 80,000, the threshold's cells included; 1.1 over-covered there. Kept so that a fall
#: measured later is a change of constants.)
INFLATION_FULL = {"adassp": THRESHOLDS["adassp"], "bas": 20_000.0}
#: Prefix of ``Inference.method`` for a fit whose intervals the gate withheld.
GATED = "gated: "


def gate_index(n_hat: float, eps: float, k: int) -> float:
    """``n_hat * eps / k`` (NaN when ``n_hat`` is not finite).

    >>> gate_index(2000.0, 1.0, 5)
    400.0
    """
    n_hat = float(n_hat)
    return n_hat * float(eps) / int(k) if math.isfinite(n_hat) else math.nan


def method_index(kind: str, n_hat, eps, k):
    """``n_hat * eps**a / k**b`` with ``(a, b) = FORM[kind]`` (NaN for a NaN ``n_hat``; works
    elementwise on arrays).

    >>> a, b = FORM["bas"]
    >>> float(method_index("bas", 20000.0, 0.5, 6)) == 20000.0 * 0.5 ** a / 6 ** b
    True
    """
    a, b = FORM[kind]
    return np.asarray(n_hat, dtype=float) * np.asarray(eps, dtype=float) ** a / (
        np.asarray(k, dtype=float) ** b)


def inflation(kind: str, n_hat, eps, k) -> float:
    """The factor on a released fit's bootstrap standard errors: ``INFLATION[kind]`` at (and
    below) the release threshold, ``INFLATION_FLOOR[kind]`` from the index
    ``INFLATION_FULL[kind]`` on, linear in the log of :func:`method_index` between. A function
    of the released ``n_hat`` and public ``eps``, ``k`` only (post-processing).

    >>> inflation("bas", 11_875.0, 1.0, 6), inflation("bas", 1e6, 1.0, 6)
    (1.05, 1.05)
    >>> inflation("adassp", 4e5, 1.0, 6)
    1.2
    """
    hi, lo = float(INFLATION[kind]), float(INFLATION_FLOOR[kind])
    t, full = max(float(THRESHOLDS[kind]), 1.0), float(INFLATION_FULL[kind])
    idx = float(method_index(kind, n_hat, eps, k))
    if hi == lo or not (math.isfinite(idx) and math.isfinite(t)) or idx <= t or full <= t:
        return hi
    if idx >= full:
        return lo
    return hi + (lo - hi) * math.log(idx / t) / math.log(full / t)


def passes(kind: str, n_hat: float, eps: float, k: int) -> bool:
    """Whether the intervals of a ``kind`` fit are released (a function of released ``n_hat``
    and public ``eps``, ``k`` only).

    >>> passes("bas", 2000.0, 1.0, 6), passes("bas", 50000.0, 1.0, 6)
    (False, True)
    """
    idx = float(method_index(kind, n_hat, eps, k))
    return bool(math.isfinite(idx) and idx >= THRESHOLDS[kind])


def gate_reason(kind: str, n_hat: float, eps: float, k: int) -> str:
    """The note of a gated fit (released and public values only)."""
    label = "AdaSSP" if kind == "adassp" else "Boosted AdaSSP"
    head = (f"intervals not released: at n \u2248 {max(float(n_hat), 0.0):,.0f} and eps "
            f"{eps:.3g} with {k} columns the private clipping box may cut the data and the "
            f"intervals would not cover")
    if not math.isfinite(THRESHOLDS[kind]):
        return (f"{head} ({label}'s intervals under-covered in simulation up to the largest "
                f"n*eps/columns simulated, with skewed covariates: benchmarks/interval_gate.py; "
                f"method='bas' gives intervals)")
    a, b = FORM[kind]
    form = "n*eps" + ("" if a == 1 else f"^{a}") + ("" if b == 0 else "/columns" +
                                                     ("" if b == 1 else f"^{b}"))
    need = THRESHOLDS[kind] * k ** b / eps ** a
    idx = float(method_index(kind, n_hat, eps, k))
    where = ("benchmarks/interval_gate.py" if kind == "bas" else "benchmarks/interval_gate.py "
             "and interval_coverage.py --cells tails: a long error tail lost to the label's "
             "range")
    return (f"{head} (release gate: {form} \u2248 {idx:,.0f} is "
            f"below {label}'s threshold of {THRESHOLDS[kind]:,.0f}, derived by simulation in "
            f"{where}); about {need:,.0f} rows at this eps, a larger eps "
            f"or fewer columns give intervals")


#: Smallest ``m * eps / p`` (models, the Tukey stage's eps, columns) at which the Tukey
#: mechanism's intervals are released (see :mod:`dpstats.estimators.inference.tukey`). Below
#: it the window counts' Laplace noise is a large fraction of ``m`` and the mechanism's
#: displacement is far from Gaussian. Derived by benchmarks/tukey_coverage.py (gate open,
#: 40-200 replications per cell): the cell at index 174 (n = 20,000, p = 5, eps = 1) covered
#: 0.930 (worst coefficient 0.87); every cell from 261 up (p = 10: 0.947; eps = 0.5, index
#: 438: 0.946; the centre, 878: 0.959) covered; the threshold is the lowest covering index
#: rounded down to 50.
TUKEY_THRESHOLD = 250.0


#: Fewest rows per column per group at which ``m="auto"`` raises m to open the gate
#: (:data:`dpstats.estimators.tukey.choose_m.GATE_ROWS_PER_COLUMN`; a test keeps them equal):
#: below it the groups' small-sample bias was not calibrated, so the gate stays shut.
GATE_ROWS_PER_COLUMN = 5.0


def tukey_index(m: int, eps: float, p: int) -> float:
    """``m * eps / p`` of a Tukey fit (public: ``m`` is an argument or a function of the
    released row count).

    >>> tukey_index(5555, 1.0, 6) > TUKEY_THRESHOLD
    True
    """
    return float(m) * float(eps) / int(p)


def tukey_passes(m: int, eps: float, p: int) -> bool:
    """Whether a Tukey fit's intervals are released.

    >>> tukey_passes(5555, 1.0, 6), tukey_passes(1000, 1.0, 6)
    (True, False)
    """
    idx = tukey_index(m, eps, p)
    return bool(math.isfinite(idx) and idx >= TUKEY_THRESHOLD)


def tukey_gate_reason(m: int, eps: float, p: int,
                      rows_per_column: float = GATE_ROWS_PER_COLUMN) -> str:
    """The note of a Tukey fit whose intervals the gate withheld (public values only);
    ``rows_per_column``: the fewest rows per column per group the intervals need (the
    logistic Tukey's is 10, :data:`~dpstats.estimators.inference.tukey_glm.GLM_ROWS_PER_COLUMN`).

    >>> tukey_gate_reason(1109, 0.9, 6, 10.0).split("so about ")[1][:7]
    '100,020'
    """
    need = math.ceil(TUKEY_THRESHOLD * p / eps)
    rows = rows_per_column * p * need
    return (f"intervals not released: with {m:,} Tukey models, eps {eps:.3g} and {p} columns "
            f"the private spread of the models would be too noisy to cover (release gate: "
            f"m*eps/columns \u2248 {tukey_index(m, eps, p):,.0f} is below the threshold of "
            f"{TUKEY_THRESHOLD:,.0f} derived by simulation in benchmarks/tukey_coverage.py). "
            f"Intervals need about {need:,} models of at least "
            f"{rows_per_column:g} rows per column each (smaller groups bias the models), "
            f"so about {rows:,.0f} rows at this eps; a larger eps or fewer columns need fewer")
