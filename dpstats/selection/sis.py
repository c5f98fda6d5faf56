"""DP-SIS: private sure independence screening with the canonical Lipschitz top-k (004 Alg. 1).

Every candidate column and the label are mapped into ``[-1, 1]`` by clipping bounds that are
public or privately estimated (never by data means or maxima), each feature is scored by
``|x_j^T y|`` on the mapped data, and the k best scores are chosen as a set by
:func:`~dpstats.mechanisms.lipschitz_topk`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..mechanisms.accountant import Ledger
from ..mechanisms.bounds import Bounds, parse_bounds, private_bounds, to_unit
from ..mechanisms.lipschitz import lipschitz_topk
from ..validation import check_choice, check_eps
from . import Selection
from .checks import check_xy_k

__all__ = ["select", "sis_scores"]


def sis_scores(X, y, bounds: Bounds) -> np.ndarray:
    """``|x_j^T y|`` for every column after mapping X and y into ``[-1, 1]`` by ``bounds``.

    Each column is centred at the midpoint of its ``(lo, hi)``, divided by the half-width and
    clipped to ``[-1, 1]``; the same for ``y``. Every product ``x_ij * y_i`` then lies in
    ``[-1, 1]``, so under add/remove one row each score ``|sum_i x_ij y_i|`` changes by at most
    1 (the absolute value is 1-Lipschitz). This is the quantity DP-SIS ranks; it is not
    released.

    >>> b = parse_bounds((-2.0, 2.0), 2)
    >>> sis_scores(np.array([[1.0, -4.0], [2.0, 0.0]]), np.array([2.0, -1.0]), b).tolist()
    [0.0, 1.0]
    """
    xs = to_unit(X, bounds.x_lo, bounds.x_hi)
    ys = to_unit(y, bounds.y_lo, bounds.y_hi)
    return np.abs(xs.T @ ys)


def select(X, y, *, k: int, eps: float, rng: np.random.Generator, ledger: Ledger | None = None,
           bounds="auto", bounds_share: float = 0.5, bounds_mode: str = "auto",
           q: float = 0.01, columns=None, stage: str = "selection", **_) -> Selection:
    """Select k candidate columns by DP-SIS (004 Algorithm 1), as an unordered set.

    Steps: (1) bounds: public ones from ``bounds`` cost nothing; any part given as ``"auto"``
    is estimated by :func:`~dpstats.mechanisms.bounds.private_bounds` with ``bounds_share * eps``
    (exponential-mechanism quantiles, each utility of sensitivity ``max(q, 1 - q)``);
    (2) map columns and ``y`` into ``[-1, 1]`` with those bounds (centre at the midpoint,
    divide by the half-width, clip) and score ``|x_j^T y|`` (:func:`sis_scores`; sensitivity 1
    under add/remove one row since every product lies in ``[-1, 1]``); (3) release a k-set
    with :func:`~dpstats.mechanisms.lipschitz_topk` (sensitivity 1) and the rest of ``eps``.
    The whole is ``eps``-DP under add/remove one row by basic composition (the scoring uses
    the bounds released in step 1, which is adaptive composition of the two stages).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Candidate columns only (no intercept).
    y : array_like, shape (n,)
    k : int
        Number of columns to select, ``1 <= k <= d``.
    eps : float
        Total budget of the selector (bounds included).
    rng : numpy.random.Generator
    ledger : Ledger or None
        Charged by the mechanisms (one charge per release).
    bounds : "auto", (lo, hi) or {"x": ..., "y": ...}
        Clipping bounds, see :func:`~dpstats.mechanisms.bounds.parse_bounds`; ``"auto"`` parts are
        private.
    bounds_share : float
        Share of ``eps`` for private bounds, in (0, 1); ignored (all of ``eps`` goes to the
        top-k) when the bounds are fully public.
    bounds_mode : {"auto", "column", "global"}
        Mode of :func:`~dpstats.mechanisms.bounds.private_bounds`.
    q : float
        Tail mass outside each private bound.
    columns : sequence of str, optional
        Names of the columns, for ``bounds={"x": {name: (lo, hi)}, ...}``.
    stage : str
        Ledger stage of the top-k release (private bounds use ``stage + ": bounds"``).

    Returns
    -------
    Selection
        ``indices`` ascending (a set; ``ordered=False``), ``eps`` the total charged, and
        ``info`` with ``bounds`` ("public", "private" or "public x, private y" / ...), ``mode``,
        ``eps_bounds`` and ``eps_topk``.

    Raises
    ------
    ValidationError
        For bad data, ``k`` (e.g. ``k > d``), ``eps``, ``bounds``, ``bounds_share``,
        ``bounds_mode`` or ``q``, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 6))
    >>> y = X[:, 4] - X[:, 1]
    >>> select(X, y, k=2, eps=1e4, rng=rng, ledger=None, bounds=(-2, 2)).indices
    (1, 4)
    """
    Xa, ya, k = check_xy_k(X, y, k)
    d = Xa.shape[1]
    eps = check_eps(eps)
    if not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng must be a numpy.random.Generator (see "
                              f"dpstats.mechanisms.rng.as_rng); got {type(rng).__name__}")
    given = parse_bounds(bounds, d, columns=columns)
    need_x, need_y = given.x_lo is None, given.y_lo is None
    eps_bounds = 0.0
    if need_x or need_y:
        if not (isinstance(bounds_share, numbers.Real) and not isinstance(bounds_share, bool)
                and 0 < float(bounds_share) < 1):
            raise ValidationError(f"bounds_share must be a number strictly between 0 and 1 "
                                  f"(share of eps for private bounds); got {bounds_share!r}")
        check_choice(bounds_mode, ("auto", "column", "global"), "bounds_mode")
        if not (isinstance(q, numbers.Real) and not isinstance(q, bool) and 0 < q < 0.5):
            raise ValidationError(f"q must be a number strictly between 0 and 0.5; got {q!r}")
        eps_bounds = eps * float(bounds_share)
    eps_topk = eps - eps_bounds
    mode = None
    if need_x or need_y:
        est = private_bounds(Xa if need_x else None, ya if need_y else None, eps_bounds, rng,
                             ledger, mode=bounds_mode, q=q, stage=f"{stage}: bounds")
        eps_bounds, mode = est.eps, (est.mode if need_x else None)
        given = Bounds(est.x_lo if need_x else given.x_lo, est.x_hi if need_x else given.x_hi,
                       est.y_lo if need_y else given.y_lo, est.y_hi if need_y else given.y_hi,
                       source="private" if need_x and need_y else "mixed", mode=mode,
                       eps=eps_bounds)
    scores = sis_scores(Xa, ya, given)
    idx = lipschitz_topk(scores, k, 1.0, eps_topk, rng, ledger, stage=stage,
                         what="DP-SIS |x_j^T y| (x, y clipped into [-1, 1])")
    label = {(False, False): "public", (True, True): "private",
             (True, False): "private x, public y", (False, True): "public x, private y"}
    return Selection(indices=tuple(int(i) for i in idx), method="sis",
                     eps=math.fsum([eps_bounds, eps_topk]), ordered=False,
                     info={"bounds": label[(need_x, need_y)], "mode": mode,
                           "eps_bounds": eps_bounds, "eps_topk": eps_topk, "k": k, "d": d})
