"""Standard errors for AdaSSP and Boosted AdaSSP: one charged release, then a parametric
bootstrap of the released sufficient statistics.

Neighbours: add/remove one row. Two sources of error are accounted for:

* **Privacy noise.** Every release of these methods is Gaussian with a scale that is a public
  function of eps, delta and the (released) bounds, so the estimator's spread under fresh
  noise is simulated exactly from released values (Ferrando, Wang & Sheldon, "Parametric
  Bootstrap for Differentially Private Confidence Intervals", AISTATS 2022): plug in the
  released Gram matrix (made positive definite) and coefficients, draw ``X'y``, add fresh noise
  of the released scales to every statistic, re-run the adaptive ridge and the solve (or the
  boosting rounds). Intervals are the bootstrap's symmetric ones (bias included). AdaSSP with
  a positive released ridge gets none (see :func:`ssp_inference`).
* **Sampling.** ``X'y`` given the design is drawn ``N(G beta, sigma^2 G)``; ``sigma^2`` comes
  from :func:`release_rss`, the sum of squared residuals of the released fit with each
  residual clipped to ``[-1, 1]`` on the mapped scale (L1 sensitivity 1: one row adds at most
  1), released by the Laplace mechanism with :data:`INFERENCE_SHARE` of the fit's eps as
  ledger stage ``"inference"``. Its Laplace noise is propagated: each bootstrap draw uses its
  own plausible ``sigma^2``.

What an interval covers (:data:`COVERS_ADASSP` for AdaSSP, :data:`COVERS` for BAS with
``residuals="clipped"``): the
least-squares coefficients of the label clipped to its released range on the inputs clipped to
the released box, given the design and the selected terms, with homoscedastic errors assumed
for the sampling part. When the box holds the data these are the model's coefficients.
Boosted AdaSSP by default (``residuals="unclipped"``, :data:`COVERS_BAS`) solves
``sum_i z_i clip(y_i - x_i theta, -1, 1) = 0`` with ``z_i`` the row clipped to the box and
``x_i``, ``y_i`` mapped but not clipped: an estimating equation whose expectation vanishes at
the model's coefficients whenever the errors are symmetric given x, so its intervals cover
the model's coefficients (design note "BAS residuals on the unclipped rows").
"""

from __future__ import annotations

import numpy as np

from ...mechanisms.additive import laplace
from ...mechanisms.simulation import released_seed, simulation_noise
from ..outcome import Inference
from . import gate
from .sandwich import meat_factors, meat_seed, release_sandwich
from .simulate import adassp_draws, bas_draws, plugin_gram

__all__ = ["release_rss", "ssp_inference", "fit_statistics", "affine_matrix",
           "inference_budget", "check_cov_type", "release_and_infer", "draw_seeds",
           "INFERENCE_SHARE", "DRAWS", "REFERENCE", "COVERS", "COVERS_HC", "COVERS_BAS",
           "COVERS_BAS_HC", "COVERS_ADASSP", "COVERS_ADASSP_HC", "STAGE"]

#: Share of a fit's eps spent on the residual sum of squares (stage "inference").
INFERENCE_SHARE = 0.05
#: Bootstrap draws.
DRAWS = 1000
#: Salts of the bootstrap's seeds (:func:`~dpstats.mechanisms.simulation.released_seed` of the
#: fit's released statistics): the RSS's Laplace draws, then the estimator's draws.
SEED_SALTS = (1601, 1602)
#: Residuals are clipped to ``[-RESID_CLIP, RESID_CLIP]`` (mapped scale) ...
RESID_CLIP = 1.0
#: ... so one row adds at most ``RESID_CLIP^2 = 1`` to the sum: its L1 sensitivity.
RSS_SENSITIVITY = 1.0
#: Ledger stage of the inference release.
STAGE = "inference"
REFERENCE = ("Ferrando, Wang & Sheldon (AISTATS 2022), parametric bootstrap of the released "
             "sufficient statistics")
_COVERS_BASE = ("the least-squares coefficients of the label clipped to its released range on "
                "the inputs clipped to the released box (the model's coefficients when the box "
                "holds the data), given the design and the selected terms")
