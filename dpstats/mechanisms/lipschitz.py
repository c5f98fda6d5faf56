"""Canonical Lipschitz mechanism for private top-k selection (004 Appendix A, Algorithm 2).

The mechanism (Shekelyan & Loukides 2022, restated in 004 Appendix A) picks the k-subset ``y`` of
``{0, ..., d-1}`` that maximises ``-(eps / 2) * LOSS(y | x) + F^-1(U_y)`` over *all* k-subsets,
with i.i.d. uniforms ``U_y``, ``F^-1(u) = -log(1 - u)`` (standard exponential noise) and the
canonical loss (gamma = 1/2)::

    LOSS(y | x) = min_{v : top-k(v) = y} ||x - v||_inf
                = max(0, max_{i not in y} x_i - min_{i in y} x_i) / 2,   x = scores / sensitivity.

The loss has l_inf sensitivity 1, so the mechanism is eps-DP under add/remove one row whenever
every score changes by at most ``sensitivity``.

Utility classes. Let ``j_1, ..., j_d`` order the indices by decreasing score. The loss only
depends on the best excluded position ``h + 1`` and the worst included position ``t``, so the
k-subsets fall into the classes ``C_{h,t}`` = {head ``j_1..j_h``} + {body: ``k - h - 1`` of
``j_{h+2}, ..., j_{t-1}``} + {tail ``j_t``}, for ``h = 0..k-1``, ``t = k+1..d``, plus the true
top-k ``C_{k-1,k}``. They have ``|C_{h,t}| = binom(t-h-2, k-h-1)`` members and
``LOSS = (x_[h+1] - x_[t]) / 2``. Every class's maximal noise is drawn in one go
(``max of m uniforms ~ U^(1/m)``), so the whole draw is O(dk).

Note on 004's text. Definition A.2 and Algorithm 2 of 004 let the body range over
``j_{h+1}, ..., j_{t-1}`` with ``|C_{h,t}| = binom(t-h-1, k-h-1)``. Those "classes" overlap (a
body containing ``j_{h+1}`` describes a set whose best excluded index is further down) and their
sizes sum to more than ``binom(d, k)`` (19 instead of 15 for d = 6, k = 2); sampling with them
is not the mechanism of Definition A.1 and over-weights sets with a data-dependent multiplicity.
The same text says ``j_{h+1}`` is "the best index not included in y", which fixes the intended
partition used here; ``tests/mechanisms/test_lipschitz_topk.py`` checks the output distribution
against a brute-force evaluation of Definition A.1 over all k-subsets.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.special import exprel, gammaln

from ..errors import ValidationError
from ..validation import check_eps
from . import noise as _noise
from .accountant import Ledger

__all__ = ["lipschitz_topk"]

#: Number of utility classes drawn per vectorised block (bounds memory at large d * k).
_BLOCK = 1 << 18
_TINY = float(np.finfo(np.float64).tiny)


def _class_max_noise(log_size: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw ``F^-1(max of |C| uniforms) = -log(1 - U^(1/|C|))`` given ``log |C|``, in log space.

    With ``U = exp(-E)``, ``E ~ Exp(1)``: ``U^(1/|C|) = exp(-w)``, ``w = exp(z)``,
    ``z = log E - log|C|``, and ``-log(1 - exp(-w)) = -z - log(exprel(-w))`` where
    ``exprel(x) = (e^x - 1)/x`` (``= 1`` at 0). This has no cancellation for tiny ``w`` (huge
    classes: the noise tends to ``log|C| - log E``, i.e. log|C| plus a standard Gumbel) and
    stays finite when ``exp(z)`` underflows; for large ``w`` the noise is ``~exp(-w)``, with
    absolute error below 1e-15.
    """
    e = np.maximum(_noise.standard_exponential(log_size.shape, rng), _TINY)
    z = np.log(e) - log_size
    return -z - np.log(exprel(-np.exp(z)))


