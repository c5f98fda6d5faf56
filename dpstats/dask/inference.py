"""The statistics of the standard errors on a dask frame: row sums at a released fit, and the
Tukey intervals' row subsample.

The releases are the in-memory ones (:mod:`dpstats.estimators.inference.ssp`,
:mod:`~dpstats.estimators.inference.sandwich`, :mod:`~dpstats.estimators.inference.tukey`),
made on the client by the same mechanisms; only what they read is computed on the workers:

* AdaSSP and Boosted AdaSSP (:class:`ResidualRows`): the sum of the squared residuals of the
  released fit, each clipped to ``[-1, 1]`` on the mapped scale (one pass), and for
  ``cov_type="HC1"`` the clipped meat ``sum_i x_i x_i' min(r_i^2, bound / ||x_i||^2)``
  (:func:`dpstats.mechanisms.meat.clipped_meat` on every partition, one more pass: its bound
  is computed from the released RSS). The rows are mapped into the released box exactly as
  for the fit (:class:`~dpstats.dask.passes.GramPass`; BAS's residuals on the rows clipped at
  ``resid_box`` half-widths); sums over partitions equal the in-memory sums up to rounding.
* Tukey (:class:`TukeyRows`): the released row count's source ``n`` for a private count when
  none was released, and the Bernoulli(``q``) row subsample of the windows (each row kept
  independently, :func:`~dpstats.mechanisms.sampling.seeded_sample`: the law of the in-memory
  ``random_groups(n, 1/q) == 0``, one seed drawn from the fit's generator; ``q = 1``: every row,
  nothing drawn, as in memory). When the first pass took the Tukey group sums speculatively it
  also kept the rows whose uniform (from a seed drawn before it) lies below a threshold
  (:func:`dpstats.dask.fold.thinned`, at most 2^21 rows, held on a worker); the windows then
  take the rows below ``q`` from them there (only those rows come to the client), with no
  pass, and otherwise the same rows by a pass with the same seed. Each row's uniform is a
  function of the seed and the row's global number (:mod:`dpstats.dask.numbering`: the same
  rows on any partitioning), except in a first pass that had to thin its subsample (more
  than 2^21 rows): its uniforms were drawn before the rows were numbered, keyed by partition
  (the same law; a pass at a ``q`` above its threshold then keeps other rows of that law).
  The design moments of
  the group models' correlations read those rows' exact clipped sums, computed there too
  (:meth:`TukeyRows.moment_sums`; the noise is added on the client by
  :func:`~dpstats.mechanisms.design_moments.design_moments`). The group models are already on
  the client.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..mechanisms.curvature import squares_fixed
from ..mechanisms.design_moments import clipped_sums
from ..mechanisms.meat import clipped_meat_fixed
from .fold import held_rows, rows_below_q
from .passes import GramPass, SamplePass, reduce_frame, sample_frame

__all__ = ["ResidualPass", "ResidualRows", "TukeyRows", "held_moment_sums"]


@dataclass(frozen=True)
class ResidualPass:
    """One partition's clipped residual sum of squares (``bound`` None) or clipped meat at the
    released ``theta`` (on the scale of the rows ``mapped / C``)."""

    rows: GramPass
    theta: np.ndarray
    C: float = 1.0
    resid_box: float | None = None
    bound: float | None = None

    def __call__(self, pdf, part: int) -> dict:
        raw = self.rows.design(pdf)
        Xs, ys = self.rows.mapped(pdf, raw)
        Xr, yr = (Xs, ys) if self.resid_box is None else \
            self.rows.mapped(pdf, raw, clip=self.resid_box)
        r = np.clip(yr - (Xr / self.C) @ self.theta, -1.0, 1.0)
        if self.bound is None:             # exact sums: partitions add up to the same bits
            return {"rss": squares_fixed(r)}
        return {"meat": clipped_meat_fixed(Xs / self.C, r, self.bound)}


class ResidualRows:
    """What :func:`~dpstats.estimators.inference.ssp.release_and_infer` reads from the rows
    (``rss(theta)``, ``meat(theta, bound)``), one pass each."""

    def __init__(self, ddf, rows: GramPass, C: float = 1.0, resid_box: float | None = None):
        self.ddf, self.pass_ = ddf, ResidualPass(rows, np.zeros(0), float(C), resid_box)

    def rss(self, theta) -> float:
        step = replace(self.pass_, theta=np.asarray(theta, dtype=np.float64))
        return float(reduce_frame(self.ddf, step)["rss"][0])

    def meat(self, theta, bound: float) -> np.ndarray:
        step = replace(self.pass_, theta=np.asarray(theta, dtype=np.float64),
                       bound=float(bound))
        return reduce_frame(self.ddf, step)["meat"]


class TukeyRows:
    """The rows the Tukey intervals read (:func:`dpstats.estimators.inference.tukey.
    tukey_inference` with ``rows=``): ``n`` (not released: only a mechanism reads it) and
    ``sample(q, rng)``, the kept columns and ``y`` of a Bernoulli(``q``) row subsample."""

    def __init__(self, ddf, design, keep, n: int, speculative: dict | None = None,
                 starts: tuple[int, ...] = ()):
        self.ddf, self.design, self.keep, self.n = ddf, design, tuple(keep), int(n)
        self.speculative, self.starts = speculative, starts

    def sample(self, q: float, rng) -> tuple[np.ndarray, np.ndarray]:
        """The subsample: from the first pass's speculative rows when their threshold is at
        least ``q`` (no pass), else one pass with the same seed (the same rows when the first
        pass held every row)."""
        from ..mechanisms.sampling import group_seed
        spec = self.speculative
        if spec is not None and q <= spec["thr"]:      # filtered where the rows are held
            return spec["held"].apply(held_rows, q, self.keep)
        if spec is not None:
            seed = spec["seed"]
        else:
            seed = 0 if q >= 1.0 else group_seed(rng)    # every row: nothing drawn
        return sample_frame(self.ddf, SamplePass(self.design, self.keep, float(q), seed,
                                                 self.starts))

    def moment_sums(self, q: float, rng, centre, scale, bound: float, cols, kernel: bool):
        """The exact :func:`~dpstats.mechanisms.design_moments.clipped_sums` of the rows of
        :meth:`sample` (the same rows, the same draws from ``rng``): on the worker holding the
        first pass's subsample when it serves ``q`` (only the sums come back), else of the
        rows a sample pass brings."""
        spec = self.speculative
        if spec is not None and q <= spec["thr"]:
            return spec["held"].apply(held_moment_sums, q, self.keep, centre, scale, bound,
                                      cols, kernel)
        return clipped_sums(self.sample(q, rng)[0], centre, scale, bound, cols=cols,
                            kernel=kernel)


def held_moment_sums(total: dict, q: float, keep, centre, scale, bound: float, cols,
                     kernel: bool):
    """:func:`~dpstats.mechanisms.design_moments.clipped_sums` of the held subsample's rows
    below ``q``: the rows of :func:`~dpstats.dask.fold.held_rows` (the array the client would
    get), read in place (:func:`~dpstats.dask.fold.rows_below_q`; the kept columns ``cols``
    picked inside the blocks, not copied first: the same values, so the same sums)."""
    X = rows_below_q(total, q)[0]
    return clipped_sums(X, centre, scale, bound, cols=[int(keep[j]) for j in cols],
                        kernel=kernel)