COVERS = (_COVERS_BASE + ". The intervals assume constant error variance (cov_type='HC1' "
          "gives a private sandwich instead): with heteroscedastic errors (sd 0.5 + |x1|, "
          "n = 20,000, eps = 1, BAS with residuals='clipped', 500 replications) measured "
          "coverage was 0.939 overall but 0.842 for the worst coefficient "
          "(benchmarks/interval_coverage.py)")
_COVERS_UNCLIPPED = ("the model's least-squares coefficients given the design and the selected "
                     "terms, when the errors are symmetric about the regression line at every x "
                     "(heteroscedastic or not) and the data lie within twice the released box: "
                     "Boosted AdaSSP computes its clipped residuals on the rows clipped only "
                     "at twice the box, so the box and the label's range do not bias the fit")
#: What a Boosted AdaSSP interval covers (``residuals="unclipped"``, the default).
COVERS_BAS = (_COVERS_UNCLIPPED + ". The sampling part assumes constant error variance, "
              "like statsmodels' nonrobust covariance: with heteroscedastic errors a "
              "coefficient whose variance the heteroscedasticity raises under-covers, the more "
              "the larger n*eps (the privacy noise's share falls; non-private OLS's nonrobust "
              "interval is the limit). Measured with errors of sd 0.5 + |x1| at eps = 1 "
              "(benchmarks/interval_coverage.py, bas_hetero_diag.py): x1 covered 0.929 at "
              "n = 20,000 (1,000 replications; 0.957 overall) and 0.924 at n = 200,000 (500; "
              "0.951 overall), non-private OLS 0.79. cov_type='HC1' (a private sandwich meat: "
              "15% more of eps, intervals about 10% wider) covered 0.961 overall, 0.946 for "
              "the worst coefficient, at n = 20,000 (500 replications) and 0.960, worst "
              "0.958, at n = 200,000 (500)")
COVERS_BAS_HC = (_COVERS_UNCLIPPED + ", with heteroscedasticity-robust sampling error (HC1 "
                 "sandwich from a private meat matrix)")
#: What an AdaSSP interval covers (the clipped problem's coefficients), and how far from the
#: model's coefficients that was measured where the release gate lets intervals through.
COVERS_ADASSP = (_COVERS_BASE + ". Where the box or the label's range cuts a long tail "
                 "(skewed covariates, heavy-tailed or heteroscedastic errors) these differ from "
                 "the model's coefficients by up to about one standard error; the release gate "
                 "(n*eps >= 390,000) withholds the intervals where that was measured to "
                 "under-cover (heteroscedastic errors, benchmarks/interval_coverage.py --cells "
                 "tails: the worst coefficient covered 0.869 at n*eps = 80,000, 0.922 at "
                 "200,000). The sampling part assumes constant error variance (cov_type='HC1' "
                 "gives a private sandwich): at n*eps = 400,000 (n = 200,000, eps = 2, errors "
                 "of sd 0.5 + |x1|, 500 replications) x1 covered 0.922 (0.978 overall), and "
                 "0.946 with cov_type='HC1' (0.981 overall)")
COVERS_ADASSP_HC = (_COVERS_BASE + ", with heteroscedasticity-robust sampling error (HC1 "
                    "sandwich from a private meat matrix). Where the box or the label's range "
                    "cuts a long tail these differ from the model's coefficients; the release "
                    "gate (n*eps >= 390,000) withholds the intervals where that was measured "
                    "to under-cover")
COVERS_HC = (_COVERS_BASE + ", with heteroscedasticity-robust sampling error (HC1 sandwich "
             "from a private meat matrix). The sandwich corrects the variance, not the "
             "clipping bias: with heteroscedastic errors (sd 0.5 + |x1|, n = 20,000, eps = 1, "
             "BAS with residuals='clipped', 500 replications) the worst coefficient "
             "covered 0.852 (0.842 without it): "
             "the label's private range cuts the large errors of extreme-x1 rows")


