"""AdaSSP: private linear regression from noisy sufficient statistics (Wang 2018, Algorithm 2).

Neighbours: add/remove one row. AdaSSP needs a bound ``B_x`` on every row's L2 norm and
``B_y`` on ``|y|``; dpstats gets them without reading the data for free:

1. **Bounds.** Public bounds from ``bounds=`` (:func:`dpstats.mechanisms.bounds.parse_bounds`) cost
   nothing. ``"auto"`` (the default) spends :data:`BOUNDS_SHARE` of ``eps`` and of ``delta`` on
   one Gaussian release of log-scale histograms of every non-intercept column and of ``y``
   (:func:`histogram_bounds`; L2 sensitivity ``sqrt(k)`` for ``k`` bounded columns). Each
   column's bounds are the outer edges of its cells whose noisy count clears a detection
   threshold, so tails thinner than the threshold are clipped. ``bounds_method="quantile"``
   uses :func:`dpstats.mechanisms.bounds.private_bounds` instead (``2 k`` exponential-mechanism
   quantiles at ``eps / (2 k)`` each: mostly noise at ``eps ~ 1`` and ``n ~ 10^4``, see
   benchmarks/adassp_bas_utility.py).
2. **Mapping.** Non-intercept columns and ``y`` go into ``[-1, 1]`` by
   :func:`dpstats.mechanisms.bounds.to_unit` (centre at the midpoint, divide by the half-width,
   clip). The intercept stays 1, so every row has ``||x'||_2 <= B_x = sqrt(p)``, p the number of
   columns **including the intercept**, and ``|y'| <= B_y = 1``, whatever the data.
3. **AdaSSP** with ``eps_r = eps - eps_bounds`` and ``delta_r = delta - delta_bounds``, both
   split in thirds over three :func:`dpstats.mechanisms.gaussian` releases (analytic
   calibration):

   * ``lambda_min(X'^T X')``: adding a row adds the PSD matrix ``x x^T``, which moves the
     smallest eigenvalue by at most ``||x||^2``: L2 sensitivity ``B_x^2``;
   * the upper triangle (diagonal included) of ``X'^T X'``, mirrored into symmetric noise:
     ``sqrt(sum_{i<=j} (x_i x_j)^2) <= ||x||^2``: L2 sensitivity ``B_x^2``;
   * ``X'^T y'``: changes by ``x y``: L2 sensitivity ``B_x B_y``.

   Ridge from the noisy eigenvalue as in Wang (2018), with the analytic sigmas in place of
   the classic ones: ``lam~ = max(lam_noisy - sigma_lam sqrt(log(6/delta)), 0)`` and
   ``ridge = max(0, sigma_xx sqrt(p log(2 p^2 / rho)) - lam~)``, ``rho = 0.05``.
4. **Back to the original scale** (post-processing): slopes ``b_j = h_y t_j / h_j``, intercept
   ``m_y + h_y t_0 - sum_j b_j m_j`` (``m``, ``h``: midpoints and half-widths). Without an
   intercept column the bounds are first made symmetric about 0, so no shift is needed.

The fit is exact for the *winsorised* predictor ``clip(x, clip_lo, clip_hi) @ params`` (the
released box is in ``info``); ``x @ params`` extrapolates linearly beyond the box.
(eps, delta)-DP by basic composition of the bounds release and the three Gaussian releases.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..mechanisms.accountant import Ledger
from ..mechanisms.additive import analytic_gaussian_sigma, gaussian
from ..mechanisms.bounds import Bounds, parse_bounds, private_bounds, to_unit
from ..mechanisms.gdp import (
    CELLS_PER_OCTAVE,
    detection_threshold,
    log_histograms,
    octave_sums,
    spans_from_histograms,
)
from ..validation import check_choice, check_delta, check_eps, check_unit
from . import LABEL_BOUNDS_REASON, Estimate, label_bound_unusable, withheld

__all__ = ["estimate", "adassp_core", "adaptive_ridge", "row_norm_bound", "clip_rows",
           "histogram_bounds", "resolve_bounds", "to_scaled", "from_scaled", "clip_box",
           "BOUNDS_SHARE", "BOUNDS_METHOD", "BOUNDS_Q", "RHO"]

#: How ``"auto"`` bounds are estimated: "hist" (:func:`histogram_bounds`) or "quantile"
#: (:func:`dpstats.mechanisms.bounds.private_bounds`).
BOUNDS_METHOD = "hist"
#: Share of ``eps`` (and, for "hist", of ``delta``) spent on private bounds by AdaSSP (0.1 and
#: 0.3 were worse on the regression files); Boosted AdaSSP uses it only for "quantile".
BOUNDS_SHARE = 0.20
#: Tail mass outside each bound for ``bounds_method="quantile"``.
BOUNDS_Q = 0.01
#: Failure probability of the ridge rule (Wang 2018).
RHO = 0.05
_METHODS = ("hist", "quantile")


def row_norm_bound(p: int) -> float:
    """``B_x = sqrt(p)``: L2 norm bound of a mapped row of ``p`` coordinates in ``[-1, 1]``
    (the intercept, 1, included)."""
    return math.sqrt(p)


def clip_rows(X: np.ndarray, norm: float = 1.0) -> np.ndarray:
    """Scale every row with L2 norm above ``norm`` down to ``norm`` (others unchanged).

    >>> np.round(clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]])), 12).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    lengths = np.linalg.norm(X, axis=1)
    return X * np.minimum(1.0, norm / np.maximum(lengths, np.finfo(float).tiny))[:, None]


