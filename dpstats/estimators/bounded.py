"""The bounded design shared by AdaSSP, Boosted AdaSSP, Frank-Wolfe and DP-GD.

These methods need every non-intercept column (and, for a real-valued label, ``y``) inside a
known box. Neighbours: add/remove one row. One helper does it for all four:

1. :func:`plan_bounds` parses the user's ``bounds`` for the design's columns and says which
   parts must be released privately (nothing is charged).
2. :func:`bounded_design` releases those parts with a releaser of
   :mod:`dpstats.estimators.bounds_release` (log-scale histograms, L2 sensitivity ``sqrt(k)``
   for ``k`` columns, through a Gaussian mechanism or a part of a Gaussian-DP plan; or
   exponential-mechanism quantiles), then maps the columns and the label into ``[-1, 1]``
   (:func:`dpstats.mechanisms.bounds.to_unit`, clipping; the intercept stays 1; without an
   intercept the bounds are made symmetric about 0 so the map needs no offset). Everything
   after the releases is post-processing. :func:`budgeted_design` does the same with the
   releases paid from a share of ``(eps, delta)`` (AdaSSP, Frank-Wolfe, BAS's quantiles).
3. The :class:`BoundedDesign` holds the mapped data, the released clip box, the back-map of
   coefficients (:meth:`BoundedDesign.to_original`) and the one withhold decision
   (:attr:`BoundedDesign.unusable`: the label's bounds were released and are too wide to map
   back, :func:`label_bound_unusable`).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from ..mechanisms.bounds import Bounds, parse_bounds, to_unit
from .bounds_release import (
    BoundsPlan,
    Releaser,
    abs_quantile_release,
    gaussian_hist_release,
    hist_release,
    histogram_bounds,
    quantile_release,
)

__all__ = ["BoundsPlan", "BoundedDesign", "plan_bounds", "bounded_design", "budgeted_design",
           "check_inputs",
           "parse_bounds_for", "histogram_bounds", "hist_release", "gaussian_hist_release",
           "quantile_release", "abs_quantile_release", "label_bound_unusable",
           "UNUSABLE_HALF_WIDTH", "BOUNDS_METHODS", "WIDE"]

#: How ``"auto"`` bounds can be released: log-histograms or exponential-mechanism quantiles.
BOUNDS_METHODS = ("hist", "quantile")
#: A privately released label bound with half-width at or beyond this is unusable: the
#: log-histogram found no cell above its noise threshold (it then returns +-2^64) or a quantile
#: release landed in an unbounded end cell (+-2^65). Mapping back to the label's scale would
#: multiply the coefficients by ~1e19.
UNUSABLE_HALF_WIDTH = 2.0 ** 62
#: :meth:`BoundedDesign.unclipped` keeps mapped values within ``+-WIDE`` (a public bound far
#: outside the unit box, so that residuals computed from them stay finite).
WIDE = 2.0 ** 20
#: A released histogram bound at or beyond this half-width found nothing (it is +-2^64).
_FAILED_HALF_WIDTH = 2.0 ** 63


def label_bound_unusable(y_lo, y_hi) -> bool:
    """True when released label bounds ``(y_lo, y_hi)`` are too wide to map back from.

    >>> label_bound_unusable(-2.0 ** 64, 2.0 ** 64), label_bound_unusable(0.0, 5e5)
    (True, False)
    """
    return y_lo is not None and (float(y_hi) - float(y_lo)) / 2.0 >= UNUSABLE_HALF_WIDTH


def check_inputs(X, y, intercept_col, rng) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Shapes, finiteness, ``intercept_col`` and ``rng`` (nothing is charged)."""
    try:
        Xa, ya = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError("X and y must be numeric arrays; convert them first") from None
    if Xa.ndim != 2 or Xa.shape[1] == 0 or ya.ndim != 1 or Xa.shape[0] != ya.shape[0]:
        raise ValidationError(f"X must be 2-D with at least one column and y 1-D with one value "
                              f"per row; got shapes {Xa.shape} and {ya.shape}")
    if not (np.isfinite(Xa).all() and np.isfinite(ya).all()):   # no rows is fine (private n)
        raise ValidationError("X and y must be finite (no NaN or inf); drop or impute missing "
                              "rows first")
    if intercept_col is not None:
        if isinstance(intercept_col, bool) or not isinstance(intercept_col, numbers.Integral) \
                or not 0 <= intercept_col < Xa.shape[1]:
            raise ValidationError(f"intercept_col must be None or a column index in "
                                  f"0..{Xa.shape[1] - 1}; got {intercept_col!r}")
        intercept_col = int(intercept_col)
    if not isinstance(rng, np.random.Generator):
        raise ValidationError(f"rng must be a numpy.random.Generator (see "
                              f"dpstats.mechanisms.rng.as_rng); got {type(rng).__name__}")
    return Xa, ya, intercept_col