def _select_class(xs: np.ndarray, k: int, eps: float,
                  rng: np.random.Generator) -> tuple[int, int]:
    """Return ``(h, t)`` of the winning utility class; ``xs`` = normalised scores, descending.

    ``t`` is 1-based (``x_[t] = xs[t - 1]``); ``h`` counts the head.
    """
    d = xs.shape[0]
    # C_{k-1,k} = {true top-k}: loss 0, one member.
    e0 = max(float(_noise.standard_exponential(None, rng)), _TINY)
    best_v = -math.log(-math.expm1(-e0))
    best = (k - 1, k)
    h = np.arange(k)[:, None]
    x_missing = xs[:k][:, None]            # x_[h+1] for h = 0..k-1
    log_body_fact = gammaln(k - h)         # log (k-h-1)!
    step = max(1, _BLOCK // k)
    for t0 in range(k + 1, d + 1, step):
        t = np.arange(t0, min(t0 + step, d + 1))[None, :]
        utility = (eps / 4.0) * (xs[t - 1] - x_missing)          # -(eps/2) * LOSS
        log_size = gammaln(t - h - 1) - log_body_fact - gammaln(t - k)  # log binom(t-h-2, k-h-1)
        value = utility + _class_max_noise(log_size, rng)
        i = int(np.argmax(value))
        hi, ti = divmod(i, value.shape[1])
        if value[hi, ti] > best_v:
            best_v = float(value[hi, ti])
            best = (hi, int(t[0, ti]))
    return best


def _class_member(order: np.ndarray, h: int, t: int, k: int,
                  rng: np.random.Generator) -> np.ndarray:
    """A uniformly random member of ``C_{h,t}`` as original indices (unsorted)."""
    out = np.empty(k, dtype=np.int64)
    out[:h] = order[:h]                      # head j_1 .. j_h
    out[k - 1] = order[t - 1]                # tail j_t
    if k - h - 1 > 0:                        # body: k-h-1 of j_{h+2} .. j_{t-1}
        out[h:k - 1] = order[h + 1 + _noise.uniform_subset(t - h - 2, k - h - 1, rng)]
    return out


def lipschitz_topk(scores, k: int, sensitivity: float, eps: float, rng: np.random.Generator,
                   ledger: Ledger | None = None, *, stage: str | None = None,
                   what: str = "top-k set") -> np.ndarray:
    """Private top-k set by the canonical Lipschitz mechanism (004 Appendix A, Algorithm 2).

    eps-DP under add/remove one row when every score changes by at most ``sensitivity``
    (l_inf). Uses gamma = 1/2 and exponential noise ``F^-1(u) = -log(1 - u)``; runs in
    O(d log d + d k) time and O(d + min(d k, 2^18)) memory, in log space throughout, so class
    sizes such as ``binom(22282, 3)`` or ``binom(19999, 49)`` are safe.

    Parameters
    ----------
    scores : array_like, shape (d,)
        Finite scores; larger is better.
    k : int
        Size of the set, ``1 <= k <= d`` (``k = d`` returns every index).
    sensitivity : float
        Bound on the change of each score when one row is added or removed.
    eps : float
        Privacy parameter (the whole ``eps`` is charged once).
    rng : numpy.random.Generator
        Source of randomness.
    ledger : Ledger, optional
        Charged ``(eps, 0)`` as "canonical lipschitz top-k" before any noise is drawn.
    stage : str, optional
        Stage name for the ledger entry.
    what : str
        What is being selected, for the ledger detail.

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The selected indices, **sorted ascending**: the output is a set, and listing it in
        score order would leak the true ranking inside the set.

    Raises
    ------
    ValidationError
        (a ``ValueError``) for bad ``scores``, ``k``, ``sensitivity`` or ``eps``; nothing is
        charged then.

    Examples
    --------
    >>> import numpy as np
    >>> lipschitz_topk([0.0, 50.0, 1.0, 60.0], 2, 1.0, 100.0, np.random.default_rng(0)).tolist()
    [1, 3]
    """
    eps = check_eps(eps)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValidationError("scores must be a non-empty 1-D array of finite numbers; "
                              f"got shape {s.shape}")
    d = s.size
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= d:
        raise ValidationError(f"k must be an integer between 1 and the number of candidates "
                              f"({d}); got {k!r}")
    k = int(k)
    if not (isinstance(sensitivity, numbers.Real) and math.isfinite(sensitivity)
            and sensitivity > 0):
        raise ValidationError(f"sensitivity must be a finite number > 0; got {sensitivity!r}")
    if ledger is not None:
        ledger.charge("canonical lipschitz top-k", eps, 0.0, stage=stage,
                      detail=f"{what} (k={k} of {d}); score l_inf sensitivity "
                             f"{float(sensitivity):.4g}; gamma=1/2, exponential noise")
    x = s / float(sensitivity)
    order = np.argsort(-x, kind="stable").astype(np.int64)
    h, t = _select_class(x[order], k, eps, rng)
    return np.sort(_class_member(order, h, t, k, rng))