def release_rss(X: np.ndarray, y: np.ndarray, theta: np.ndarray, eps: float, rng, ledger,
                stage: str = STAGE, rows=None) -> float:
    """Noisy ``sum_i min((y_i - x_i theta)^2, 1)`` on the mapped data, eps-DP (Laplace).

    Neighbours: add/remove one row; ``theta`` is an already released value, so one row changes
    the sum by at most 1 (L1 sensitivity 1; adaptive composition with the fit), whatever the
    row's values: ``X``, ``y`` may be the rows mapped without clipping to the box (BAS).
    ``rows``: on a dask frame, the engine's residual statistics (``rows.rss(theta)``: the
    same sum over the partitions, :mod:`dpstats.dask.inference`; ``X``, ``y`` are not read).
    """
    if rows is None:
        r = np.clip(y - X @ theta, -RESID_CLIP, RESID_CLIP)
        total = float(r @ r)
    else:
        total = float(rows.rss(theta))
    return laplace(total, RSS_SENSITIVITY, eps, rng, ledger, stage=stage,
                   what="sum of squared residuals of the released fit, each clipped to "
                        "[-1, 1] (mapped data)")


def inference_budget(eps: float, delta: float, opt: dict, enabled: bool = True) -> dict:
    """The eps and delta of the inference releases: ``eps_rss`` (the RSS, Laplace),
    ``eps_meat`` / ``delta_meat`` (the sandwich meat, ``cov_type="HC1"``) and their totals
    ``eps`` / ``delta`` (taken from the fit's budget). Checks the options first
    (:func:`check_cov_type`: nothing has been charged yet).

    >>> b = inference_budget(1.0, 1e-5, {"inference_share": 0.05, "cov_type": "HC1",
    ...                                  "hc_share": 0.15})
    >>> round(b["eps"], 6), b["eps_rss"], b["delta_meat"]
    (0.2, 0.05, 1.5e-06)
    """
    check_cov_type(opt)
    share = opt["inference_share"] if enabled else 0.0
    hc = share > 0 and opt.get("cov_type", "nonrobust") == "HC1"
    out = {"eps_rss": eps * share, "eps_meat": eps * opt["hc_share"] if hc else 0.0,
           "delta_meat": delta * opt["hc_share"] if hc else 0.0}
    out["eps"] = out["eps_rss"] + out["eps_meat"]
    out["delta"] = out["delta_meat"]
    out["share"] = share + (opt["hc_share"] if hc else 0.0)
    out["eps_fit"] = eps
    return out


def check_cov_type(opt: dict) -> None:
    """``cov_type="HC1"`` needs the RSS release and a budget left for the fit (raises
    :class:`~dpstats.errors.ValidationError` before anything is charged)."""
    if opt.get("cov_type", "nonrobust") != "HC1":
        return
    from ...errors import ValidationError
    if opt["inference_share"] <= 0:
        raise ValidationError("cov_type='HC1' needs inference_share > 0 (its sandwich is "
                              "scaled by the private residual sum of squares); e.g. "
                              "inference_share=0.05, or cov_type='nonrobust'")
    if opt["inference_share"] + opt["hc_share"] >= 1:
        raise ValidationError(f"inference_share + hc_share must be < 1 (the rest of eps fits "
                              f"the model); got {opt['inference_share']} + {opt['hc_share']}")


def release_and_infer(kind: str, X: np.ndarray, y: np.ndarray, theta: np.ndarray,
                      released: dict, budget: dict, *, rng, ledger, n_hat: float,
                      icol: int | None, row_bound2: float, x0sq: float, resid=None,
                      rows=None, **kw) -> Inference:
    """The inference releases of a fit on the rows ``X``, ``y`` it solved on (the RSS, and
    the sandwich meat when ``budget["eps_meat"] > 0``), then :func:`ssp_inference`.
    ``released`` holds the fit's released Gram matrix (``"gram"``, and ``"xty"`` for AdaSSP)
    and noise scales; ``resid``: ``(X_r, y_r)``, the rows the residuals are computed on
    when they differ from ``X``, ``y`` (BAS: mapped without clipping to the box); ``rows``:
    on a dask frame, the engine's sums of the same residual statistics; ``kw`` goes to
    :func:`ssp_inference`."""
    Xr, yr = (X, y) if resid is None else resid
    rss = release_rss(Xr, yr, theta, budget["eps_rss"], rng, ledger, rows=rows)
    gram = released.pop("gram")
    xty = released.pop("xty", None)
    meat = None
    if budget["eps_meat"] > 0 and np.isfinite(n_hat):
        meat = release_sandwich(X, y, theta, resid=(Xr, yr), gram=gram, n_hat=n_hat, rss=rss,
                                row_bound2=row_bound2, eps=budget["eps_meat"],
                                delta=budget["delta_meat"], rng=rng, ledger=ledger, stage=STAGE,
                                rows=rows)
    return ssp_inference(kind, rss_noisy=rss, eps_inf=budget["eps_rss"], share=budget["share"],
                         gram_noisy=gram, theta=theta, xty=xty, n_hat=n_hat, icol=icol,
                         meat=meat, x0sq=x0sq, eps_fit=budget["eps_fit"], noise=released, **kw)


