"""Mechanisms that choose: the exponential mechanism (Gumbel-max) and one-shot Gumbel top-k."""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_eps
from . import noise as _noise
from .accountant import Ledger

__all__ = ["exponential", "peel_topk"]


def _as_scores(scores) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores must be a non-empty 1-D array")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("scores must not contain NaN or +inf")
    return s


def exponential(scores, sensitivity: float, eps: float, rng: np.random.Generator,
                ledger: Ledger | None = None, *, log_base=None, monotone: bool = False,
                stage: str | None = None, what: str = "index") -> int:
    """Exponential mechanism by Gumbel-max, entirely in log space.

    Picks index ``i`` with probability proportional to
    ``base_i * exp(eps * scores_i / (c * sensitivity))`` where ``c = 1`` if the score is
    monotone in the data set (adding a row never decreases any score) and ``c = 2`` otherwise.
    ``log_base`` (default zeros) is the log of a *data-independent or already accounted* base
    measure; ``-inf`` entries are never chosen. eps-DP under add/remove one row, where
    ``sensitivity`` bounds the change of every score.

    Examples
    --------
    >>> import numpy as np
    >>> exponential([0.0, 100.0, 0.0], 1.0, 10.0, np.random.default_rng(0))
    1
    """
    eps = check_eps(eps)
    s = _as_scores(scores)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}")
    c = 1.0 if monotone else 2.0
    logits = eps * s / (c * sensitivity)
    if log_base is not None:
        lb = np.asarray(log_base, dtype=np.float64)
        if lb.shape != s.shape:
            raise ValueError("log_base must have the same shape as scores")
        logits = logits + lb
    if not np.isfinite(logits).any():
        raise ValueError("every candidate has zero weight")
    if ledger is not None:
        ledger.charge("exponential", eps, 0.0, stage=stage,
                      detail=f"{what}; score sensitivity {sensitivity:.4g}"
                             + (", monotone" if monotone else ""))
    noisy = logits + _noise.gumbel_noise(1.0, s.shape, rng)
    noisy[~np.isfinite(logits)] = -np.inf
    return int(np.argmax(noisy))


def peel_topk(scores, k: int, sensitivity: float, eps: float, rng: np.random.Generator,
              ledger: Ledger | None = None, *, stage: str | None = None,
              what: str = "top-k set") -> np.ndarray:
    """One-shot Gumbel top-k: the k largest of ``scores + Gumbel(2 k sensitivity / eps)``.

    Equivalent in distribution to k rounds of peeling with the exponential mechanism at
    ``eps / k`` each (Durfee & Rogers 2019), so eps-DP by basic composition under add/remove one
    row when every score changes by at most ``sensitivity`` (l_inf). Returns the indices in the
    order they would be peeled (largest noisy score first).

    >>> import numpy as np
    >>> sorted(peel_topk([0, 50, 0, 60.0], 2, 1.0, 100.0, np.random.default_rng(0)).tolist())
    [1, 3]
    """
    eps = check_eps(eps)
    s = _as_scores(scores)
    if not (1 <= int(k) <= s.size):
        raise ValueError(f"k must be between 1 and the number of candidates ({s.size}); got {k}")
    k = int(k)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}")
    if ledger is not None:
        ledger.charge("gumbel top-k", eps, 0.0, stage=stage,
                      detail=f"{what} (k={k}); score l_inf sensitivity {sensitivity:.4g}")
    noisy = s + _noise.gumbel_noise(2.0 * k * sensitivity / eps, s.shape, rng)
    idx = np.argpartition(-noisy, k - 1)[:k]
    return idx[np.argsort(-noisy[idx], kind="stable")]
