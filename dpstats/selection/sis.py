"""DP-SIS: private sure independence screening with the canonical Lipschitz top-k (004 Alg. 1).

Three steps, each its own function:

1. Clipping bounds (:func:`clipping_bounds`): public ones from ``bounds`` cost nothing; any part
   given as ``"auto"`` is estimated by :func:`~dpstats.mechanisms.bounds.private_bounds` with
   ``bounds_share * eps`` (exponential-mechanism quantiles, each utility of sensitivity
   ``max(q, 1 - q)``). Never data means or maxima.
2. Scores (:func:`sis_scores`): every candidate column and the label are mapped into ``[-1, 1]``
   with those bounds (centre at the midpoint, divide by the half-width, clip) and each feature
   is scored by ``|x_j^T y|`` (sensitivity 1 under add/remove one row, since every product
   lies in ``[-1, 1]``).
3. Top-k: a k-set of terms is released by :func:`~dpstats.mechanisms.lipschitz_topk`
   (sensitivity 1) with the rest of ``eps``. A term of several columns (a factor's dummies,
   ``term_of``) is scored by the maximum of its columns' scores, which still moves by at most 1
   under add/remove one row (a sum over ``L`` columns could move by ``L``); every column of a
   selected term is released. One column per term: the column-wise algorithm, draw for draw.

The whole is ``eps``-DP under add/remove one row by basic composition (the scoring uses the
bounds released in step 1: adaptive composition of the two stages).
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.row_sums import tdot
from ..mechanisms.accountant import Ledger
from ..mechanisms.bounds import Bounds, parse_bounds, private_bounds, to_unit
from ..mechanisms.lipschitz import lipschitz_topk
from ..validation import Option, OptionSpec, check_eps, validate_options
from . import Selection
from .checks import check_generator, check_selector_inputs
from .terms import is_columnwise, term_columns, term_max

__all__ = ["select", "sis_scores", "clipping_bounds", "CONTEXT", "OPTIONS"]

#: Keywords the pipeline supplies (see :func:`dpstats.selection.run_selector`): column names for
#: named public bounds, and the ledger stage.
CONTEXT = ("columns", "stage", "term_of")


def _parse_bounds(values: dict, fixed: dict) -> dict:
    """The options with ``"given"``: ``bounds`` parsed for the ``fixed`` number of columns
    ``d`` and their ``columns`` names (:func:`~dpstats.mechanisms.bounds.parse_bounds`, which
    raises for a bad form or pair)."""
    given = parse_bounds(values["bounds"], fixed["d"], columns=fixed.get("columns"))
    return {**values, "given": given}


#: User options, checked by :func:`~dpstats.validation.validate_options`; ``bounds`` is
#: parsed against the columns by the spec's ``finish``. The private-bounds options are checked
#: even when every bound is public (they are then unused).
OPTIONS = OptionSpec((
    Option("bounds", "any", "auto",
           doc="clipping bounds: 'auto' (private), (lo, hi) or {'x': ..., 'y': ...}"),
    Option("bounds_share", "real", 0.5, range=(0.0, 1.0),
           doc="share of eps for the private bounds (unused when all bounds are public)",
           message="bounds_share must be a number strictly between 0 and 1 (share of eps for "
                   "private bounds); got {value!r}"),
    Option("bounds_mode", "choice", "auto", choices=("auto", "column", "global"),
           doc="mode of the private bounds (dpstats.mechanisms.bounds.private_bounds)"),
    Option("q", "real", 0.01, range=(0.0, 0.5), doc="tail mass outside each private bound",
           message="q must be a number strictly between 0 and 0.5; got {value!r}"),
), finish=_parse_bounds)

_SOURCES = {(False, False): "public", (True, True): "private",
            (True, False): "private x, public y", (False, True): "public x, private y"}


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
    return np.abs(tdot(xs, ys, 1.0, 1.0))


def select(X, y, *, k: int, eps: float, rng: np.random.Generator, ledger: Ledger | None = None,
           bounds="auto", bounds_share: float = 0.5, bounds_mode: str = "auto",
           q: float = 0.01, columns=None, term_of=None, stage: str = "selection") -> Selection:
    """Select k candidate terms by DP-SIS (004 Algorithm 1, see the module docstring), as an
    unordered set; ``eps``-DP under add/remove one row.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Candidate columns only (no intercept).
    y : array_like, shape (n,)
    k : int
        Number of terms to select, ``1 <= k <= T``.
    eps : float
        Total budget of the selector (bounds included).
    rng : numpy.random.Generator
    ledger : Ledger or None
        Charged by the mechanisms (one charge per release).
    bounds, bounds_share, bounds_mode, q
        The :data:`OPTIONS`: clipping bounds (see
        :func:`~dpstats.mechanisms.bounds.parse_bounds`; ``"auto"`` parts are private), the
        share of ``eps`` for private bounds in (0, 1) (unused, though still checked, when the
        bounds are fully public), the mode of
        :func:`~dpstats.mechanisms.bounds.private_bounds` and the tail mass outside each
        private bound.
    columns : sequence of str, optional
        Names of the columns, for ``bounds={"x": {name: (lo, hi)}, ...}``.
    term_of : sequence of int, optional
        Term ``0 .. T-1`` of each column (default: one term per column).
    stage : str
        Ledger stage of the top-k release (private bounds use ``stage + ": bounds"``).

    Returns
    -------
    Selection
        ``terms`` and their columns ``indices`` ascending (a set; ``ordered=False``), ``eps``
        the total charged, and
        ``info`` with ``bounds`` ("public", "private" or "public x, private y" / ...), ``mode``,
        ``eps_bounds`` and ``eps_topk``.

    Raises
    ------
    ValidationError
        For bad data, ``k`` (e.g. more than the number of terms), ``eps``, ``bounds``,
        ``bounds_share``, ``bounds_mode`` or ``q``, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 6))
    >>> y = X[:, 4] - X[:, 1]
    >>> select(X, y, k=2, eps=1e4, rng=rng, ledger=None, bounds=(-2, 2)).indices
    (1, 4)
    """
    Xa, ya, k, term_of = check_selector_inputs(X, y, k, term_of)
    d = Xa.shape[1]
    eps = check_eps(eps)
    check_generator(rng)
    opt = validate_options(OPTIONS, {"bounds": bounds, "bounds_share": bounds_share,
                                     "bounds_mode": bounds_mode, "q": q},
                           fixed={"d": d, "columns": columns})
    given = opt["given"]
    need = (given.x_lo is None, given.y_lo is None)
    eps_bounds = eps * opt["bounds_share"] if any(need) else 0.0
    eps_topk = eps - eps_bounds
    used = clipping_bounds(Xa, ya, given, eps_bounds, rng, ledger, mode=opt["bounds_mode"],
                           q=opt["q"], stage=f"{stage}: bounds")
    eps_bounds = used.eps if any(need) else eps_bounds
    scores = term_max(sis_scores(Xa, ya, used), term_of)
    idx = lipschitz_topk(scores, k, 1.0, eps_topk, rng, ledger, stage=stage,
                         what="DP-SIS |x_j^T y| (x, y clipped into [-1, 1])"
                         + ("" if is_columnwise(term_of) else
                            "; a term of several columns scored by the max over them"))
    picked = tuple(int(i) for i in idx)
    return Selection(indices=term_columns(picked, term_of, ordered=False), method="sis",
                     eps=math.fsum([eps_bounds, eps_topk]), ordered=False,
                     info={"bounds": _SOURCES[need], "mode": used.mode if need[0] else None,
                           "eps_bounds": eps_bounds, "eps_topk": eps_topk, "k": k, "d": d},
                     terms=picked)


def clipping_bounds(X: np.ndarray, y: np.ndarray, given: Bounds, eps: float, rng,
                    ledger: Ledger | None, *, mode: str, q: float, stage: str) -> Bounds:
    """``given`` with its missing (``"auto"``) parts estimated privately with budget ``eps``.

    Public parts are kept as they are and cost nothing; when nothing is missing ``given`` is
    returned unchanged and nothing is charged. The returned ``eps`` is what the private bounds
    charged, its ``mode`` theirs when the ``x`` bounds were estimated (else None).
    """
    need_x, need_y = given.x_lo is None, given.y_lo is None
    if not (need_x or need_y):
        return given
    est = private_bounds(X if need_x else None, y if need_y else None, eps, rng, ledger,
                         mode=mode, q=q, stage=stage)
    return Bounds(est.x_lo if need_x else given.x_lo, est.x_hi if need_x else given.x_hi,
                  est.y_lo if need_y else given.y_lo, est.y_hi if need_y else given.y_hi,
                  source="private" if need_x and need_y else "mixed",
                  mode=est.mode if need_x else None, eps=est.eps)