def adaptive_ridge(lam_noisy: float, sigma_lam: float, sigma_xx: float, p: int, rho: float,
                   shift: float) -> float:
    """Ridge from a noisy smallest eigenvalue (Wang 2018, Alg. 2; post-processing only).

    ``lam~ = max(lam_noisy - shift * sigma_lam, 0)`` is a high-probability lower bound on the
    smallest eigenvalue and ``sigma_xx sqrt(p log(2 p^2 / rho))`` bounds the operator norm of
    the symmetric Gram noise with probability ``1 - rho``; the ridge makes up the difference.

    >>> adaptive_ridge(100.0, 1.0, 1.0, 2, 0.05, 3.0), round(adaptive_ridge(0, 1, 1, 2, .05, 3), 4)
    (0.0, 3.186)
    """
    lam_tilde = max(lam_noisy - shift * sigma_lam, 0.0)
    return max(0.0, sigma_xx * math.sqrt(p * math.log(2.0 * p * p / rho)) - lam_tilde)


def check_inputs(X, y, intercept_col, rng) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Shapes, finiteness, ``intercept_col`` and ``rng`` (nothing is charged)."""
    try:
        Xa, ya = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError("X and y must be numeric arrays; convert them first") from None
    if Xa.ndim != 2 or Xa.shape[1] == 0 or ya.ndim != 1 or Xa.shape[0] != ya.shape[0]:
        raise ValidationError(f"X must be 2-D with at least one column and y 1-D with one value "
                              f"per row; got shapes {Xa.shape} and {ya.shape}")
    if Xa.shape[0] == 0 or not (np.isfinite(Xa).all() and np.isfinite(ya).all()):
        raise ValidationError("X and y must be non-empty and finite (no NaN or inf); drop or "
                              "impute missing rows first")
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


def parse_for(bounds, X: np.ndarray, intercept_col: int | None, names) -> Bounds:
    """Validate ``bounds`` for the non-intercept columns of ``X`` (nothing is charged).

    A :class:`~dpstats.mechanisms.bounds.Bounds` is taken as given for those columns; a dict whose
    ``"x"`` is a dict by column name may name more columns than ``X`` has (after selection the
    design holds fewer columns than the user gave bounds for); the others are ignored.
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


