"""The restricted exponential mechanism over approximate Tukey depth (002 Algorithms 3-4)."""

from __future__ import annotations

import numpy as np

from .._kernels.depth import log_depth_volumes, log_exact_volumes, max_depth
from . import noise as _noise
from .accountant import Ledger
from .choice import exponential

__all__ = ["restricted_tukey_em", "sample_point_with_depth"]


def _log_pos(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.where(x > 0, x, 0.0))


def sample_point_with_depth(S: np.ndarray, i: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform point from the region of approximate Tukey depth **exactly** ``i`` (002 Alg. 4).

    The region splits into p disjoint box shells ``C_j``: depth > i in coordinates < j, exactly
    i in coordinate j, >= i in coordinates > j. Shell volumes are combined in log space.
    """
    m, p = S.shape
    D = max_depth(m)
    if not (1 <= i <= D):
        raise ValueError(f"depth must be in 1..{D}; got {i}")
    lo, hi = S[i - 1], S[m - i]
    if i + 1 <= D:
        lo2, hi2 = S[i], S[m - i - 1]
        inner = np.maximum(hi2 - lo2, 0.0)
    else:
        lo2 = hi2 = (lo + hi) / 2.0
        inner = np.zeros(p)
    outer = hi - lo
    log_outer, log_inner = _log_pos(outer), _log_pos(inner)
    log_shell = _log_pos(outer - inner)
    before = np.concatenate(([0.0], np.cumsum(log_inner)[:-1]))
    after = np.concatenate((np.cumsum(log_outer[::-1])[::-1][1:], [0.0]))
    with np.errstate(invalid="ignore"):
        log_c = before + log_shell + after
    log_c[np.isnan(log_c)] = -np.inf
    if not np.isfinite(log_c).any():
        raise ValueError("the region of this depth has zero volume")
    noisy = log_c + _noise.gumbel_noise(1.0, p, rng)
    noisy[~np.isfinite(log_c)] = -np.inf
    js = int(np.argmax(noisy))
    y = np.empty(p)
    y[:js] = rng.uniform(lo2[:js], hi2[:js])
    y[js + 1:] = rng.uniform(lo[js + 1:], hi[js + 1:])
    if inner[js] > 0:
        a, b = lo2[js] - lo[js], hi[js] - hi2[js]
        u = rng.uniform(0.0, a + b)
        y[js] = lo[js] + u if u < a else hi2[js] + (u - a)
    else:
        y[js] = rng.uniform(lo[js], hi[js])
    return y


def restricted_tukey_em(S: np.ndarray, t: int, eps: float, rng: np.random.Generator,
                        ledger: Ledger | None = None, *, delta: float = 0.0,
                        monotone: bool = False, stage: str | None = None,
                        note: str = "") -> np.ndarray | None:
    """Sample a point of high approximate Tukey depth, restricted to depth >= t.

    Chooses depth ``i`` in ``{t, ..., floor(m/2)}`` with probability proportional to
    ``W_i exp(eps i / c)`` by Gumbel-max on log weights, then a uniform point of exactly that
    depth. Depth changes by at most 1 when one row is added or removed (that changes one model).
    ``c = 2`` by default: replacing a model can raise the depth in one region and lower it in
    another, so the score is not monotone. ``monotone=True`` (c = 1) is the form of 002
    section 7.3, valid when a neighbour adds or removes a whole model. Only (eps, delta)-DP once
    a PTR test has passed (``delta`` is charged here for that reason).

    Parameters
    ----------
    S : (m, p) array
        Models sorted per coordinate (after tie-breaking jitter).
    t : int
        Depth restriction.
    note : str
        Appended to the ledger entry's detail (e.g. :data:`dpstats.mechanisms.ptr.PAPER_NOTE`).

    The chosen depth stays inside: it is not a function of the released point's law alone
    and is never returned (issue 14).

    Returns
    -------
    The point, or None if every admissible region has zero volume.
    """
    m = S.shape[0]
    D = max_depth(m)
    logW = log_exact_volumes(log_depth_volumes(S))
    depths = np.arange(t, D + 1)
    if ledger is not None:
        ledger.charge("restricted exponential", eps, delta, stage=stage,
                      detail=f"Tukey depth >= {t} of {D}; score sensitivity 1"
                             + (", monotone" if monotone else "") + note)
    log_base = logW[t:D + 1]
    if depths.size == 0 or not np.isfinite(log_base).any():
        return None
    k = exponential(depths.astype(float), 1.0, eps, rng, None, log_base=log_base,
                    monotone=monotone)
    depth = int(depths[k])      # internal: never returned
    return sample_point_with_depth(S, depth, rng)

