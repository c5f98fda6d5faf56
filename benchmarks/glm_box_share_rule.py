"""The candidate of benchmarks/glm_box_share.py, not adopted (design note "NN"): objective
perturbation's inference share chosen after the released box, from the released box and
log-histogram counts. ``estimate_box`` is :func:`dpstats.estimators.objpert.estimate` (main,
commit 4ed9442) with the bounds released first at their share of the whole budget as at share
0.10, then the share from :func:`box_share` (released values only), then the rest; the script
installs it in place of ``objpert.estimate``. Kept here, out of the library, because the rule
failed its decision (criteria (iii) and (iv)).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpstats.estimators import objpert
from dpstats.estimators.bounded import budgeted_design
from dpstats.estimators.inference.glm import OBJPERT_SHARE
from dpstats.estimators.objpert import BOUNDS_SHARE, OPTIONS
from dpstats.estimators.outcome import Estimate
from dpstats.estimators.outpert import THRESHOLD_SHARE
from dpstats.mechanisms.accountant import Ledger
from dpstats.mechanisms.additive import analytic_gaussian_sigma
from dpstats.mechanisms.gdp import detection_threshold, log_grid_edges
from dpstats.validation import Option, OptionSpec, check_delta, check_eps, validate_options

#: The share rule (:func:`box_share`): the predicted smallest eigenvalue of the information
#: must be at least this many times the noise's spectrum spread ``2 sigma sqrt(k)``.
SHARE_MARGIN = 2.5
#: The share rule's largest share (above it the rule keeps :data:`OBJPERT_SHARE`).
SHARE_CAP = 0.20
#: Weight of the predicted information (the logistic weight's bound ``s (1 - s) <= 1/4``).
SHARE_WEIGHT = 0.25


def column_moments(noisy, sigma: float, mid: float, half: float) -> tuple[float, float]:
    """``(E[x], E[x^2])`` of one column mapped by its box (``(x - mid) / half`` clipped to
    ``[-1, 1]``), read from its released log-histogram ``noisy`` (noise sd ``sigma`` per cell):
    the cells above :func:`~dpstats.mechanisms.gdp.detection_threshold` at their centres.
    Post-processing of released values; ``(0, 1/3)`` (uniform) when no cell clears it.

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 500.0
    >>> [round(v, 3) for v in column_moments(h, 1.0, 0.0, 2.0)]
    [0.0, 0.3]
    """
    c = np.asarray(noisy, dtype=np.float64)
    hit = np.flatnonzero(c > detection_threshold(sigma, c.size))
    if hit.size == 0:
        return 0.0, 1.0 / 3.0
    left, right = log_grid_edges(hit)
    u = np.clip((left / 2.0 + right / 2.0 - mid) / half, -1.0, 1.0)
    w = c[hit] / c[hit].sum()
    return float(w @ u), float(w @ u**2)


def predicted_information(half, mid, hist_rows, hist_sigma: float, n_hat: float,
                          k: int) -> float:
    """:func:`box_share`'s predicted smallest eigenvalue of the Fisher information on the unit
    rows, ``n_hat SHARE_WEIGHT lam_min(M) / k`` (``M``: the second moments of ``(1, x)``, the
    features independent, from :func:`column_moments`); post-processing of released values.

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 500.0
    >>> round(predicted_information([2.0], [0.0], [h], 1.0, 1000.0, 2), 2)
    37.44
    """
    mom = [column_moments(h, hist_sigma, m, s) for h, m, s in zip(hist_rows, mid, half,
                                                                   strict=True)]
    a = np.array([1.0] + [e for e, _ in mom])
    M = np.outer(a, a) + np.diag([0.0] + [max(q - e * e, 0.0) for e, q in mom])
    return float(n_hat) * SHARE_WEIGHT * float(np.linalg.eigvalsh(M)[0]) / k


def box_share(half, mid, hist_rows, hist_sigma: float, n_hat, k: int, eps: float,
              delta: float, *, margin: float = SHARE_MARGIN, cap: float = SHARE_CAP,
              base: float = OBJPERT_SHARE) -> float:
    """Share of the whole ``(eps, delta)`` for the Fisher information, from released values:
    the box (``half``, ``mid`` of the ``k - 1`` kept features), their released log-histograms
    (``hist_rows``, None for a column without one; noise sd ``hist_sigma``), the released
    count ``n_hat``, ``k`` (features plus intercept), ``eps`` and ``delta`` (public).

    Predicted smallest eigenvalue of the information on the unit rows (``u = (1, x) /
    sqrt(k)``, features independent): ``lam = n_hat SHARE_WEIGHT lam_min(M) / k``, ``M`` the
    second moments of ``(1, x)`` from :func:`column_moments`. The smallest share in
    ``[base, cap]`` whose curvature noise (sd ``sigma`` of
    :func:`~dpstats.mechanisms.curvature.release_curvature`, sensitivity 1/4) has
    ``lam >= margin 2 sigma sqrt(k)``; ``base`` when ``base`` already meets it, when ``cap``
    cannot, or when a column has no released histogram (public bounds) or ``n_hat`` is None.
    Derivation: benchmarks/glm_box_share.py (design note "NN").

    >>> from dpstats.mechanisms.gdp import grid_cells, log_grid_index
    >>> h = np.zeros(grid_cells()); h[log_grid_index(np.array([-1.0, 1.0]))] = 5000.0
    >>> box_share([2.0] * 10, [0.0] * 10, [h] * 10, 60.0, 20_000.0, 11, 1.0, 1e-5) > 0.10
    True
    >>> box_share([2.0] * 10, [0.0] * 10, [None] * 10, 60.0, 20_000.0, 11, 1.0, 1e-5)
    0.1
    """
    if n_hat is None or not n_hat > 0 or any(h is None for h in hist_rows):
        return base
    lam = predicted_information(half, mid, hist_rows, hist_sigma, n_hat, k)

    def ok(share: float) -> bool:
        sig = analytic_gaussian_sigma(0.25, eps * share, delta * share)
        return lam >= margin * 2.0 * sig * math.sqrt(k)

    if ok(base) or not ok(cap):
        return base
    lo, hi = base, cap                                  # not ok(lo), ok(hi)
    for _ in range(30):
        mid_s = (lo + hi) / 2.0
        lo, hi = (lo, mid_s) if ok(mid_s) else (mid_s, hi)
    return float(hi)



def _share_of(design, kept, icol, n_noisy, eps: float, delta: float) -> float:
    """:func:`box_share` on the released box and histograms of the kept features."""
    hist = getattr(design.bounds, "hist", None)
    feats = [j for j in kept if j != icol]
    rows = [None if hist is None or j not in hist.cols else hist.noisy[hist.cols[j]]
            for j in feats]
    if icol is None or not feats:
        return OBJPERT_SHARE
    return box_share(design.half[feats], design.mid[feats], rows,
                     0.0 if hist is None else hist.sigma, n_noisy, len(kept), eps, delta,
                     margin=SHARE_MARGIN, cap=SHARE_CAP)




#: ``objpert.OPTIONS`` with ``inference_share`` None allowed (the rule).
BOX_OPTIONS = OptionSpec(tuple(
    Option(o.name, o.kind, o.default, range=o.range, closed=o.closed, allow_none=True, doc=o.doc)
    if o.name == "inference_share" else o for o in OPTIONS.options))


def estimate_box(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None, bounds: object = "auto",
             intercept_col: int | None = None, names=None, stage: str = "regression",
             known_x_bounds: dict | None = None, threshold_share: float = THRESHOLD_SHARE,
             bounds_share: float = BOUNDS_SHARE, inference_share: float = OBJPERT_SHARE,
             n_noisy: float | None = None, engine=None) -> Estimate:
    """:func:`dpstats.estimators.objpert.estimate` with the candidate split (the
    share from :func:`box_share` when ``inference_share`` is None)."""
    opt = validate_options(BOX_OPTIONS, {"threshold_share": threshold_share, "bounds_share":
                                         bounds_share, "inference_share": inference_share})
    eps_all, delta_all, inf = check_eps(eps), check_delta(delta), opt["inference_share"]
    first = OBJPERT_SHARE if inf is None else inf       # the bounds' split: as at share 0.10
    X, y, icol, plan = objpert.checked(X, y, intercept_col, rng, bounds, names, known_x_bounds)
    design, eps_b, delta_b = budgeted_design(
        X, y, plan, method="hist", share=opt["bounds_share"], eps=eps_all * (1.0 - first),
        delta=delta_all * (1.0 - first), q=0.01, rng=rng, ledger=ledger, stage=stage,
        counts_of=engine and engine.counts_of)
    if inf is None:                                     # the share from released values
        kept = [j for j in design.kept if design.half[j] > 2.0**-30 or j == icol]
        inf = _share_of(design, kept, icol, n_noisy, eps_all, delta_all)
    est = objpert.fit_in_box(X.shape[1], y, design, icol, plan, eps_all=eps_all,
                             delta_all=delta_all, inf=inf, eps_b=eps_b, delta_b=delta_b,
                             threshold_share=opt["threshold_share"], n_noisy=n_noisy, rng=rng,
                             ledger=ledger, stage=stage, engine=engine)
    return dataclasses.replace(est, details={**est.details, "inference_share": inf})