def affine_matrix(to_original, p: int) -> np.ndarray:
    """The linear part ``M`` of an affine map ``theta -> M theta + c`` (by evaluation).

    >>> affine_matrix(lambda t: 2 * np.asarray(t) + 1, 2).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    base = np.asarray(to_original(np.zeros(p)), dtype=np.float64)
    return np.column_stack([np.asarray(to_original(np.eye(p)[j])) - base for j in range(p)])


def _covers(nonrobust: bool, unclipped: bool, kind: str = "bas") -> str:
    if kind == "adassp":
        return COVERS_ADASSP if nonrobust else COVERS_ADASSP_HC
    if unclipped:
        return COVERS_BAS if nonrobust else COVERS_BAS_HC
    return COVERS if nonrobust else COVERS_HC


def _sigma2_draws(rss_noisy: float, eps_inf: float, dof: float, B: int,
                  seed: int = 7) -> np.ndarray:
    """Residual variances consistent with the released RSS (its Laplace noise propagated)."""
    lap = simulation_noise({"lap": (B,)}, {"lap": "laplace"}, seed=seed)["lap"]
    return np.maximum(rss_noisy - lap / eps_inf, 0.0) / dof


def draw_seeds(gram_noisy: np.ndarray, theta: np.ndarray, rss_noisy: float,
               xty: np.ndarray | None = None) -> tuple[int, int]:
    """Seeds of the bootstrap's two simulations (the RSS's Laplace noise, the estimator's
    draws): :func:`~dpstats.mechanisms.simulation.released_seed` of the fit's released Gram
    matrix, coefficients, RSS (and ``X'y``) (rounded to its default 6 significant digits),
    salted by :data:`SEED_SALTS`.

    A fixed seed reused the same 1,000 draws in every fit, so each coefficient's standard error
    carried the same Monte Carlo error in every fit (measured: 0.957-1.037 of a 10,000-draw
    one per coefficient at the lm centre, another fixed seed 0.953-1.081; design note
    "AdaSSP / BAS draws seeded from released values"). Released values only: post-processing.
    The rounding makes the seed robust to the last bits of a sum (a dask fit's released values
    equal the in-memory fit's to ~1e-12, not bit for bit).

    >>> G, t = np.eye(2), np.array([0.5, 1.0])
    >>> draw_seeds(G, t, 3.0) == draw_seeds(G, t + 1e-12, 3.0), draw_seeds(G, t, 3.0) == (
    ...     draw_seeds(G, t + 1e-4, 3.0))
    (True, False)
    """
    released = (gram_noisy, theta, rss_noisy) + (() if xty is None else (xty,))
    return tuple(released_seed(*released, salt=salt) for salt in SEED_SALTS)


def _covariance(D: np.ndarray, se: np.ndarray | None = None) -> np.ndarray:
    """Covariance from error draws ``D`` (B, p): standard errors ``se``, by default the 95%
    quantile of ``|D|`` divided by 1.96 (so the 95% interval is the bootstrap's symmetric
    one, bias included), correlations from the draws."""
    if se is None:
        se = np.quantile(np.abs(D), 0.95, axis=0) / 1.959963984540054
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.corrcoef(D, rowvar=False) if D.shape[1] > 1 else np.ones((1, 1))
    C = np.where(np.isfinite(C), C, 0.0)
    np.fill_diagonal(C, 1.0)
    return se[:, None] * C * se[None, :]


def _falling(kind: str) -> str:
    """How the inflation falls with n*eps (empty when it is constant)."""
    hi, lo = gate.INFLATION[kind], gate.INFLATION_FLOOR[kind]
    if hi == lo or gate.INFLATION_FULL[kind] <= gate.THRESHOLDS[kind]:
        return ""
    return (f", {hi:g} at the release threshold falling to {lo:g} at n*eps >= "
            f"{gate.INFLATION_FULL[kind]:,.0f}")


def fit_statistics(gram_noisy: np.ndarray, theta: np.ndarray, rss_noisy: float,
                   icol: int | None, n_hat: float, y_half: float) -> dict:
    """Residual standard error (original scale) and R^2 from released values only.

    ``sigma = y_half sqrt(RSS~ / (n~ - p))``; with an intercept column, the explained sum of
    squares of the released fit is ``theta' G~ theta - (G~ theta)_0^2 / G~_00`` (the fitted
    values' sum of squares about their mean, from the released Gram matrix) and
    ``R^2 = ESS / (ESS + RSS~)``, in [0, 1] (for least squares ``TSS = ESS + RSS``); the
    adjusted R^2 is ``1 - (1 - R^2)(n~ - 1)/(n~ - p)``. NaN entries are dropped.

    >>> G = np.array([[100.0, 0.0], [0.0, 25.0]])
    >>> st = fit_statistics(G, np.array([0.0, 1.0]), 25.0, 0, 100.0, 2.0)
    >>> round(st["r2"], 3), round(st["sigma"], 3)
    (0.5, 1.01)
    """
    p = theta.size
    dof = n_hat - p
    out = {}
    if not (np.isfinite(dof) and dof >= 1 and np.isfinite(rss_noisy)):
        return out
    out["sigma"] = float(y_half * np.sqrt(max(rss_noisy, 0.0) / dof))
    if icol is None or not gram_noisy[icol, icol] > 0:
        return out
    Gt = gram_noisy @ theta
    ess = max(float(theta @ Gt - Gt[icol] ** 2 / gram_noisy[icol, icol]), 0.0)
    total = ess + max(rss_noisy, 0.0)
    if total > 0 and np.isfinite(total):
        out["r2"] = ess / total
        out["r2_adj"] = 1.0 - (1.0 - out["r2"]) * (n_hat - 1.0) / dof
    return out


def ssp_inference(kind: str, *, rss_noisy: float, eps_inf: float, share: float,
                  gram_noisy: np.ndarray, theta: np.ndarray, n_hat: float, M: np.ndarray,
                  xty: np.ndarray | None = None, ridge: float = 0.0,
                  y_half: float, noise: dict, unusable=(), draws: int = DRAWS,
                  icol: int | None = None, meat: dict | None = None,
                  x0sq: float = 1.0, eps_fit: float | None = None,
                  residuals: str = "clipped") -> Inference:
    """The :class:`~dpstats.estimators.outcome.Inference` of an AdaSSP (``kind="adassp"``) or
    Boosted AdaSSP (``"bas"``) fit, from released values only (post-processing of the fit's
    releases, of ``rss_noisy`` and, for ``cov_type="HC1"``, of the released ``meat``).

    ``gram_noisy`` and ``theta`` are on the scale the method solved on; the bootstrap's
    plug-in coefficients are the ridge-free solve ``G^-1 xty`` of the released statistics when
    ``xty`` (released ``X'y``) is given, else ``theta``: a plug-in already shrunk by the
    ridge would understate the ridge's bias. With a released ``ridge > 0`` (AdaSSP) there are
    no intervals (``method="ridge"``): the ridge's bias ``-ridge (G + ridge I)^-1 beta``
    depends on the unknown coefficients, and every plug-in correction measured
    (benchmarks/interval_coverage.py; the ridge-free solve as plug-in, with or without its own error
    propagated) under-covered or was uninformative. ``M`` maps that scale's
    coefficients to the original one; ``noise`` holds the released noise scales and the
    method's constants (see :mod:`~dpstats.estimators.inference.simulate`); ``unusable``:
    positions (original order) that get NaN. ``icol``: the intercept column (R^2);
    ``meat``: :func:`~dpstats.estimators.inference.sandwich.release_sandwich`'s output (the
    sampling term is then the HC1 sandwich), ``x0sq`` the squared intercept entry of a row.
    ``eps_inf`` is the RSS release's eps; ``share`` the share of eps of every inference
    release (reported); ``eps_fit`` the fit's eps (default ``eps_inf / share``);
    ``residuals``: BAS's option (``"unclipped"``: what the intervals cover is
    :data:`COVERS_BAS`).

    **Release gate** (:mod:`~dpstats.estimators.inference.gate`): intervals only when
    ``n_hat * eps / p >= gate.THRESHOLDS[kind]`` (``eps = eps_inf / share``, the fit's eps;
    ``p`` fitted columns), a function of released and public values; below it the result is
    ``method = gate.GATED + reason`` with NaN covariance. Released standard errors are the
    bootstrap's times ``gate.inflation(kind, n_hat, eps, p)`` (measured). The residual
    standard error and R^2 (:func:`fit_statistics`) are given whenever the RSS is released.
    """
    p = theta.size
    dof = n_hat - p
    stats = fit_statistics(gram_noisy, theta, rss_noisy, icol, n_hat, y_half)
    fit_stats = {k: stats.get(k) for k in ("sigma", "r2", "r2_adj")}
    nan = Inference(cov=np.full((p, p), np.nan), method="none", reference="", share=share,
                    covers="")
    if not (np.isfinite(dof) and dof >= 1 and np.isfinite(rss_noisy)):
        return nan
    cov_type = "nonrobust" if meat is None else "HC1"
    if ridge > 0:
        return Inference(cov=nan.cov, method="ridge", reference="", share=share, covers="",
                         **fit_stats)
    eps = eps_fit if eps_fit is not None else (eps_inf / share if share > 0 else np.nan)
    if not gate.passes(kind, n_hat, eps, p):
        return Inference(cov=nan.cov, method=gate.GATED + gate.gate_reason(kind, n_hat, eps, p),
                         reference="", share=share, covers="", **fit_stats)
    seeds = draw_seeds(gram_noisy, theta, rss_noisy, xty)
    sigma2 = _sigma2_draws(rss_noisy, eps_inf, dof, draws, seeds[0])
    sampling = sigma2 if meat is None else meat_factors(meat, sigma2 * dof, x0sq, icol, n_hat
                                                        / dof, seed=meat_seed(meat["meat"],
                                                        gram_noisy, theta, rss_noisy))
    G = plugin_gram(gram_noisy, max(noise["sigma_gram"], 1e-12 * abs(np.trace(gram_noisy))))
    fn = adassp_draws if kind == "adassp" else bas_draws
    try:
        beta = theta if xty is None else np.linalg.solve(G, xty)
        thetas = fn(G, beta, sampling, seed=seeds[1], **noise)
    except np.linalg.LinAlgError:
        return nan
    D = (thetas - beta) @ M.T
    cov = _covariance(D) * (infl := gate.inflation(kind, n_hat, eps, p)) ** 2
    bad = [j for j in unusable] + list(np.flatnonzero(~np.isfinite(np.diag(cov))))
    cov[bad, :], cov[:, bad] = np.nan, np.nan
    label = "AdaSSP" if kind == "adassp" else "Boosted AdaSSP"
    term = ("sampling error from a private residual sum of squares" if meat is None else
            "heteroscedasticity-robust (HC1) sampling error from a private sandwich meat")
    return Inference(
        cov=cov, share=share, reference=REFERENCE + ("" if meat is None else "; White (1980)"),
        covers=_covers(meat is None, residuals == "unclipped", kind),
        method=(f"parametric bootstrap ({draws} draws) of the released {label} statistics "
                f"with fresh privacy noise, plus {term}, times {infl:.3g} (a measured "
                f"inflation{_falling(kind)}); released because the release gate passed "
                f"(n*eps \u2248 {float(gate.method_index(kind, n_hat, eps, p)):,.0f} >= "
                f"{gate.THRESHOLDS[kind]:,.0f}, below which simulated intervals did not "
                f"cover: benchmarks/interval_gate.py)"), cov_type=cov_type, **fit_stats)
