"""Standard errors for dp_glm's objective perturbation (the default from about
1,000 (p/6)^0.5 / mu released rows): a private Fisher information, then a parametric
bootstrap of the released fit; and why output perturbation releases none.

Neighbours: add/remove one row. What is released for inference: the Fisher information of the
fit at the released coefficients, ``C = sum_i s_i (1 - s_i) u_i u_i'`` on the rows the
estimator fitted (scaled to L2 norm <= 1), with Gaussian noise of L2 sensitivity 1/4
(:func:`dpstats.mechanisms.curvature.release_curvature`), with :data:`OBJPERT_SHARE` of the
fit's eps and delta (ledger stage ``"inference"``). Everything else is post-processing.

Two sources of error, on the fitted (unit) scale, then mapped to the original one:

* **sampling**: the minimiser ``t_r`` of ``L(t) + (r/2)||t||^2`` (``r`` the mechanism's public
  ridge) has covariance ``(C + r I)^-1 C (C + r I)^-1`` (the logistic model holds for the
  bounded design: the information equals the score's covariance), and bias ``-C^-1 r t_r``
  against the unpenalised minimiser (first order; ``t_r`` plugged in as the released
  coefficients; small: ``r`` is about 2.4-4.8 at eps 1 against ``C`` growing with n);
* **privacy noise**, of a known distribution: the linear term ``b ~ N(0, s^2 I)`` moves the
  minimiser by ``-(C + r I)^-1 b`` (covariance ``s^2 (C + r I)^-2``), plus the mechanism's
  small output noise;
* the private decision threshold ``t`` moves the released intercept by ``-t`` (a known,
  released shift: a bias of the intercept, included);
* the private box's cut tails (:mod:`.glm_tail`): the box moves the fit away from the model's
  coefficients (the intercept for a skewed covariate's long tail); the move is estimated from
  the released histogram counts beyond the box, with their noise, and added to the draws'
  bias (``row_scale`` of :func:`perturbation_inference`).

The released ``C`` is noisy: the bootstrap takes plausible informations ``C_k = C - E`` (``E``
symmetric Gaussian of the released noise scale, seeded by the released values,
:func:`fit_seed`). The error model is the mixture over ``k`` of ``N(b_k, V)``: ``b_k`` the bias
plug-in at ``C_k``, moved to the plug-in at ``C_rel`` minus its convexity excess read one
level down (:mod:`.glm_box`; where a cut tail's move enters, the bootstrap's ``2 b(C_bar) -
mean_k b(C_k)``, :func:`debias`), their spread calibrated one level down (:mod:`.glm_spread`),
plus the box's cut of Gaussian-like columns (:func:`.glm_box.box_bias`), and ``V`` the
sampling and privacy covariance at the released ``C`` (:data:`AT_RELEASED`).

**Intervals centred at the bias-corrected estimate**: the basic bootstrap interval ``[params -
Q(0.975), params - Q(0.025)]`` (``Q`` the mixture's exact quantiles: :mod:`.mixture`),
released as ``bias`` (the quantiles' midpoint) and standard errors (half their distance over
1.96); correlations are the mixture's. The spread is that of the bias-corrected estimate
``theta + r C^-1 theta``, ``(I + r C^-1)`` times the ridge minimiser's (:func:`_ridge_model`;
exact for a quadratic loss). Where the private box's cut tail moves the fit (:mod:`.glm_tail`),
the move's plausible draws are widened by :data:`.glm_tail.TAIL_SPREAD` (its estimate errs by
about twice their spread) and the fit is centred too; where the plug-in is unstable
(:func:`plugin_stable`), the fit keeps the symmetric interval (``bias`` None). Measured:
design-notes.md, "dp_glm's intervals centred", "the cut tail's fits centred".

**Gate.** No intervals when fewer than :data:`PD_SHARE` of the plausible informations are
positive definite (the released information is too noisy to say how precise the fit is), or
when an intercept-only model was released; :data:`THRESHOLDS` (``n_hat * eps``) where the
coverage simulation (``benchmarks/glm_coverage.py``) showed under-coverage. Both read released
and public values only.

**Output perturbation** gets none and spends nothing (:data:`OUTPERT_REASON`: its large public
ridge's shrinkage was corrected only partly; coverage 0.88-0.93).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...mechanisms.simulation import released_seed, simulation_noise
from ..outcome import Inference
from . import glm_box
from .gate import GATED
from .glm_spread import scale_spread, spread_ratio
from .glm_tail import tail_bias, tail_score
from .mixture import exact_covariance
from .simulate import symmetric_noise
from .ssp import _covariance

__all__ = ["glm_inference", "plausible_curvatures", "error_draws", "OUTPERT_REASON",
           "outpert_inference", "OBJPERT_SHARE", "PD_SHARE", "SPREAD", "AT_RELEASED",
           "TAIL_CAVEAT", "THRESHOLDS", "DRAWS", "CURVATURE_DRAWS", "COVERS",
           "REFERENCE", "nan_inference", "gated", "fitted_map", "finish_cov",
           "logistic_weights", "perturbation_inference", "debias", "centred_covariance",
           "fit_seed"]

#: Why output perturbation releases no intervals (measured; see the module docstring).
OUTPERT_REASON = (
    "output perturbation's public ridge (chosen so that its noise has norm 1/kappa at every n) "
    "shrinks the coefficients by a data-dependent factor, about C / (C + ridge) per direction "
    "(25-37% at 10,000-20,000 rows, p = 5, eps = 1 in simulation); the released values "
    "estimate that bias only to first order, and intervals built on it covered 0.88-0.93 "
    "(benchmarks/glm_coverage.py, method='outpert'); objective perturbation ('auto' from "
    "1,000 (p/6)^0.5 / mu released rows, or 'objpert') and method='dpgd' give intervals")
#: Share of objective perturbation's eps and delta for the Fisher information (stage
#: "inference"; a separate Gaussian release).
OBJPERT_SHARE = 0.10
#: Intervals need at least this share of positive-definite plausible informations.
PD_SHARE = 0.95
#: The plausible informations' share of the released noise (the gate uses all of it); 0.7
#: under-covered the skewed cell (design-notes.md, "The logistic fits' bias plug-ins").
SPREAD = 1.0
#: The components' covariance (sampling plus privacy noise) at the released information for
#: every plausible one: their spread says how well the bias is known, not how wide the error
#: is given the information. Per plausible information (False, the rule before) a few
#: near-singular ones widened every interval at eps 0.5 (sd z 0.68-0.82, coverage up to 0.988).
#: Not where a cut tail's move enters: that width held the move's unmodelled error (skewed
#: intercept 0.943 -> 0.928 with it; design-notes.md, "dp_glm's simulation seeds").
AT_RELEASED = True
#: Smallest ``n_hat * eps`` (released count, the fit's eps) with intervals, per method.
#: dp_lm DP-GD (squared) at n = 5,000, eps 1 (index 5,000) covered 0.938 with its worst
#: coefficient at 0.914 (500 replications, benchmarks/coverage.py); n = 20,000 at eps 0.5
#: (index 10,000) and above covered: 7,500 lies between, away from both simulated cells.
THRESHOLDS = {"objpert": 0.0, "dpgd-logistic": 0.0, "dpgd-squared": 7_500.0}
#: Largest ``|mean - median|`` of the plausible bias plug-ins, in interquartile ranges, for a
#: centred interval (:func:`plugin_stable`). The largest over coefficients is ~0.04 for a plug-in
#: linear in the noise; measured at n = 20,000, p = 5 (benchmarks/glm_coverage.py's design):
#: eps 1, median 0.23, max 1.2 (97 fits); eps 0.5, median 0.56, 95th percentile 5.1, max 46
#: (114 fits). 0.5 sent 59% of the eps 0.5 fits to the symmetric interval (coverage 0.988, worst
#: 0.995); 5 sends the heavy tail only (5% at eps 0.5, none at eps 1).
PLUGIN_SKEW = 5.0
#: Error draws of :func:`error_draws` (benchmarks only), plausible informations, and the
#: salt of these simulations' seeds (public; distinct from the other bootstraps').
DRAWS, CURVATURE_DRAWS, SEED = 2000, 200, 16_2026
REFERENCE = ("Fisher information released privately, privacy noise of the released "
             "distribution propagated; parametric bootstrap as Ferrando, Wang & Sheldon "
             "(AISTATS 2022)")
#: What a box cuts (measured: design-notes.md, "The remaining interval misses";
#: benchmarks/coverage.py's ``coverage_box``).
TAIL_CAVEAT = ("; when the box cuts the long tail of a skewed covariate (or label), the "
               "clipped fit's coefficients differ from the model's, the intercept most, and "
               "the interval need not hold the model's")
#: How the intervals of a fit without a cut tail's move are built (:func:`centred_covariance`).
CENTRED = ("basic bootstrap intervals, centred at the coefficients minus the draws' bias, "
           "with the spread of the bias-corrected estimate")
COVERS = ("the logistic-regression coefficients of the model, given the design and the "
          "selected terms: the fit on the inputs clipped to the released box, moved by what "
          "the box cuts as the released histogram counts beyond it say (cells up to "
          "2 half-widths past the box; a tail reaching farther counts only up to there), or, "
          "where they show no cut tail, as a normal model of each column whose counts do not "
          "rule a cut out says; the sampling part assumes the logistic model holds")


def outpert_inference(p: int) -> Inference:
    """No intervals for an output-perturbation fit, with :data:`OUTPERT_REASON`.

    >>> "ridge" in outpert_inference(2).method
    True
    """
    return gated(p, 0.0, OUTPERT_REASON)


def nan_inference(p: int, share: float, method: str = "none", share_of: str = "eps"):
    """An :class:`~dpstats.estimators.outcome.Inference` with no intervals (``method``)."""
    return Inference(cov=np.full((p, p), np.nan), method=method, reference="", share=share,
                     covers="", share_of=share_of)


def gated(p: int, share: float, reason: str, share_of: str = "eps") -> Inference:
    """No intervals, with the public ``reason`` the summary prints."""
    return nan_inference(p, share, GATED + reason, share_of)


def plausible_curvatures(C_rel: np.ndarray, sigma: float, draws: int = CURVATURE_DRAWS,
                         seed: int = SEED):
    """``(Cs, share_pd)``: the positive-definite ones among ``draws`` matrices ``C_rel - E``
    (``E`` symmetric with N(0, sigma^2) upper-triangle entries, public ``seed``: objective
    perturbation passes :func:`fit_seed`), and the share that were positive definite.

    >>> Cs, ok = plausible_curvatures(np.diag([100.0, 50.0]), 1.0)
    >>> Cs.shape, ok
    ((200, 2, 2), 1.0)
    """
    C = (np.asarray(C_rel, dtype=np.float64) + np.asarray(C_rel).T) / 2.0
    p = C.shape[0]
    tri = simulation_noise({"tri": (draws, p * (p + 1) // 2)}, seed=seed)["tri"]
    Cs = C[None] - float(sigma) * symmetric_noise(tri, p)
    ok = np.linalg.eigvalsh(Cs)[:, 0] > 0
    return Cs[ok], float(ok.mean())


def error_draws(bias: np.ndarray, cov: np.ndarray, M: np.ndarray, shift: np.ndarray,
                draws: int = DRAWS, seed: int = SEED + 1) -> np.ndarray:
    """``(draws, q)`` errors ``M (bias_k + cov_k^(1/2) xi) + shift`` on the original scale,
    cycling through the ``K`` plausible (bias, covariance) pairs (unit scale); benchmarks only
    (the intervals use the mixture's exact quantiles, :func:`.mixture.exact_covariance`)."""
    K, p = bias.shape
    xi = simulation_noise({"xi": (draws, p)}, seed=seed)["xi"]
    k = np.arange(draws) % K
    w, V = np.linalg.eigh((cov + cov.transpose(0, 2, 1)) / 2.0)
    root = V * np.sqrt(np.maximum(w, 0.0))[:, None, :]
    e = bias[k] + np.einsum("bij,bj->bi", root[k], xi)
    return e @ M.T + shift[None, :]


def fit_seed(C_rel, sigma_c: float, theta, threshold: float) -> int:
    """The public seed of a fit's plausible informations: a function of the released values
    the simulation reads (:func:`~dpstats.mechanisms.simulation.released_seed`), so that
    different fits get independent draws (a fixed seed repeated the same draws' error in every
    fit: design-notes.md, note 58 and "dp_glm's simulation seeds")."""
    return released_seed(C_rel, sigma_c, theta, threshold, salt=SEED)


def debias(bias: np.ndarray, at_mean: np.ndarray) -> np.ndarray:
    """The bias draws ``(K, p)`` (one per plausible curvature) moved so that their mean is the
    parametric bootstrap's bias-corrected plug-in ``2 b(C_bar) - mean_k b(C_k)``, ``at_mean``
    = ``b(C_bar)`` at the mean plausible curvature; the spread over ``k`` is kept.

    >>> debias(np.array([[3.0], [5.0]]), np.array([3.5])).ravel().tolist()
    [2.0, 4.0]
    """
    return bias + 2.0 * (np.asarray(at_mean)[None, :] - bias.mean(axis=0, keepdims=True))


def plugin_stable(Cs: np.ndarray, ridge: float, theta: np.ndarray) -> bool:
    """Whether the ridge's bias plug-in ``-r C^-1 theta`` is smooth over the plausible
    informations ``Cs``, so the bootstrap's bias correction (:func:`debias`, a mean) can centre
    the interval: per coefficient ``|mean - median|`` of the plug-ins at most
    :data:`PLUGIN_SKEW` times their interquartile range. A near-singular plausible information
    pulls the mean by many interquartile ranges (at eps 0.5, 19 of 2,412 centred intervals lay
    more than 10 standard errors from the truth): such a fit keeps the symmetric interval.
    Post-processing of released values only.

    >>> C = np.eye(2)[None] * np.array([1.0, 1.1, 0.9, 1.05, 0.95])[:, None, None]
    >>> plugin_stable(C, 0.1, np.ones(2)), plugin_stable(C * [[[1.0]], [[1.0]], [[1.0]],
    ...                                                       [[1.0]], [[0.001]]], 0.1, np.ones(2))
    (True, False)
    """
    b = -ridge * np.linalg.solve(Cs, np.broadcast_to(theta, (len(Cs), theta.size))[..., None])
    b = b[..., 0]
    q1, med, q3 = np.quantile(b, [0.25, 0.5, 0.75], axis=0)
    skew = np.abs(b.mean(axis=0) - med)
    return bool(np.all(skew <= PLUGIN_SKEW * (q3 - q1) + 1e-12 * (1.0 + np.abs(med))))


def _ridge_model(Cs, ridge: float, theta: np.ndarray, priv, corrected: bool = True):
    """Bias (bootstrap-corrected, :func:`debias`) of the ridge minimiser, and the covariance
    of the bias-corrected estimate ``theta + r C^-1 theta`` (sampling plus privacy noise;
    ``corrected`` False: of the ridge minimiser itself), per plausible ``C``.

    The intervals are centred at the bias-corrected estimate (:func:`centred_covariance`),
    and the plug-in ``-r C^-1 theta`` moves with the released ``theta``: its error is
    ``J = I + r C^-1`` times the ridge minimiser's (``Hr = C + r I``). For a quadratic loss
    this is exact: ``J Hr^-1 = C^-1``, so the corrected estimate's error is
    ``C^-1 (score + b)`` with covariance ``C^-1 + s^2 C^-2``, not the ridge minimiser's
    ``Hr^-1 C Hr^-1 + s^2 Hr^-2``, which is narrower by the shrinkage (design-notes.md,
    "dp_glm's intervals centred")."""
    p = theta.size
    eye = np.eye(p)
    Hr_inv = np.linalg.inv(Cs + ridge * eye)
    C_inv = np.linalg.inv(Cs)
    bias = -ridge * (C_inv @ theta)
    bias = debias(bias, -ridge * np.linalg.solve(Cs.mean(axis=0), theta))
    cov = Hr_inv @ Cs @ Hr_inv + priv(Hr_inv)
    if corrected:
        J = eye + ridge * C_inv
        cov = J @ cov @ J.transpose(0, 2, 1)
    return bias, cov


def glm_inference(kind: str, *, C_rel: np.ndarray, sigma_c: float, theta: np.ndarray,
                  ridge: float, noise: dict, M: np.ndarray, icol: int | None,
                  threshold: float, n_hat: float, eps: float, share: float,
                  share_of: str, tail: np.ndarray | None = None, box=None) -> Inference:
    """The :class:`~dpstats.estimators.outcome.Inference` of an ``"objpert"`` fit (``kind``)
    from released values only (module docstring).

    ``C_rel`` is the released information on the fitted columns (unit scale, ``sigma_c`` its
    noise), ``theta`` the released unit-scale coefficients before the threshold shift,
    ``ridge`` the objective's ridge, ``noise`` the privacy noise (``{"s": ...,
    "sigma_out": ...}``: sd of ``b`` and of the output noise), ``M`` the linear map to the
    original coefficients of the fitted columns, ``icol`` the position of the intercept in
    the original coefficients, ``threshold`` the released threshold, ``n_hat`` the released
    row count (NaN when none) and ``eps`` the fit's; ``tail`` the clipped fit's score from
    the cut tails (:func:`.glm_tail.tail_score`, plausible draws; None: no private box), ``box``
    the released counts past the box and the intercept's fitted position (:mod:`.glm_box`).
    """
    q = M.shape[0]
    if not math.isfinite(threshold):
        return gated(q, share, "an intercept-only model was released (the private threshold "
                               "chose a constant prediction), so its slopes are 0 by "
                               "construction and have no interval", share_of)
    idx = n_hat * eps if math.isfinite(n_hat) else math.nan
    if THRESHOLDS[kind] > 0 and not idx >= THRESHOLDS[kind]:
        return gated(q, share, _threshold_reason(kind, n_hat, eps), share_of)
    seed = fit_seed(C_rel, sigma_c, theta, threshold)
    Cs, ok = plausible_curvatures(C_rel, sigma_c, seed=seed)
    if ok < PD_SHARE:
        return gated(q, share, _noisy_reason(ok), share_of)
    Cs = plausible_curvatures(C_rel, SPREAD * sigma_c, seed=seed)[0]    # the error model's

    def priv(Hr_inv):
        return noise["s"] ** 2 * (Hr_inv @ Hr_inv) + noise["sigma_out"] ** 2 * np.eye(
            theta.size)
    centred = plugin_stable(Cs, ridge, theta)       # centre at params - bias if stable
    bias, cov = _ridge_model(Cs, ridge, theta, priv, corrected=centred)
    bias = scale_spread(bias, spread_ratio(C_rel, Cs, ridge, theta, SPREAD * sigma_c, seed + 1))
    bias = glm_box.move(bias, Cs, C_rel, ridge, theta, SPREAD * sigma_c, seed + 2, box, n_hat,
                        tail is not None)                             # the switches' rules
    C0 = (np.asarray(C_rel, dtype=np.float64) + np.asarray(C_rel, dtype=np.float64).T) / 2.0
    if AT_RELEASED and tail is None and np.linalg.eigvalsh(C0)[0] > 0:    # spread given C
        cov_rel = glm_box.narrow(_ridge_model(C0[None], ridge, theta, priv, centred)[1][0], cov)
        cov = np.broadcast_to(cov_rel, cov.shape)
    if tail is not None:
        bias = bias + tail_bias(Cs, tail)               # the box's move (.glm_tail)
    shift = np.zeros(q)
    if icol is not None:
        shift[icol] = -threshold
    cov_c, centre = exact_covariance(bias, cov, M, shift, centred)
    how = CENTRED if centred else ("symmetric intervals holding the bias, as the bias "
                                   "plug-in is unstable over the plausible informations")
    return Inference(
        cov=cov_c, bias=centre, share=share, reference=REFERENCE, covers=COVERS,
        share_of=share_of,
        method=(f"private Fisher information at the released fit (inverse information for "
                f"sampling, the ridge's bias included) plus the objective perturbation's own "
                f"noise, by parametric bootstrap (the exact error mixture over "
                f"{CURVATURE_DRAWS} plausible informations; {how}); the threshold's shift of "
                f"the intercept is included"))


def centred_covariance(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cov, bias)`` of error draws ``D`` (B, q): the basic bootstrap interval of the draws
    as a centre and standard errors (as :func:`.mixture.exact_covariance` does exactly;
    the intervals used draws before; benchmarks and tests compare against them).

    >>> D = np.c_[np.linspace(-3.0, 1.0, 4001)]
    >>> cov, bias = centred_covariance(D)
    >>> round(float(bias[0]), 3), round(float(np.sqrt(cov[0, 0]) * 1.959963984540054), 3)
    (-1.0, 1.9)
    """
    lo, hi = np.quantile(D, [0.025, 0.975], axis=0)
    return _covariance(D, (hi - lo) / (2.0 * 1.959963984540054)), (lo + hi) / 2.0


def _noisy_reason(ok: float) -> str:
    return (f"intervals not released: the private information matrix is too noisy at this "
            f"size ({ok:.0%} of its plausible values are positive definite, below "
            f"{PD_SHARE:.0%}); more rows, a larger eps or fewer columns give intervals")


def _threshold_reason(kind: str, n_hat: float, eps: float) -> str:
    need = THRESHOLDS[kind] / eps
    return (f"intervals not released: at n \u2248 {max(n_hat, 0.0):,.0f} and eps {eps:.3g} "
            f"(n*eps below {THRESHOLDS[kind]:,.0f}) the simulated intervals did not cover "
            f"(benchmarks/glm_coverage.py); about {need:,.0f} rows at this eps give intervals")


def fitted_map(to_original, kept: list[int], q: int) -> np.ndarray:
    """``(q, len(kept))``: the linear map from the fitted (unit-scale) coefficients of the kept
    columns to the ``q`` original ones (by evaluation; the map is linear for a logistic fit).

    >>> fitted_map(lambda t: 2 * t, [1], 2).tolist()
    [[0.0], [2.0]]
    """
    def full(v):
        t = np.zeros(q)
        t[kept] = v
        return np.asarray(to_original(t), dtype=np.float64)

    base = full(np.zeros(len(kept)))
    return np.column_stack([full(np.eye(len(kept))[j]) - base for j in range(len(kept))])


def finish_cov(inf: Inference, unusable) -> Inference:
    """NaN rows and columns for coefficients without an interval (dropped columns)."""
    bad = [int(j) for j in unusable]
    if not bad or not np.isfinite(inf.cov).any():
        return inf
    cov = np.array(inf.cov)
    cov[bad, :] = np.nan
    cov[:, bad] = np.nan
    return replace(inf, cov=cov)


def logistic_weights(U: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``s_i (1 - s_i)`` at the released coefficients (at most 1/4)."""
    s = 0.5 * (1.0 + np.tanh(0.5 * (U @ theta)))
    return s * (1.0 - s)


def perturbation_inference(kind: str, U, theta_k, design, kept, to_original,
                           threshold: float, n_noisy, eps: float, *, release,
                           ridge: float, noise: dict, share: float,
                           share_of: str, row_scale: float | None = None) -> Inference:
    """Release the Fisher information of an objpert fit at its released unit-scale
    coefficients ``theta_k`` on the kept columns ``U`` (``release(U, weights) -> (C,
    sigma)``, a mechanism of :mod:`dpstats.mechanisms.curvature`) and return
    :func:`glm_inference`'s result; ``to_original`` maps all unit-scale coefficients to the
    original ones. The release happens whatever the result (what is charged does not depend
    on the data). ``row_scale``: the divisor of the fitted rows; given, the intervals include
    the move of the private box's cut tails (:mod:`.glm_tail`). ``U`` None: a dask frame's
    (``release`` holds the workers' exact sum)."""
    C_rel, sigma_c = release(U, None if U is None else logistic_weights(U, theta_k))
    q = design.mid.size
    M = fitted_map(to_original, list(kept), q)
    n_hat = math.nan if n_noisy is None else float(n_noisy)
    tail = None if row_scale is None else tail_score(design, kept, row_scale, C_rel,
                                                     np.asarray(theta_k))
    box = None if row_scale is None else glm_box.box_of(design, kept)
    inf = glm_inference(kind, C_rel=C_rel, sigma_c=sigma_c, theta=np.asarray(theta_k),
                        ridge=ridge, noise=noise, M=M, icol=design.intercept_col,
                        threshold=threshold, n_hat=n_hat, eps=eps, share=share,
                        share_of=share_of, tail=tail, box=box)
    return finish_cov(inf, [j for j in range(q) if j not in set(kept)])