def histogram_bounds(X, y, release) -> Bounds:
    """Private bounds from one Gaussian release of log-scale histograms of every column.

    The counts of each column of ``X`` (n, d) and of ``y`` over the public grid of
    :func:`~dpstats.mechanisms.gdp.log_histograms` (4 cells per octave, |v| in [2^-64, 2^64],
    and {0}) are stacked: adding or removing one row changes one count per column, so the
    stack has L2 sensitivity ``sqrt(k)`` for ``k`` columns. ``release(counts, sensitivity)``
    is a mechanism returning ``(noisy counts, sigma)``. Each column's bounds are the outer
    edges of its cells whose noisy count clears
    :func:`~dpstats.mechanisms.gdp.detection_threshold` (empty cells exceed it with
    probability about 1% in all); a column with no such cell gets ``(-2^64, 2^64)`` (it is then
    nearly constant after mapping). Everything after the release is post-processing.
    """
    parts = [a for a in (X, None if y is None else np.asarray(y)[:, None]) if a is not None]
    counts = log_histograms(np.hstack(parts))
    noisy, sigma = release(counts.ravel(), math.sqrt(counts.shape[0]))
    noisy = np.reshape(noisy, counts.shape)
    lo, hi = spans_from_histograms(noisy, detection_threshold(sigma, counts.size))
    # Columns with nothing above the threshold: retry on whole octaves. Summing the released
    # counts of the CELLS_PER_OCTAVE cells of each octave is post-processing; the sum's noise
    # is sigma * sqrt(CELLS_PER_OCTAVE) while its count grows CELLS_PER_OCTAVE-fold.
    miss = np.flatnonzero(hi >= 2.0 ** 64)
    if miss.size:
        coarse = octave_sums(noisy[miss])
        c_lo, c_hi = spans_from_histograms(
            coarse, detection_threshold(sigma * math.sqrt(CELLS_PER_OCTAVE), counts.size),
            per_octave=1)
        lo[miss], hi[miss] = c_lo, c_hi
    d = 0 if X is None else X.shape[1]
    return Bounds(lo[:d] if X is not None else None, hi[:d] if X is not None else None,
                  float(lo[-1]) if y is not None else None,
                  float(hi[-1]) if y is not None else None, source="private", mode="hist")


def resolve_bounds(X, y, given: Bounds, *, intercept_col, method: str, eps: float, q: float,
                   rng, ledger, stage: str, hist_release=None) -> tuple[Bounds, str]:
    """Fill the ``"auto"`` parts of ``given``: ``method="hist"`` by :func:`histogram_bounds`
    with ``hist_release``; ``"quantile"`` by :func:`~dpstats.mechanisms.bounds.private_bounds` with
    ``eps`` and ``q``. Returns ``(bounds, label)``, ``label`` one of "public", "private",
    "private x, public y", "public x, private y"."""
    feat = [j for j in range(X.shape[1]) if j != intercept_col]
    need_x, need_y = given.x_lo is None and bool(feat), given.y_lo is None
    if not (need_x or need_y):
        return given, "public"
    Xf, yf = (X[:, feat] if need_x else None), (y if need_y else None)
    est = (histogram_bounds(Xf, yf, hist_release) if method == "hist" else
           private_bounds(Xf, yf, eps, rng, ledger, q=q, stage=f"{stage}: bounds"))
    label = {(True, True): "private", (True, False): "private x, public y",
             (False, True): "public x, private y" if feat else "private"}[(need_x, need_y)]
    out = Bounds(est.x_lo if need_x else given.x_lo, est.x_hi if need_x else given.x_hi,
                 est.y_lo if need_y else given.y_lo, est.y_hi if need_y else given.y_hi,
                 source="private" if label == "private" else "mixed", mode=est.mode,
                 eps=est.eps)
    return out, label


