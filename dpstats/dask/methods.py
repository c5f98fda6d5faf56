"""The engine of every method on a dask frame: :class:`~dpstats.dask.engine.Engine` (bounds
histograms, Gram matrices, per-round passes, Tukey group fits) plus the statistics of
Frank-Wolfe (:mod:`dpstats.dask.fw`), of output and objective perturbation
(:mod:`dpstats.dask.glm`) and of dp_glm's Tukey mechanism (:mod:`dpstats.dask.shuffle`).

Each method below is what an estimator asks for when it is given ``engine=``; the releases
stay in the estimator (and so in :mod:`dpstats.mechanisms`), on the client.
"""

from __future__ import annotations

from . import engine as _engine
from .engine import Engine
from .fw import frank_wolfe
from .glm import DaskRows
from .inference import ResidualRows, TukeyRows
from .passes import GramPass, seeded_labels
from .shuffle import LabelledRows, shuffled_models

__all__ = ["MethodsEngine"]


class MethodsEngine(Engine):
    """:class:`~dpstats.dask.engine.Engine` with the statistics of FW, output and objective
    perturbation and the logistic Tukey mechanism."""

    def rows(self, bounded) -> GramPass:
        """The map of the kept columns into ``bounded``'s released box (as in memory)."""
        return GramPass(self.design, self.keep, bounded.clip_lo, bounded.clip_hi,
                        bounded.intercept_col, bounded.y_box)

    def residual_rows(self, bounded, C: float = 1.0, resid_box: float | None = None):
        """The residual sums of AdaSSP's and BAS's standard errors (:mod:`.inference`)."""
        return ResidualRows(self.ddf, self.rows(bounded), C, resid_box)

    def tukey_rows(self) -> TukeyRows:
        """The row count and row subsample of the Tukey intervals (:mod:`.inference`)."""
        return TukeyRows(self.ddf, self.design, self.keep, self.first["n"],
                         self.first.get("sample"), self.starts)

    def frank_wolfe(self, bounded, loss: str, radius: float, T: int, choose, screen_at,
                    screen_plan, rng, stage):
        """The Frank-Wolfe loop, one pass per gradient: ``(w, mask, screening releases)``."""
        return frank_wolfe(self.ddf, self.rows(bounded), loss=loss, radius=radius, T=T,
                           choose=choose, screen_at=screen_at, screen_plan=screen_plan,
                           rng=rng, stage=stage, protect=bounded.intercept_col)

    def logistic_rows(self, bounded, kept, s: float) -> DaskRows:
        """The unit-norm rows of output and objective perturbation (:class:`DaskRows`)."""
        return DaskRows(self.ddf, self.rows(bounded), kept, s)

    def logistic_groups(self, ridge: float, median: bool = False) -> LogisticGroups:
        """The engine the logistic Tukey mechanism hands to the linear one: the same centre
        counts, logistic group fits from a shuffle by label (``median``: each median-bias
        reduced on its worker, :mod:`dpstats.estimators.tukey.glm_bias`)."""
        return LogisticGroups(self, float(ridge), bool(median))


class LogisticGroups:
    """``cells`` and ``fit_models`` of the logistic Tukey mechanism on dask."""

    def __init__(self, parent: MethodsEngine, ridge: float, median: bool = False):
        self.parent, self.ridge, self.median = parent, ridge, median
        self.cells = parent.cells

    def tukey_rows(self) -> TukeyRows:
        """The parent's rows: the logistic intervals' scales and weighted moments."""
        return self.parent.tukey_rows()

    def fit_models(self, X, y, m: int, rng):
        """The ``m`` group logistic fits (``X``, ``y``: no rows). One seed is drawn on the
        client (:func:`~dpstats.mechanisms.sampling.group_seed`, where the linear path draws
        it), the labels on the workers."""
        from ..mechanisms.sampling import group_seed
        seed = group_seed(rng)
        source = seeded_labels if _engine.LABELS is None else _engine.LABELS
        p = self.parent
        return shuffled_models(p.ddf, LabelledRows(p.design, p.keep, int(m), seed, source,
                                                   p.starts), self.ridge, self.median)
