"""Private Frank-Wolfe (:mod:`dpstats.estimators.fw`) on a dask frame: one pass per gradient.

Distributed form. The in-memory loop keeps the linear predictor ``u = X w`` of every row; on
dask no per-row state is kept between passes: each pass (:class:`FWPass`) maps a partition's
rows into the released box exactly as :func:`dpstats.estimators.bounded.bounded_design` does
(:meth:`~dpstats.dask.passes.GramPass.mapped`), recomputes ``u = X w`` from the current
iterate ``w`` (a released value: every vertex choice is a release) and returns the sum-loss
gradient ``g = X' l'(u, y)`` (d numbers) and, at a screening iteration, the rule's other
components ``B = u' l'(u, y)``, ``||u||^2`` and (first screening only) the column squared norms.
These are exactly the statistics the in-memory releases read, so the vertex choices (the same
exponential mechanism, same sensitivity, same per-iteration eps) and the screening releases
(the same Gaussian mechanism on the same components) are the in-memory ones. Both sum on the
same grids (:mod:`dpstats.estimators.fw_sums`, exact: the same bits for any partitioning); only
``u`` differs in its last bits (recomputed from ``w`` here, updated in memory).

Passes: one per Frank-Wolfe iteration (``T``, default 100), plus one after each screening
iteration that zeroes a feature (the gradient must then be recomputed; a screening iteration
that zeroes nothing reuses its pass for the next vertex choice), after the first pass that
releases the bounds (shared with the row count and histograms of every dask fit).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..estimators.fw_sums import gradient_sum, norm_sums, screen_sums
from ..estimators.screening import PrivateScreener, derivative_bound
from .passes import GramPass, reduce_frame

__all__ = ["FWPass", "frank_wolfe", "ComponentScreener"]


def _derivative(u: np.ndarray, t: np.ndarray, loss: str) -> np.ndarray:
    """Per-row ``l'(u, y)`` (:mod:`dpstats._kernels.frank_wolfe`; logistic label ``t = +-1``)."""
    if loss == "squared":
        return u - t
    z = t * u
    return -t * 0.5 * (1.0 - np.tanh(0.5 * z))     # -t / (1 + exp(t u)), no overflow


@dataclass(frozen=True)
class FWPass:
    """One Frank-Wolfe gradient at ``w`` on a partition (module docstring); ``screen`` adds
    ``B`` and ``||u||^2``, ``norms`` the column squared norms."""

    rows: GramPass
    loss: str
    w: np.ndarray
    radius: float
    screen: bool = False
    norms: bool = False

    def __call__(self, pdf, part: int) -> dict:
        Xs, ys = self.rows.mapped(pdf)
        t = ys if self.loss == "squared" else 2.0 * ys - 1.0
        u = Xs @ self.w
        r = _derivative(u, t, self.loss)
        # exact sums on grids of the public bounds, as in memory (fw_sums): partitions add
        # their FixedSums exactly, so the same bits for any partitioning.
        M = derivative_bound(self.loss, self.radius)
        out = {"g": gradient_sum(Xs, r, M)}
        if self.screen:
            out.update(screen_sums(u, r, self.radius, M))
        if self.norms:
            out["c"] = norm_sums(Xs)
        return out


class ComponentScreener(PrivateScreener):
    """:class:`~dpstats.estimators.screening.PrivateScreener` fed with the components summed
    on the workers instead of per-row arrays: the same Gaussian release (same sensitivity,
    same per-release budget, column norms at the first call) and the same rule statistic."""

    def __init__(self, d: int, loss: str, radius: float, plan, rng, stage):
        super().__init__(np.zeros((d, 0)), loss, radius, plan, rng, None, stage)
        self._d = d

    def components(self, g, B: float, uu: float, c=None) -> np.ndarray:
        """The in-memory release (:meth:`PrivateScreener.release`) of the summed components."""
        return self.release(g, B, uu, c)


def frank_wolfe(ddf, rows: GramPass, *, loss: str, radius: float, T: int, choose,
                screen_at=(), screen_plan=None, rng=None, stage=None, protect=None):
    """:func:`dpstats.estimators.fw.frank_wolfe` with the gradient summed on the workers.

    Returns ``(w, mask, screening releases made)``."""
    from .._kernels.frank_wolfe import vertex_scores
    d = len(rows.keep)
    w = np.zeros(d)
    screener = None if screen_plan is None else ComponentScreener(d, loss, radius, screen_plan,
                                                                  rng, stage)
    base = FWPass(rows, loss, w, float(radius))
    screening = frozenset(screen_at)
    g = mask = None
    for t in range(1, T + 1):
        if g is None:
            g = reduce_frame(ddf, replace(base, w=w.copy()))["g"]
        k = int(choose(vertex_scores(g, radius)))
        j, step = k % d, (radius if k < d else -radius)
        mu = 2.0 / (t + 1)
        w *= 1.0 - mu
        w[j] += mu * step
        g = None
        if t in screening:
            s = reduce_frame(ddf, replace(base, w=w.copy(), screen=True, norms=screener.first))
            g = s["g"]
            mask = screener.components(g, float(s["B"][0]), float(s["uu"][0]), s.get("c")) < 0
            if protect is not None:
                mask[protect] = False
            if mask.any():
                w[mask] = 0.0
                g = None
    return w, mask, 0 if screener is None else screener.calls