def _affine(b: Bounds, p: int, intercept_col) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Midpoints and half-widths of all p columns (intercept: 0 and 1) and of y; symmetric
    about 0 when there is no intercept column."""
    feat = [j for j in range(p) if j != intercept_col]
    lo, hi = np.zeros(p), np.ones(p)
    lo[feat], hi[feat] = b.x_lo, b.x_hi
    ylo, yhi = float(b.y_lo), float(b.y_hi)
    if intercept_col is None:
        r = np.maximum(np.abs(lo), np.abs(hi))
        lo, hi = -r, r
        ylo, yhi = -max(abs(ylo), abs(yhi)), max(abs(ylo), abs(yhi))
    mid, half = lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0
    if intercept_col is not None:
        mid[intercept_col], half[intercept_col] = 0.0, 1.0
    return mid, half, ylo / 2.0 + yhi / 2.0, yhi / 2.0 - ylo / 2.0


def clip_box(b: Bounds, p: int, intercept_col) -> tuple[np.ndarray, np.ndarray]:
    """Per-column clipping box of the design (intercept: ``(-inf, inf)``).

    ``np.clip(X, lo, hi) @ params`` is exactly the model fitted on the mapped data.
    """
    mid, half, _, _ = _affine(b, p, intercept_col)
    lo, hi = mid - half, mid + half
    if intercept_col is not None:
        lo[intercept_col], hi[intercept_col] = -np.inf, np.inf
    return lo, hi


def to_scaled(X, y, b: Bounds, intercept_col) -> tuple[np.ndarray, np.ndarray]:
    """Map the non-intercept columns and y into ``[-1, 1]`` (clipped); the intercept stays 1.

    Every row of the result has L2 norm at most ``sqrt(p)`` and ``|y'| <= 1``, whatever the
    data.
    """
    mid, half, my, hy = _affine(b, X.shape[1], intercept_col)
    Xs = to_unit(X, mid - half, mid + half)
    if intercept_col is not None:
        Xs[:, intercept_col] = 1.0
    return Xs, to_unit(y, my - hy, my + hy)


def from_scaled(theta, b: Bounds, p: int, intercept_col) -> np.ndarray:
    """Coefficients on the original scale from coefficients on the mapped scale."""
    mid, half, my, hy = _affine(b, p, intercept_col)
    theta = np.asarray(theta, dtype=np.float64)
    beta = hy * theta / half
    if intercept_col is not None:
        feat = np.arange(p) != intercept_col
        beta[intercept_col] = my + hy * theta[intercept_col] - float(beta[feat] @ mid[feat])
    return beta


def adassp_core(Xs, ys, eps: float, delta: float, rng, ledger, *, rho: float, stage: str,
                B_x: float, B_y: float = 1.0) -> tuple[np.ndarray, float]:
    """AdaSSP on rows with L2 norm <= ``B_x`` and ``|y| <= B_y``: ``(theta, ridge)``.

    Three Gaussian releases at ``(eps/3, delta/3)`` each, L2 sensitivities ``B_x^2``,
    ``B_x^2`` (upper triangle of the Gram matrix) and ``B_x B_y`` under add/remove one row.
    """
    p = Xs.shape[1]
    e3, d3 = eps / 3.0, delta / 3.0
    s_xx, s_xy = B_x * B_x, B_x * B_y
    gram = Xs.T @ Xs
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    lam_noisy = gaussian(lam_min, s_xx, e3, d3, rng, ledger, stage=stage,
                         what="smallest eigenvalue of X'X (mapped data)")
    iu = np.triu_indices(p)
    tri = gaussian(gram[iu], s_xx, e3, d3, rng, ledger, stage=stage,
                   what="upper triangle of X'X (mapped data), symmetric noise")
    xty = gaussian(Xs.T @ ys, s_xy, e3, d3, rng, ledger, stage=stage, what="X'y (mapped data)")
    gram_noisy = np.zeros((p, p))
    gram_noisy[iu] = tri
    gram_noisy = gram_noisy + np.triu(gram_noisy, 1).T
    sigma = analytic_gaussian_sigma(s_xx, e3, d3)          # eigenvalue and Gram noise alike
    ridge = adaptive_ridge(lam_noisy, sigma, sigma, p, rho, math.sqrt(math.log(6 / delta)))
    A = gram_noisy + ridge * np.eye(p)
    try:
        theta = np.linalg.solve(A, np.atleast_1d(xty))
    except np.linalg.LinAlgError:
        theta = np.linalg.lstsq(A, np.atleast_1d(xty), rcond=None)[0]
    return theta, ridge


def check_options(bounds_method: str = BOUNDS_METHOD, bounds_share: float = BOUNDS_SHARE,
                  q: float = BOUNDS_Q, rho: float = RHO) -> tuple[float, float, float]:
    """Validate AdaSSP's options (touches no data, charges nothing): ``(bounds_share, q, rho)``.

    >>> check_options(rho=0.1)
    (0.2, 0.01, 0.1)
    """
    check_choice(bounds_method, _METHODS, "bounds_method")
    return (check_unit(bounds_share, "bounds_share", 0.0, 1.0), check_unit(q, "q", 0.0, 0.5),
            check_unit(rho, "rho", 0.0, 1.0))


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None,
             intercept_col: int | None = None, names=None, bounds="auto",
             bounds_method: str = BOUNDS_METHOD, bounds_share: float = BOUNDS_SHARE,
             q: float = BOUNDS_Q, rho: float = RHO, stage: str = "regression",
             **_: object) -> Estimate:
    """Private linear regression by AdaSSP on bounded, rescaled data.

    Neighbours: add/remove one row. With ``p`` columns including the intercept,
    ``B_x = sqrt(p)`` and ``B_y = 1`` after mapping, the L2 sensitivities are: smallest
    eigenvalue of ``X'X`` and upper triangle of ``X'X``: ``B_x^2``; ``X'y``: ``B_x``;
    histograms for private bounds: ``sqrt(k)`` (k bounded columns). (eps, delta)-DP; see the
    module docstring.

    Parameters
    ----------
    X, y : arrays
        Design matrix (intercept column included when the model has one) and label.
    eps, delta : float
        Budget of this stage. ``"auto"`` bounds take ``bounds_share`` of both ("quantile":
        of eps only); the rest is split in thirds over the three Gaussian releases.
    rng : numpy.random.Generator
    ledger : Ledger, optional
        Charged by every release (one for "hist" bounds, 2 per bounded column for
        "quantile", then three Gaussian releases).
    intercept_col : int or None
        Index of the all-ones column; it is neither bounded nor rescaled.
    names : sequence of str, optional
        Column names, for ``bounds={"x": {name: (lo, hi)}, "y": ...}``.
    bounds : "auto", (lo, hi), dict or Bounds
        See :func:`dpstats.mechanisms.bounds.parse_bounds`; ``"x"`` covers the non-intercept
        columns.
    bounds_method : {"hist", "quantile"}
        How ``"auto"`` bounds are estimated.
    bounds_share, q, rho : float
        Share of the budget for private bounds, the tail level of "quantile" bounds, and the
        failure probability of the ridge rule.

    Returns
    -------
    Estimate
        ``params`` on the original scale. ``info`` (public): ``bounds`` ("public", "private"
        or mixed), ``ridge`` (released, mapped scale), ``eps_bounds``/``delta_bounds``,
        ``B_x``, ``clip_lo``/``clip_hi`` (the released per-column box; intercept +-inf).

    Raises
    ------
    ValidationError
        For bad data or arguments, before anything is charged.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[np.ones(5000), rng.uniform(-1, 1, 5000)]
    >>> est = estimate(X, 2 + X[:, 1], eps=1e6, delta=1e-5, rng=rng, intercept_col=0,
    ...                bounds=(-4, 4))
    >>> np.round(est.params, 2).tolist(), est.info["bounds"]
    ([2.0, 1.0], 'public')
    """
    eps, delta = check_eps(eps), check_delta(delta)
    Xa, ya, intercept_col = check_inputs(X, y, intercept_col, rng)
    share, q, rho = check_options(bounds_method, bounds_share, q, rho)
    given = parse_for(bounds, Xa, intercept_col, names)
    p = Xa.shape[1]
    b, label, eps_b, delta_b = given, "public", 0.0, 0.0
    if given.x_lo is None or given.y_lo is None:
        eps_b = share * eps
        delta_b = share * delta if bounds_method == "hist" else 0.0

        def release(v, s):
            out = gaussian(v, s, eps_b, delta_b, rng, ledger, stage=f"{stage}: bounds",
                           what="log-scale histograms of the bounded columns")
            return out, analytic_gaussian_sigma(s, eps_b, delta_b)

        b, label = resolve_bounds(Xa, ya, given, intercept_col=intercept_col,
                                  method=bounds_method, eps=eps_b, q=q, rng=rng, ledger=ledger,
                                  stage=stage, hist_release=release)
        eps_b = b.eps if bounds_method == "quantile" else eps_b
    lo, hi = clip_box(b, p, intercept_col)
    Xs, ys = to_scaled(Xa, ya, b, intercept_col)
    B_x = row_norm_bound(p)
    theta, ridge = adassp_core(Xs, ys, eps - eps_b, delta - delta_b, rng, ledger, rho=rho,
                               stage=stage, B_x=B_x)
    info = {"bounds": label, "ridge": ridge, "eps_bounds": eps_b, "delta_bounds": delta_b,
            "B_x": B_x, "clip_lo": lo, "clip_hi": hi}
    if label != "public" and label_bound_unusable(b.y_lo, b.y_hi):
        return withheld(p, info, LABEL_BOUNDS_REASON)
    return Estimate(params=from_scaled(theta, b, p, intercept_col), released=True, info=info)
