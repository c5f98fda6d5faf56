"""Propose-test-release for the Tukey mechanism.

The test releases one bit (and the noisy distance behind it): whether a 1-sensitive lower bound
``M(D)`` on the number of rows that must change before the restricted exponential mechanism
becomes unsafe, plus ``Laplace(1/eps_ptr)``, reaches ``ln(1/(2 delta)) / eps_ptr``
(002 Algorithm 1). Two lemmas give ``M(D)``:

- ``"8.5"`` (003 Lemma 8.5, default): largest k in {0..t-1} with
  ``V_{t-k-1} * exp(eps (t+k+1)) / w(t+k-1) <= delta_lemma``, where
  ``w(q) = sum_{i >= q} W_i exp(eps i)`` is the exponential mechanism's mass on depth >= q;
- ``"3.6"`` (002 Lemma 3.6): largest k such that some g >= 1 has
  ``V_{t-k-1} / V_{t+k+g+1} * exp(-eps g / 2) <= delta_lemma``;

or -1 when no k qualifies. ``eps`` inside the lemma is the exponential mechanism's multiplier
and ``delta_lemma`` depends on the accounting; :func:`ptr_parameters` derives both (for the paper's
accounting, ``delta / (8 exp(eps_ptr))`` and eps_em). Both statistics have sensitivity 1 under
add/remove one row, which changes one model (002 section 7.2, 003 section 8, and the replacement
argument in :func:`ptr_parameters`), so ``M + Laplace(1/eps_ptr)`` is eps_ptr-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .accountant import Ledger
from .additive import laplace

__all__ = ["distance_to_unsafety", "ptr_threshold", "ptr_check", "ptr_parameters", "PTRParams",
           "PTRReport", "LEMMAS", "ACCOUNTING", "PAPER_NOTE"]

LEMMAS = ("8.5", "3.6")
#: "swap" (default, sound for random-label partitions) or "paper" (002/003 as published).
ACCOUNTING = ("swap", "paper")
#: Appended to the ledger detail of the mechanism under ``accounting="paper"``.
PAPER_NOTE = ("; accounting='paper': NOT PRIVATE (not (eps, delta)-DP when one row replaces "
              "a model)")
#: Share of the Tukey stage's eps spent on the PTR test under "swap" accounting.
SWAP_PTR_SHARE = 0.3


@dataclass(frozen=True)
class PTRReport:
    """Outcome of a propose-test-release check.

    Attributes
    ----------
    passed : bool
        Whether the noisy distance reached the threshold.
    distance : float
        The released (noisy) lower bound on the distance to an unsafe data set, in rows:
        ``M(D) + Laplace(1/eps_ptr)``. The exact ``M(D)`` is never stored.
    noisy_distance : float
        Same value as ``distance`` (kept for readability in code that names it explicitly).
    threshold : float
        ``ln(1/(2 delta)) / eps_ptr``; public.
    lemma : str
        Which distance lemma was used: ``"8.5"`` (Amin et al. 2023, default) or ``"3.6"``.
    eps : float
        Budget spent on the test.
    """

    passed: bool
    distance: float
    noisy_distance: float
    threshold: float
    lemma: str
    eps: float = float("nan")


@dataclass(frozen=True)
class PTRParams:
    """Everything the PTR test and the restricted exponential mechanism need.

    Attributes
    ----------
    eps_ptr : float
        Privacy cost of the test (Laplace scale 1/eps_ptr).
    eps_em : float
        Privacy cost of the restricted exponential mechanism.
    multiplier : float
        The mechanism samples depth i with weight ``W_i exp(multiplier * i)``; the lemmas are
        evaluated with this value.
    log_delta_lemma : float
        Log of the lemma's delta (kept in logs: it underflows at very large eps).
    threshold : float
        Release iff ``M + Laplace(1/eps_ptr) >= threshold``.
    monotone : bool
        Whether the exponential mechanism uses the monotone (no factor 2) form.
    """

    eps_ptr: float
    eps_em: float
    multiplier: float
    log_delta_lemma: float
    threshold: float
    monotone: bool
    accounting: str


def ptr_parameters(eps_tukey: float, delta: float, accounting: str = "swap",
                   ptr_share: float | None = None) -> PTRParams:
    """Split the Tukey stage's (eps, delta) between the PTR test and the mechanism.

    ``eps_ptr = ptr_share * eps_tukey`` and ``eps_em = eps_tukey - eps_ptr``. The paper uses
    halves; under ``"swap"`` the mechanism pays a factor 2 that the test does not, so dpstats
    gives the test a smaller share by default (:data:`SWAP_PTR_SHARE`, chosen by measurement on
    real data; see benchmarks/tukey_utility.py).

    ``"paper"`` (002 Algorithm 2): multiplier eps_em (monotone score), delta_lemma =
    delta / (8 exp(eps_ptr)), threshold ln(1/(2 delta)) / eps_ptr. Sound when a neighbouring
    data set *adds or removes one model*, which is **not** what one row does to the
    random-label partition (it replaces a model): under a replacement an exact search finds
    the mechanism's share at eps 1.70 against the 1.0 charged, so a fit with ``"paper"`` is
    **not private**. Kept only to reproduce the published numbers; ``dp_lm``/``dp_glm`` flag
    such fits NOT PRIVATE (``private=False``, a ``NotPrivateWarning``) and the ledger entry
    of the mechanism carries :data:`PAPER_NOTE`.

    ``"swap"`` (default): with m fixed, adding a row *replaces* one model, and under a
    replacement the depth score is not monotone (it can rise in one region and fall in
    another), so the no-factor-2 form can leak more than eps_em. dpstats treats a replacement
    as a removal followed by an addition: the model-level analysis of 002/003 is run at
    multiplier ``eps_em / 2`` (which is the standard exponential mechanism for a
    sensitivity-1 score), so each step costs eps_em/2 and the two together eps_em. Both lemma
    statistics keep sensitivity 1 under a replacement (their proofs only use
    ``S_{p+1,D} <= S_{p,D'} <= S_{p-1,D}``); a data set that passes has, except with probability
    delta/2, ``M >= 1``, so it and the intermediate (m-1)-model set are both safe, giving
    delta_s (1 + e^{eps_em/2}) <= delta/2 for the mechanism. Hence
    threshold = ln(1/delta) / eps_ptr and delta_lemma = delta_s / (4 exp(multiplier)) with
    delta_s = delta / (2 (1 + exp(multiplier))).
    """
    if accounting not in ACCOUNTING:
        raise ValueError(f"accounting must be one of {ACCOUNTING}; got {accounting!r}")
    if ptr_share is None:
        ptr_share = 0.5 if accounting == "paper" else SWAP_PTR_SHARE
    if not (0.0 < ptr_share < 1.0):
        raise ValueError(f"ptr_share must be in (0, 1); got {ptr_share!r}")
    eps_ptr = ptr_share * eps_tukey
    eps_em = eps_tukey - eps_ptr
    if accounting == "paper":
        return PTRParams(eps_ptr, eps_em, eps_em, math.log(delta / 8.0) - eps_ptr,
                         ptr_threshold(eps_ptr, delta), True, accounting)
    mult = eps_em / 2.0
    # log(delta_s) with delta_s = delta / (2 (1 + e^mult)), then delta_s / (4 e^mult)
    log_delta_s = math.log(delta / 2.0) - mult - math.log1p(math.exp(-mult))
    return PTRParams(eps_ptr, eps_em, mult, log_delta_s - math.log(4.0) - mult,
                     ptr_threshold(eps_ptr, delta / 2.0), False, accounting)


def _suffix_logsumexp(a: np.ndarray) -> np.ndarray:
    """``out[q] = log(sum(exp(a[q:])))`` computed from the right."""
    return np.logaddexp.accumulate(a[::-1])[::-1]


def distance_to_unsafety(logV: np.ndarray, logW: np.ndarray, t: int, eps: float,
                         delta_lemma: float | None = None, lemma: str = "8.5", *,
                         log_delta_lemma: float | None = None) -> int:
    """The exact statistic ``M(D)`` (not private; only :func:`ptr_check` releases it noisily).

    Parameters
    ----------
    logV : array, shape (D + 2,)
        Log volumes of depth >= i for i = 0..D+1, as from
        :func:`dpstats._kernels.depth.log_depth_volumes`.
    logW : array, shape (D + 1,)
        Log volumes of depth exactly i (index 0 unused), from
        :func:`dpstats._kernels.depth.log_exact_volumes`.
    t : int
        Depth restriction of the exponential mechanism (floor(floor(m/2)/2)).
    eps : float
        The exponential mechanism's eps.
    delta_lemma : float
        The lemma's delta, e.g. ``delta / (8 exp(eps_ptr))``; or pass ``log_delta_lemma``.
    lemma : {"8.5", "3.6"}

    Returns
    -------
    int
        Largest qualifying k in {0, ..., t-1}, or -1.
    """
    D = logV.shape[0] - 2
    if t < 1 or t > D:
        return -1
    log_delta = math.log(delta_lemma) if log_delta_lemma is None else log_delta_lemma
    ks = np.arange(t)
    outer = logV[t - ks - 1]
    if lemma == "8.5":
        depths = np.arange(1, D + 1)
        suffix = _suffix_logsumexp(logW[1:] + eps * depths)  # suffix[q-1] = log w(q)
        q = t + ks - 1
        valid = (q >= 1) & (q <= D)
        lw = np.where(valid, suffix[np.clip(q, 1, D) - 1], -np.inf)
        with np.errstate(invalid="ignore"):
            lhs = outer + eps * (t + ks + 1) - lw
    elif lemma == "3.6":
        depths = np.arange(1, D + 1)
        a = -logV[1:D + 1] - eps * depths / 2.0
        suffix_min = np.minimum.accumulate(a[::-1])[::-1]  # suffix_min[q-1] = min_{q'>=q} a
        qmin = t + ks + 2
        valid = qmin <= D
        best = np.where(valid, suffix_min[np.clip(qmin, 1, D) - 1], np.inf)
        with np.errstate(invalid="ignore"):
            lhs = outer + eps * (t + ks + 1) / 2.0 + best
    else:
        raise ValueError(f"lemma must be one of {LEMMAS}; got {lemma!r}")
    ok = valid & ~np.isnan(lhs) & (lhs <= log_delta)
    hits = np.flatnonzero(ok)
    return int(hits[-1]) if hits.size else -1


def ptr_threshold(eps_ptr: float, delta: float) -> float:
    """Public threshold ``ln(1/(2 delta)) / eps_ptr`` of the PTR test."""
    return math.log(1.0 / (2.0 * delta)) / eps_ptr


def ptr_check(logV: np.ndarray, logW: np.ndarray, *, t: int, params: PTRParams,
              rng: np.random.Generator, ledger: Ledger | None = None, lemma: str = "8.5",
              stage: str | None = None) -> PTRReport:
    """Run the PTR test and release its outcome.

    Mechanism: ``M(D) + Laplace(scale = 1/eps_ptr)`` compared with ``params.threshold``.
    ``M`` (evaluated at ``params.multiplier`` and ``params.delta_lemma``) has sensitivity 1 under
    add/remove one row, so the test is eps_ptr-DP (see :func:`ptr_parameters` for why a pass
    makes the restricted exponential mechanism safe). Charges ``(eps_ptr, 0)``; the delta is
    charged with the exponential mechanism it protects.
    """
    if lemma not in LEMMAS:
        raise ValueError(f"lemma must be one of {LEMMAS}; got {lemma!r}")
    M = distance_to_unsafety(logV, logW, t, params.multiplier, lemma=lemma,
                             log_delta_lemma=params.log_delta_lemma)
    if ledger is not None:
        ledger.charge("PTR test (laplace)", params.eps_ptr, 0.0, stage=stage,
                      detail=f"distance to unsafety (lemma {lemma}); sensitivity 1, "
                             f"scale {1.0 / params.eps_ptr:.4g}")
    noisy = laplace(float(M), 1.0, params.eps_ptr, rng)  # charged above, under its own name
    return PTRReport(passed=bool(noisy >= params.threshold), distance=noisy,
                     noisy_distance=noisy, threshold=params.threshold, lemma=lemma,
                     eps=params.eps_ptr)