def parse_bounds_for(bounds, X: np.ndarray, intercept_col: int | None, names) -> Bounds:
    """Validate ``bounds`` for the non-intercept columns of ``X`` (nothing is charged).

    A :class:`~dpstats.mechanisms.bounds.Bounds` is taken as given for those columns; a dict
    whose ``"x"`` is a dict by column name may name more columns than ``X`` has (after
    selection the design holds fewer columns than the user gave bounds for); the others are
    ignored.
    """
    feat = [j for j in range(X.shape[1]) if j != intercept_col]
    if isinstance(bounds, Bounds):
        if bounds.x_lo is not None and bounds.x_lo.shape != (len(feat),):
            raise ValidationError(f"bounds.x_lo must have one entry per non-intercept column "
                                  f"({len(feat)}); got shape {bounds.x_lo.shape}")
        return bounds
    if not feat:                      # intercept only: just the y part matters
        if isinstance(bounds, dict):
            bounds = {"x": "auto", "y": bounds.get("y", "auto")}
        parsed = parse_bounds(bounds, 1)
        return Bounds(np.empty(0), np.empty(0), parsed.y_lo, parsed.y_hi, source=parsed.source)
    feat_names = [names[j] for j in feat] if names is not None else None
    if isinstance(bounds, dict) and isinstance(bounds.get("x"), dict) and feat_names:
        bounds = {**bounds, "x": {k: v for k, v in bounds["x"].items() if k in feat_names}}
    return parse_bounds(bounds, len(feat), columns=feat_names)


def plan_bounds(X: np.ndarray, bounds, *, intercept_col: int | None, names=None,
                label: bool = True, known: Mapping | None = None) -> BoundsPlan:
    """Parse ``bounds`` for the design ``X`` (nothing is charged).

    Parameters
    ----------
    X : ndarray (n, p)
        The design (only its shape is read).
    bounds : "auto", (lo, hi), dict or Bounds
        As in :func:`parse_bounds_for`.
    intercept_col : int or None
    names : sequence of str, optional
        Column names, for bounds given by name.
    label : bool
        Whether the label is bounded (False: a 0/1 label, left as it is).
    known : dict {column: (lo, hi)}, optional
        Public ranges known by construction; they override ``bounds`` for those columns.

    Returns
    -------
    BoundsPlan
    """
    given = parse_bounds_for(bounds, X, intercept_col, names)
    features = tuple(j for j in range(X.shape[1]) if j != intercept_col)
    known = {int(j): (float(lo), float(hi)) for j, (lo, hi) in (known or {}).items()}
    return BoundsPlan(given, features, intercept_col, known, label)


