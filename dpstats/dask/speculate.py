"""The Tukey group sums taken in the first pass, at a public guess of the number of models.

The linear Tukey mechanism's number of models ``m`` is chosen from the released row count
(:func:`dpstats.estimators.tukey.choose_m.choose_m`), which the first pass computes; taking
the group sums only after it costs a second read of the data. Above about ``3 p`` times
:func:`~dpstats.estimators.tukey.choose_m.models_cap` rows (1e6-1e7 rows at p = 10) the
chosen ``m`` is that cap, a function of public quantities only. So when a fit may run the
linear Tukey mechanism, the first pass also sums every design column per group at the guess
:func:`guess_models` (the cap, or the user's ``m``), with labels from a seed drawn on the
client *before* the pass (:func:`~dpstats.mechanisms.sampling.group_seed`).

Once the method, the kept columns and ``m`` are decided (from released values and public
quantities only, exactly as before), the Tukey stage uses these sums when ``m`` equals the
guess (the kept columns' sums are a sub-array of every column's: :func:`kept_sums`), and
otherwise takes its own pass with labels from the same seed at the chosen ``m``.

**Privacy.** Nothing about the speculative sums is released except through the models the
mechanism fits from them when they are used. Those models are the least-squares fits of the
groups of a partition of the rows in which every row's label is uniform on ``{0..m-1}``,
independent of the other rows, of the data and of every noise draw (the seed comes from the
fit's generator and is drawn before anything reads the data); that is the law of the labels
drawn after the count, so every release has the same distribution as with a separate pass,
and one row still changes one model. Whether the sums are used depends only on the released
count and public quantities (it is the equality of two public numbers). What changes is the
order of draws from the fit's generator (the seed comes before the count), so a seeded fit
differs from an older version's; it no longer matches the pandas fit draw for draw, only in
law (the tests align the in-memory draws to compare them given the same labels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kernels.partition_sums import group_sums_width
from ..estimators.tukey.choose_m import models_cap

__all__ = ["guess_models", "kept_sums", "Prefetch", "MAX_FLOATS", "ENABLED"]

#: Largest speculative accumulator (m x K floats, 128 MB): above it the sums wait for the count.
MAX_FLOATS = 1 << 24
#: Test hook: False takes no speculative sums (and draws no early seed).
ENABLED = True


@dataclass
class Prefetch:
    """The seed of the group labels, drawn before the first pass, and the first pass's total
    held on its worker (:class:`~dpstats.dask.fold.Held`; None when not taken), whose group
    sums of all ``p`` design columns are at ``m`` models (:func:`~dpstats.dask.fold.groups_of`)
    and whose subsample holds every row when ``whole``."""

    seed: int
    m: int
    p: int
    held: object = None
    whole: bool = False


def guess_models(request, n_columns: int, levels: tuple[float, float]) -> int | None:
    """The number of models the linear Tukey mechanism would use on all ``n_columns`` design
    columns when the released count is large (public: the request and the levels stage's
    ``(eps, delta)``), or None when no Tukey fit can follow or the sums would be too big.

    The regression budget is :func:`~dpstats.pipeline.budget.plan_budget`'s when no selector
    runs and the row count is released: what ``eps`` keeps after the levels and the count.

    >>> from types import SimpleNamespace as NS
    >>> guess_models(NS(kind="glm", method="tukey"), 3, (0.0, 0.0)) is None
    True
    >>> guess_models(NS(kind="lm", method="tukey", m=200), 3, (0.0, 0.0))
    200
    """
    if not ENABLED or request.kind != "lm" or request.method not in ("tukey", "auto"):
        return None
    if request.m != "auto":
        m = int(request.m)
    else:
        eps_lv, delta_lv = levels
        eps_reg = request.eps - eps_lv - request.eps * request.shares["n"]
        delta_reg = request.delta - delta_lv if delta_lv else request.delta
        m = models_cap(n_columns, eps_reg, delta_reg, request.lemma, request.accounting)
    if m < 1 or m * group_sums_width(n_columns) > MAX_FLOATS:
        return None
    return m


def kept_sums(acc: np.ndarray, p: int, keep) -> np.ndarray:
    """The group-sums accumulator (:func:`dpstats.dask.passes.group_sums` layout) of the
    ``keep`` columns, out of the accumulator of all ``p`` columns.

    >>> from dpstats.dask.passes import group_sums
    >>> X = np.sin(np.arange(200.0)).reshape(50, 4)            # fixed example values
    >>> y, lab = np.cos(np.arange(50.0)), np.arange(50) % 3
    >>> a = kept_sums(group_sums(X, y, lab, 3), 4, [0, 2])
    >>> bool(np.allclose(a, group_sums(X[:, [0, 2]], y, lab, 3)))
    True
    """
    keep = [int(j) for j in keep]
    k = len(keep)
    pos = np.zeros((p, p), dtype=np.int64)
    iu = np.triu_indices(p)
    pos[iu] = np.arange(iu[0].size)
    pos[iu[1], iu[0]] = pos[iu]
    ju = np.triu_indices(k)
    kk = np.asarray(keep)
    tri = pos[kk[ju[0]], kk[ju[1]]]
    t = p * (p + 1) // 2
    cols = np.concatenate([tri, t + kk, t + p + kk, t + 2 * p + np.arange(3)])
    return np.ascontiguousarray(acc[:, cols])
