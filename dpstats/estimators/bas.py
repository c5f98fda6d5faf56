"""Boosted AdaSSP (Tang et al. 2023; the BAS baseline of 003 section 4.2), in Gaussian DP.

Neighbours: add/remove one row. On rows ``x''`` of L2 norm at most 1 and residuals clipped to
``[-1, 1]``:

1. release the upper triangle of ``X''^T X''`` with symmetric noise (L2 sensitivity
   ``||x||^2 <= 1``) and the smallest eigenvalue of ``X''^T X''`` (sensitivity 1: adding a row
   adds the PSD matrix ``x x^T``);
2. ridge from the noisy eigenvalue (:func:`dpstats.estimators.adassp.adaptive_ridge`, shift
   ``sqrt(2 log(1/rho))`` noise sigmas), ``G = (noisy X''^T X'' + ridge I)^+``;
3. ``T`` boosting rounds from ``theta = 0``: ``r = clip(y - X'' theta, -1, 1)``, release
   ``g = X''^T r`` (L2 sensitivity ``||x|| |r| <= 1``) and step ``theta += shrinkage G g``.

All Gaussian releases compose adaptively under Gaussian DP
(:class:`dpstats.mechanisms.gdp.GaussianGDP`): the total ``mu`` is the **largest** with
``delta(mu) <= delta`` at ``eps`` (:func:`dpstats.mechanisms.gdp.gdp_mu`, bisection; the
reference code returns the first grid value that violates ``delta``). ``mu^2`` is shared by the
parts in proportion to ``split``; each round gets ``1/T`` of the rounds' share.

Variants
--------
``"scaled"`` (default): bounds as in :mod:`dpstats.estimators.adassp` map every non-intercept
column and ``y`` into ``[-1, 1]`` (public bounds, or ``"auto"``: the log-histogram release of
:func:`dpstats.estimators.adassp.histogram_bounds` as one more part of the same GDP plan, L2
sensitivity ``sqrt(k)`` for k bounded columns); the intercept stays 1; rows are divided by
``sqrt(p)`` (a public constant: the model stays linear and ``||x''|| <= 1`` exactly); the
coefficients are mapped back to the original scale. Defaults measured on the ten regression
files (benchmarks/adassp_bas_utility.py): ``shrinkage = 0.1`` and ``split = (1, 0.1, 2, 1)``
for (Gram, eigenvalue, rounds, bounds).

``"paper"``: the reference behaviour of 003: raw rows (intercept included) clipped to L2 norm
1, raw labels, residuals clipped to 1, no bounds, ``shrinkage = 1``, ``mu^2`` in thirds. The
reference's privacy defects are not repeated (``mu`` is the largest meeting ``delta``; Gram
noise is symmetric).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ValidationError
from ..mechanisms.accountant import Ledger
from ..mechanisms.gdp import GaussianGDP
from ..validation import check_choice, check_delta, check_eps, check_unit
from . import LABEL_BOUNDS_REASON, Estimate, label_bound_unusable, withheld
from .adassp import (
    BOUNDS_METHOD,
    BOUNDS_Q,
    BOUNDS_SHARE,
    RHO,
    adaptive_ridge,
    check_inputs,
    clip_box,
    clip_rows,
    from_scaled,
    parse_for,
    resolve_bounds,
    row_norm_bound,
    to_scaled,
)

__all__ = ["estimate", "boost", "T_DEFAULT", "DEFAULTS"]

#: Default number of boosting rounds (003 and Tang et al.).
T_DEFAULT = 100
#: Per variant: shrinkage and the shares of mu^2 for (Gram, eigenvalue, all rounds, bounds).
DEFAULTS = {"scaled": (0.1, (1.0, 0.1, 2.0, 1.0)), "paper": (1.0, (1.0, 1.0, 1.0, 0.0))}


def boost(Xn: np.ndarray, y: np.ndarray, plan: GaussianGDP, T: int, shrinkage: float,
          rho: float) -> tuple[np.ndarray, float]:
    """Boosted AdaSSP on rows of norm <= 1 with residuals clipped to 1: ``(theta, ridge)``.

    Releases through ``plan``: ``"gram"`` (sensitivity 1), ``"lambda_min"`` (sensitivity 1)
    and ``T`` times ``"rounds"`` (``X^T r``, sensitivity 1).
    """
    p = Xn.shape[1]
    gram = Xn.T @ Xn
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    gram_noisy = plan.release("gram", gram, 1.0, symmetric=True)
    lam_noisy = plan.release("lambda_min", lam_min, 1.0)
    ridge = adaptive_ridge(lam_noisy, plan.sigma("lambda_min", 1.0), plan.sigma("gram", 1.0),
                           p, rho, math.sqrt(2.0 * math.log(1.0 / rho)))
    G = np.linalg.pinv(gram_noisy + ridge * np.eye(p), hermitian=True)
    theta = np.zeros(p)
    for _ in range(T):
        r = np.clip(y - Xn @ theta, -1.0, 1.0)
        theta += shrinkage * (G @ plan.release("rounds", Xn.T @ r, 1.0))
    return theta, ridge


def _check_split(split, variant: str) -> list[float]:
    if split is None:
        return list(DEFAULTS[variant][1])
    try:
        w = [float(s) for s in split]
    except (TypeError, ValueError):
        w = []
    if len(w) == 3:
        w.append(DEFAULTS[variant][1][3])
    if len(w) != 4 or not all(math.isfinite(s) and s >= 0 for s in w) or min(w[:3]) <= 0:
        raise ValidationError(f"split must be 3 or 4 numbers: positive shares of mu^2 for the "
                              f"Gram matrix, the eigenvalue and the rounds, and a share >= 0 "
                              f"for histogram bounds; got {split!r}")
    return w


def check_options(variant: str = "scaled", T: int = T_DEFAULT, shrinkage: float | None = None,
                  split=None, bounds_method: str = BOUNDS_METHOD,
                  bounds_share: float = BOUNDS_SHARE, q: float = BOUNDS_Q, rho: float = RHO):
    """Validate Boosted AdaSSP's options (touches no data, charges nothing).

    Returns ``(T, shrinkage, split shares, bounds_share, q, rho)`` with the defaults filled in.

    >>> check_options(T=50)[:2]
    (50, 0.1)
    """
    check_choice(variant, tuple(DEFAULTS), "variant")
    check_choice(bounds_method, ("hist", "quantile"), "bounds_method")
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or not 1 <= T <= 100_000:
        raise ValidationError(f"T (boosting rounds) must be an integer in 1..100000, e.g. 100; "
                              f"got {T!r}")
    shrinkage = DEFAULTS[variant][0] if shrinkage is None else \
        check_unit(shrinkage, "shrinkage", 0.0, 1.0, closed=True)
    return (int(T), shrinkage, _check_split(split, variant),
            check_unit(bounds_share, "bounds_share", 0.0, 1.0), check_unit(q, "q", 0.0, 0.5),
            check_unit(rho, "rho", 0.0, 1.0))


def estimate(X: np.ndarray, y: np.ndarray, *, eps: float, delta: float,
             rng: np.random.Generator, ledger: Ledger | None = None,
             intercept_col: int | None = None, names=None, bounds="auto",
             variant: str = "scaled", T: int = T_DEFAULT, shrinkage: float | None = None,
             split=None, bounds_method: str = BOUNDS_METHOD, bounds_share: float = BOUNDS_SHARE,
             q: float = BOUNDS_Q, rho: float = RHO, stage: str = "regression",
             **_: object) -> Estimate:
    """Private linear regression by Boosted AdaSSP.

    Neighbours: add/remove one row. Every Gaussian release of the boosting has L2 sensitivity 1
    (rows of norm <= 1, residuals clipped to 1: Gram upper triangle and eigenvalue
    ``||x||^2``, ``X^T r``: ``||x|| |r|``); the histograms for ``"auto"`` bounds have
    ``sqrt(k)`` for k bounded columns. (eps, delta)-DP: all Gaussian releases together are
    ``mu``-GDP with ``delta(mu) <= delta`` at ``eps`` (``bounds_method="quantile"``: its
    exponential-mechanism quantiles take ``bounds_share * eps`` first, basic composition).

    Parameters
    ----------
    X, y : arrays
        Design matrix (intercept column included when the model has one) and label.
    eps, delta : float
        Budget of this stage.
    rng : numpy.random.Generator
    ledger : Ledger, optional
        Charged once for the composed GDP release (detail: total ``mu`` and every part's
        per-release ``mu``; ``sigma = sensitivity / mu``), plus the quantile releases of
        ``bounds_method="quantile"``.
    intercept_col : int or None
        Index of the all-ones column (not bounded, not rescaled).
    names : sequence of str, optional
        Column names, for bounds given by name.
    bounds : "auto", (lo, hi), dict or Bounds
        As in :func:`dpstats.estimators.adassp.estimate`; ignored by ``variant="paper"``.
    variant : {"scaled", "paper"}
        See the module docstring.
    T : int
        Boosting rounds (default 100, as 003).
    shrinkage : float in (0, 1], optional
        Step size; default 0.1 for "scaled", 1 (003) for "paper".
    split : 3 or 4 numbers, optional
        Shares of ``mu^2`` for the Gram matrix, the eigenvalue, all rounds together and the
        bounds histograms; default per variant (:data:`DEFAULTS`).
    bounds_method, bounds_share, q, rho
        As in :func:`dpstats.estimators.adassp.estimate` (``bounds_share`` and ``q`` only
        for ``bounds_method="quantile"``).

    Returns
    -------
    Estimate
        ``params`` on the original scale. ``info`` (public): ``variant``, ``bounds``
        ("public", "private", mixed, or "none" for "paper"), ``ridge`` (released, mapped
        scale), ``mu`` (total GDP parameter), ``sigma_round`` (noise of one round), ``T``,
        ``shrinkage``, ``eps_bounds``, ``clip_lo``/``clip_hi`` (box; None for "paper").

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
    >>> np.round(est.params, 2).tolist(), est.info["T"]
    ([2.0, 1.0], 100)
    """
    eps, delta = check_eps(eps), check_delta(delta)
    Xa, ya, intercept_col = check_inputs(X, y, intercept_col, rng)
    T, shrinkage, w, share, q, rho = check_options(variant, T, shrinkage, split, bounds_method,
                                                   bounds_share, q, rho)
    p = Xa.shape[1]
    given = parse_for(bounds, Xa, intercept_col, names) if variant == "scaled" else None
    need = given is not None and (given.x_lo is None or given.y_lo is None)
    hist = need and bounds_method == "hist"
    if hist and w[3] <= 0:
        raise ValidationError("split[3] (share of mu^2 for histogram bounds) must be > 0 when "
                              "bounds are estimated with bounds_method='hist'")
    b, label, eps_b = given, ("none" if given is None else "public"), 0.0
    if need and not hist:            # pure-eps quantiles first, then the GDP plan
        b, label = resolve_bounds(Xa, ya, given, intercept_col=intercept_col, method="quantile",
                                  eps=share * eps, q=q, rng=rng, ledger=ledger, stage=stage)
        eps_b = b.eps
    parts = {"gram": (1, w[0]), "lambda_min": (1, w[1]), "rounds": (T, w[2])}
    if hist:
        parts = {"bounds": (1, w[3]), **parts}
    plan = GaussianGDP(eps - eps_b, delta, parts, rng, ledger, stage=stage,
                       what=f"Boosted AdaSSP ({variant}): "
                            + ("log-histograms for bounds (L2 sensitivity sqrt(#bounded "
                               "columns)), " if hist else "")
                            + f"X'X, lambda_min and {T} rounds of X'r (L2 sensitivity 1 each)")
    if hist:
        b, label = resolve_bounds(
            Xa, ya, given, intercept_col=intercept_col, method="hist", eps=0.0, q=q, rng=rng,
            ledger=ledger, stage=stage,
            hist_release=lambda v, s: (plan.release("bounds", v, s), plan.sigma("bounds", s)))
    lo = hi = None
    if variant == "scaled":
        lo, hi = clip_box(b, p, intercept_col)
        Xs, ys = to_scaled(Xa, ya, b, intercept_col)
        C = row_norm_bound(p)        # ||x'|| <= sqrt(p), so ||x'/C|| <= 1
        Xn = Xs / C
    else:
        Xn, ys = clip_rows(Xa), ya
    theta, ridge = boost(Xn, ys, plan, T, shrinkage, rho)
    params = theta if variant == "paper" else from_scaled(theta / C, b, p, intercept_col)
    info = {"variant": variant, "bounds": label, "ridge": ridge, "mu": plan.mu_total,
            "sigma_round": plan.sigma("rounds", 1.0), "T": T, "shrinkage": shrinkage,
            "eps_bounds": eps_b, "clip_lo": lo, "clip_hi": hi}
    if variant == "scaled" and label not in ("public", "private x, public y") \
            and label_bound_unusable(b.y_lo, b.y_hi):
        return withheld(p, info, LABEL_BOUNDS_REASON)
    return Estimate(params=params, released=True, info=info)