@dataclass(frozen=True)
class BoundedDesign:
    """A design mapped into the unit box, with everything needed to map a fit back.

    ``X`` (n, p): features in ``[-1, 1]``, the intercept 1, dropped columns 0. ``y``: the label
    in ``[-1, 1]`` (None for an unbounded 0/1 label). ``mid``/``half`` (p,) and
    ``y_mid``/``y_half``: the affine map (intercept and unbounded label: 0 and 1). ``clip_lo``/
    ``clip_hi``: the released box (intercept and dropped columns: -inf, inf); ``y_box``: the
    label's. ``bounds``: the resolved bounds (``eps``: what their release charged; ``hist``:
    the released histograms behind a private box, read by
    :mod:`dpstats.estimators.inference.glm_tail`).
    ``unusable``: the label's released bounds cannot be mapped back; withhold the fit.
    """

    X: np.ndarray
    y: np.ndarray | None
    mid: np.ndarray
    half: np.ndarray
    y_mid: float
    y_half: float
    clip_lo: np.ndarray
    clip_hi: np.ndarray
    y_box: tuple[float, float] | None
    intercept_col: int | None
    dropped: tuple[int, ...]
    bounds: Bounds
    source: str
    unusable: bool

    @property
    def clip(self) -> tuple[np.ndarray, np.ndarray]:
        """``(clip_lo, clip_hi)``."""
        return self.clip_lo, self.clip_hi

    @property
    def kept(self) -> tuple[int, ...]:
        """Features not dropped, then the intercept (if any)."""
        icol = self.intercept_col
        return tuple(j for j in range(self.mid.size) if j != icol and j not in self.dropped) \
            + (() if icol is None else (icol,))

    @property
    def no_interval(self) -> tuple[int, ...]:
        """Columns whose coefficient gets no interval: the dropped ones, and those whose
        released box has a half-width of :data:`UNUSABLE_HALF_WIDTH` or more (a spurious
        histogram cell near the grid's end: the coefficient is mapped back by a factor of
        about 1e-19 and its bootstrap spread collapses to a point). Public: a function of the
        released bounds.

        >>> import numpy as np
        >>> d = BoundedDesign(X=np.zeros((1, 3)), y=None, mid=np.zeros(3),
        ...                   half=np.array([1.0, 2.0 ** 62.3, 1.0]), y_mid=0.0, y_half=1.0,
        ...                   clip_lo=np.zeros(3), clip_hi=np.ones(3), y_box=None,
        ...                   intercept_col=2, dropped=(0,), bounds=None, source="",
        ...                   unusable=False)
        >>> d.no_interval
        (0, 1)
        """
        wide = {j for j in range(self.mid.size) if j != self.intercept_col
                and self.half[j] >= UNUSABLE_HALF_WIDTH}
        return tuple(sorted(set(self.dropped) | wide))

    def unclipped(self, X: np.ndarray, y: np.ndarray | None,
                  wide: float = WIDE) -> tuple[np.ndarray, np.ndarray]:
        """``X`` and ``y`` through the same affine map as :attr:`X` and :attr:`y` but clipped
        to ``[-wide, wide]`` instead of the unit box (default: ``WIDE``, practically not at
        all): the intercept 1, dropped columns 0, an unbounded label as it is. Values of rows,
        not a release: BAS computes its clipped residuals from them (the residual clip, not the
        box, bounds a row's influence).

        >>> d = bounded_design(np.c_[np.ones(3), [0.0, 1.0, 9.0]], np.array([0.0, 2.0, 20.0]),
        ...                    plan_bounds(np.ones((3, 2)), (0, 2), intercept_col=0))
        >>> Xl, yl = d.unclipped(np.c_[np.ones(3), [0.0, 1.0, 9.0]], np.array([0.0, 2.0, 20.0]))
        >>> d.X[:, 1].tolist(), Xl[:, 1].tolist(), yl.tolist()
        ([-1.0, 0.0, 1.0], [-1.0, 0.0, 8.0], [-1.0, 1.0, 19.0])
        """
        kept = [j for j in self.kept if j != self.intercept_col]
        Xl = np.zeros_like(X, dtype=np.float64)
        with np.errstate(over="ignore"):
            if kept:
                Xl[:, kept] = np.clip((X[:, kept] - self.mid[kept]) / self.half[kept],
                                      -wide, wide)
            yl = None if self.y is None else np.clip((np.asarray(y, dtype=np.float64)
                                                      - self.y_mid) / self.y_half, -wide, wide)
        if self.intercept_col is not None:
            Xl[:, self.intercept_col] = 1.0
        return Xl, (y if yl is None else yl)

    def to_original(self, theta) -> np.ndarray:
        """Coefficients on the original scale from coefficients ``theta`` on the mapped scale:
        slopes ``h_y t_j / h_j``, intercept ``m_y + h_y t_0 - sum_j b_j m_j`` (for a design
        without dropped columns; DP-GD maps its own fit back)."""
        theta = np.asarray(theta, dtype=np.float64)
        beta = self.y_half * theta / self.half
        icol = self.intercept_col
        if icol is not None:
            feat = np.arange(self.mid.size) != icol
            beta[icol] = self.y_mid + self.y_half * theta[icol] \
                - float(beta[feat] @ self.mid[feat])
        return beta


def _resolve(plan: BoundsPlan, X, y, release: Releaser | None) -> Bounds:
    """The given bounds with the private parts released (``known`` ranges win)."""
    given = plan.given
    est = release(plan, X, y) if plan.private else None
    x_lo, x_hi = given.x_lo, given.x_hi
    if plan.features and (plan.auto_x or plan.known):
        x_lo, x_hi = np.empty(len(plan.features)), np.empty(len(plan.features))
        for k, j in enumerate(plan.features):
            src = (plan.known[j] if j in plan.known else
                   (given.x_lo[k], given.x_hi[k]) if given.x_lo is not None else
                   (est.x_lo[k], est.x_hi[k]))
            x_lo[k], x_hi[k] = src
    y_lo, y_hi = (est.y_lo, est.y_hi) if plan.need_y else (given.y_lo, given.y_hi)
    if est is None:                 # nothing released here, nothing charged
        return Bounds(x_lo, x_hi, y_lo, y_hi, source=given.source, mode=given.mode)
    hist = None                     # the released histograms of the columns whose box they gave
    if est.hist is not None and plan.auto_x:
        hist = est.hist.for_columns({j: plan.features.index(j) for j in plan.private_features})
    return Bounds(x_lo, x_hi, y_lo, y_hi, source="private", mode=est.mode, eps=est.eps,
                  hist=hist)


def _affine(lo, hi, symmetric: bool):
    if symmetric:
        r = np.maximum(np.abs(lo), np.abs(hi))
        lo, hi = -r, r
    return lo, hi, lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0


def bounded_design(X: np.ndarray, y: np.ndarray, plan: BoundsPlan,
                   release: Releaser | None = None, *, box: str = "centre",
                   drop_below: float | None = None, drop_failed: bool = False) -> BoundedDesign:
    """Release what ``plan`` needs with ``release`` and map ``X`` and ``y`` into the unit box.

    Parameters
    ----------
    X, y : ndarray
        The design (intercept column all ones) and label.
    plan : BoundsPlan
        From :func:`plan_bounds`.
    release : releaser, optional
        :func:`hist_release`, :func:`quantile_release` or :func:`abs_quantile_release`; needed
        when ``plan.private``. It charges the ledger; nothing else here does.
    box : {"centre", "bounds"}
        The box that is mapped onto ``[-1, 1]`` and released as the clip box: ``mid -+ half``
        (AdaSSP, BAS, DP-GD) or the resolved bounds themselves (Frank-Wolfe). They agree up to
        rounding; each method keeps the one its releases have always used.
    drop_below, drop_failed
        DP-GD: drop (coefficient 0) the columns whose half-width is at most ``drop_below``,
        and with ``drop_failed`` those not in ``plan.known`` whose half-width reached the top
        of the histogram grid (2^63, nothing released).

    Returns
    -------
    BoundedDesign
    """
    b = _resolve(plan, X, y, release)
    p, icol, feat = X.shape[1], plan.intercept_col, list(plan.features)
    lo, hi = np.zeros(p), np.ones(p)
    if feat:
        lo[feat], hi[feat] = b.x_lo, b.x_hi
    lo, hi, mid, half = _affine(lo, hi, icol is None)
    if icol is not None:
        mid[icol], half[icol] = 0.0, 1.0
    y_mid, y_half, y_box = 0.0, 1.0, None
    if plan.label:
        y_lo, y_hi, y_mid, y_half = _affine(float(b.y_lo), float(b.y_hi), icol is None)
        y_lo, y_hi = float(y_lo), float(y_hi)
        y_box = (y_lo, y_hi) if box == "bounds" else (y_mid - y_half, y_mid + y_half)
    if drop_failed:
        half[[j for j in feat if j not in plan.known and half[j] >= _FAILED_HALF_WIDTH]] = 0.0
    dropped = tuple(j for j in feat if drop_below is not None and not half[j] > drop_below)
    kept = [j for j in feat if j not in dropped]
    box_lo, box_hi = (lo, hi) if box == "bounds" else (mid - half, mid + half)
    clip_lo, clip_hi = np.full(p, -np.inf), np.full(p, np.inf)
    clip_lo[kept], clip_hi[kept] = box_lo[kept], box_hi[kept]
    Xs = np.zeros_like(X, dtype=np.float64)      # the memory layout of X (C or Fortran)
    if kept:
        Xs[:, kept] = to_unit(X[:, kept], box_lo[kept], box_hi[kept])
    if icol is not None:
        Xs[:, icol] = 1.0
    return BoundedDesign(
        X=Xs, y=None if y_box is None else to_unit(y, *y_box), mid=mid, half=half,
        y_mid=float(y_mid), y_half=float(y_half), clip_lo=clip_lo, clip_hi=clip_hi,
        y_box=y_box, intercept_col=icol, dropped=dropped, bounds=b,
        source=plan.source(), unusable=plan.need_y and label_bound_unusable(b.y_lo, b.y_hi))


def budgeted_design(X: np.ndarray, y: np.ndarray, plan: BoundsPlan, *, method: str, share: float,
                    eps: float, delta: float, q: float, rng, ledger, stage: str,
                    mode: str = "auto", box: str = "centre",
                    counts_of=None) -> tuple[BoundedDesign, float, float]:
    """:func:`bounded_design` whose private bounds take ``share`` of ``(eps, delta)``.

    ``method="hist"``: one Gaussian release of histograms at ``(share eps, share delta)``
    (:func:`gaussian_hist_release`); ``"quantile"``: ``private_bounds`` at ``share eps``
    (:func:`quantile_release` with ``q`` and ``mode``). Nothing is charged when ``plan`` needs
    no private bounds. ``counts_of``: the histograms of "hist", computed elsewhere (dask).

    Returns
    -------
    (BoundedDesign, float, float)
        The design and the ``(eps, delta)`` its bounds charged.
    """
    if not plan.private:
        return bounded_design(X, y, plan, box=box), 0.0, 0.0
    if method == "hist":
        eps_b, delta_b = share * eps, share * delta
        release = gaussian_hist_release(eps_b, delta_b, rng, ledger, stage=stage,
                                        counts_of=counts_of)
        return bounded_design(X, y, plan, release, box=box), eps_b, delta_b
    release = quantile_release(share * eps, q, rng, ledger, stage=stage, mode=mode)
    design = bounded_design(X, y, plan, release, box=box)
    return design, design.bounds.eps, 0.0
