"""Statistical privacy auditor: neighbouring inputs, many draws, exact binomial bounds.

A mechanism is (eps, delta)-DP when, for every pair of neighbouring inputs ``D0, D1`` and every
event ``E``, ``P[M(D1) in E] <= e^eps P[M(D0) in E] + delta`` (and the same with the roles
swapped). :func:`audit_pair` tests this for one pair:

1. draw ``n`` outputs on each input and split each sample in two halves;
2. on the first half choose a candidate event (:func:`select_event`): for numeric outputs,
   thresholds at quantiles of a fitted 1-D projection (identity, Fisher's discriminant
   direction, difference of means, each coordinate), plus "nothing released" (NaN rows); for
   discrete outputs, each value and the unions of the values with the largest estimated
   ratios, of the whole outcome and, for tuples, of each element and of the tuple as a set.
   The event and the direction with the largest Clopper-Pearson lower bound on eps are kept;
3. on the second half compute exact one-sided Clopper-Pearson bounds ``p1_low`` (numerator
   side) and ``p0_high`` at level ``alpha / 2`` each, and flag a violation when
   ``p1_low > e^eps * p0_high + delta``. ``log((p1_low - delta) / p0_high)`` is the empirical
   lower bound on eps that the pair certifies (0 when there is no evidence).

:func:`audit` searches several candidate pairs: a pilot sample on every pair ranks them (event
chosen on one half of the pilot, bound computed on the other), and the ``n_audit`` best are
audited on fresh draws with a Bonferroni share of ``alpha`` each. A correct mechanism is
flagged with probability at most ``alpha`` per audit.

Samplers have the signature ``sample(data, n, rng) -> array``: ``(n,)`` or ``(n, k)`` floats
for ``kind="numeric"`` (a row of NaN means "nothing released"), or ``(n,)`` / ``(n, k)`` of
any discrete values for ``kind="discrete"`` (each row one outcome).
"""

from __future__ import annotations

import math
import os
import zlib
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import beta as _beta

__all__ = ["FULL", "ALPHA", "Pair", "PairResult", "Report", "audit", "audit_pair",
           "select_event", "eps_lower_bound", "cp_lower", "cp_upper", "draws", "seed_for",
           "RESULTS", "record"]

#: Full mode (``DPSTATS_FULL=1``): more draws and fresh random seeds.
FULL = os.environ.get("DPSTATS_FULL", "") == "1"
#: Draws multiplier of the full mode.
FULL_FACTOR = 4
#: Probability that an audit flags a correct mechanism (all its pairs together).
ALPHA = 1e-3
#: Quantile levels (and their complements) of the thresholds tried on a projection.
_LEVELS = np.geomspace(2e-4, 0.5, 28)
#: Largest number of single coordinates tried as projections.
_MAX_COORDS = 16
#: Table of audit outcomes, printed at the end of the session by conftest.py.
RESULTS: list[dict] = []


def draws(n: int) -> int:
    """Sample size for the current mode (CI: ``n``; full: ``FULL_FACTOR * n``)."""
    return int(n * FULL_FACTOR) if FULL else int(n)


def seed_for(name: str) -> int:
    """Fixed seed per audit in CI; in full mode a fresh one (``DPSTATS_AUDIT_SEED`` pins it)."""
    pinned = os.environ.get("DPSTATS_AUDIT_SEED")
    if pinned:
        return (int(pinned) + zlib.crc32(name.encode())) % 2**32
    if FULL:
        return int(np.random.SeedSequence().entropy % 2**32)
    return zlib.crc32(name.encode())


# ------------------------------------------------------------------------ binomial bounds
def cp_lower(k, n, a):
    """Exact one-sided (1 - a) Clopper-Pearson lower bound on a binomial proportion."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(k > 0, _beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)


def cp_upper(k, n, a):
    """Exact one-sided (1 - a) Clopper-Pearson upper bound on a binomial proportion."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(k < n, _beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)


def eps_lower_bound(k1, k0, n1: int, n0: int, delta: float, alpha: float):
    """``log((p1_low - delta) / p0_high)`` with one-sided CP bounds at ``alpha / 2`` each.

    ``k1`` events among ``n1`` draws on the numerator side, ``k0`` among ``n0`` on the other.
    Returns 0 where ``p1_low <= delta`` (no evidence).
    """
    lo = cp_lower(k1, n1, alpha / 2)
    hi = cp_upper(k0, n0, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log((lo - delta) / hi)
    return np.where(lo > delta, np.maximum(e, 0.0), 0.0)


# ------------------------------------------------------------------------ events
@dataclass(frozen=True)
class Event:
    """A set of outcomes: ``x @ w > t`` ("above"), ``x @ w <= t`` ("below"), a NaN row
    ("unreleased"), or one of ``codes`` in column ``column`` of the coded outcomes (discrete;
    see :func:`_encode`)."""

    kind: str
    label: str
    w: np.ndarray | None = None
    t: float = 0.0
    codes: tuple = ()
    column: int = 0

    def member(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "codes":
            return np.isin(x[:, self.column], np.asarray(self.codes, dtype=x.dtype))
        released = ~np.isnan(x).any(axis=1)
        if self.kind == "unreleased":
            return ~released
        z = np.where(released[:, None], x, 0.0) @ self.w
        return released & ((z > self.t) if self.kind == "above" else (z <= self.t))


def _projections(x0: np.ndarray, x1: np.ndarray) -> list[tuple[str, np.ndarray]]:
    k = x0.shape[1]
    if k == 1:
        return [("x", np.ones(1))]
    out = []
    f0, f1 = x0[~np.isnan(x0).any(axis=1)], x1[~np.isnan(x1).any(axis=1)]
    if len(f0) > k and len(f1) > k:
        diff = f1.mean(axis=0) - f0.mean(axis=0)
        cov = (np.cov(f0, rowvar=False) + np.cov(f1, rowvar=False)) / 2.0
        cov = np.atleast_2d(cov) + (1e-9 * np.trace(np.atleast_2d(cov)) / k + 1e-300) * np.eye(k)
        fisher = (np.linalg.lstsq(cov, diff, rcond=None)[0] if np.isfinite(cov).all()
                  and np.isfinite(diff).all() else diff)
        for name, w in (("fisher", fisher), ("means", diff)):
            if np.isfinite(w).all() and np.abs(w).max() > 0:
                out.append((name, w / np.abs(w).max()))
    out += [(f"x[{j}]", np.eye(k)[j]) for j in range(min(k, _MAX_COORDS))]
    return out


def _numeric_candidates(a0: np.ndarray, a1: np.ndarray) -> list[tuple[Event, int, int]]:
    """Candidate events with their counts on the selection halves."""
    cands = []
    nan0, nan1 = int(np.isnan(a0).any(axis=1).sum()), int(np.isnan(a1).any(axis=1).sum())
    if nan0 + nan1:
        cands.append((Event("unreleased", "nothing released"), nan0, nan1))
    levels = np.concatenate([_LEVELS, 1.0 - _LEVELS])
    for name, w in _projections(a0, a1):
        z0, z1 = np.sort(_proj(a0, w)), np.sort(_proj(a1, w))
        pooled = np.concatenate([z0, z1])
        if pooled.size == 0:
            continue
        ts = np.unique(np.quantile(pooled, levels))
        le0 = np.searchsorted(z0, ts, side="right")
        le1 = np.searchsorted(z1, ts, side="right")
        for t, b0, b1 in zip(ts, le0, le1, strict=True):
            cands.append((Event("below", f"{name} <= {t:.6g}", w, float(t)), int(b0), int(b1)))
            cands.append((Event("above", f"{name} > {t:.6g}", w, float(t)),
                          int(z0.size - b0), int(z1.size - b1)))
    return cands


def _proj(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Projection of the released (non-NaN) rows."""
    return x[~np.isnan(x).any(axis=1)] @ w


def _discrete_candidates(c0: np.ndarray, c1: np.ndarray, labels) -> list:
    """Each value, and unions of the values with the largest ratios, of the whole outcome and
    (for tuples) of each element."""
    cands = []
    for col in range(c0.shape[1]):
        K = int(max(c0[:, col].max(initial=-1), c1[:, col].max(initial=-1))) + 1
        n0, n1 = np.bincount(c0[:, col], minlength=K), np.bincount(c1[:, col], minlength=K)
        seen = np.flatnonzero(n0 + n1)
        what, values = labels[col]
        cands += [(Event("codes", f"{what} = {values[c]}", codes=(int(c),), column=col),
                   int(n0[c]), int(n1[c])) for c in seen]
        for num, den, tag in ((n1, n0, "D1"), (n0, n1, "D0")):
            order = seen[np.argsort(-(num[seen] + 1.0) / (den[seen] + 1.0), kind="stable")]
            s0, s1 = np.cumsum(n0[order]), np.cumsum(n1[order])
            for j in range(1, min(order.size, 200)):
                cands.append((Event("codes", f"{what}: top {j + 1} values favouring {tag}",
                                    codes=tuple(int(c) for c in order[:j + 1]), column=col),
                              int(s0[j]), int(s1[j])))
    return cands


def select_event(a0, a1, *, kind: str, delta: float, alpha: float, labels=None):
    """Best event and direction on the selection halves: ``(event, direction, score)``.

    ``direction`` is 1 when the event is more likely under ``D1`` (numerator ``D1``), else 0;
    ``score`` is the in-sample Clopper-Pearson lower bound on eps.
    """
    cands = (_numeric_candidates(a0, a1) if kind == "numeric"
             else _discrete_candidates(a0, a1, labels))
    if not cands:
        return None, 1, 0.0
    k0 = np.array([c[1] for c in cands])
    k1 = np.array([c[2] for c in cands])
    n0, n1 = len(a0), len(a1)
    up = eps_lower_bound(k1, k0, n1, n0, delta, alpha)
    down = eps_lower_bound(k0, k1, n0, n1, delta, alpha)
    # ties (e.g. no evidence anywhere): prefer the larger smoothed log ratio
    log_ratio = np.log((k1 + 1.0) / (n1 + 1.0)) - np.log((k0 + 1.0) / (n0 + 1.0))
    score = np.maximum(up, down) + 1e-9 * np.abs(log_ratio)
    i = int(np.argmax(score))
    direction = 1 if up[i] > down[i] or (up[i] == down[i] and log_ratio[i] >= 0) else 0
    return cands[i][0], direction, float(max(up[i], down[i]))


# ------------------------------------------------------------------------ one pair
@dataclass(frozen=True)
class Pair:
    """Two neighbouring inputs and how they differ (``name``, e.g. "add row (9, -9)")."""

    name: str
    d0: object
    d1: object


@dataclass
class PairResult:
    pair: str
    eps_lb: float
    violated: bool
    event: str
    direction: str
    counts: tuple[int, int]
    n: int
    pilot: float | None = None


def _as_outcomes(x) -> np.ndarray:
    x = np.asarray(x)
    return x[:, None] if x.ndim == 1 else x


def _encode(x0: np.ndarray, x1: np.ndarray):
    """Integer codes: column 0 for whole outcomes, then one column per element of a tuple and
    one for the tuple as a set (sorted), when that differs. ``labels[c]`` is ``(name,
    values)`` for code column ``c``."""
    rows = np.concatenate([x0, x1])
    views = [("outcome", rows)]
    if rows.shape[1] > 1:
        views += [(f"element {j}", rows[:, [j]]) for j in range(rows.shape[1])]
        as_set = np.sort(rows, axis=1)
        if not np.array_equal(as_set, rows):
            views.append(("set", as_set))
    codes, labels = [], []
    for name, view in views:
        u, c = np.unique(view, axis=0, return_inverse=True)
        codes.append(c.ravel())
        labels.append((name, [tuple(r.tolist()) if len(r) > 1 else r[0].item() for r in u]))
    codes = np.column_stack(codes)
    return codes[:len(x0)], codes[len(x0):], labels


def _draw(sample, pair: Pair, n: int, ss: np.random.SeedSequence, kind: str):
    s0, s1 = ss.spawn(2)
    x0 = _as_outcomes(sample(pair.d0, n, np.random.default_rng(s0)))
    x1 = _as_outcomes(sample(pair.d1, n, np.random.default_rng(s1)))
    if kind == "numeric":
        return x0.astype(np.float64), x1.astype(np.float64), None
    return _encode(x0, x1)


def audit_pair(sample, pair: Pair, *, eps: float, delta: float, kind: str, n: int,
               ss: np.random.SeedSequence, alpha: float = ALPHA) -> PairResult:
    """Draw ``n`` outputs on each input, select an event on one half, test it on the other."""
    x0, x1, labels = _draw(sample, pair, n, ss, kind)
    h = n // 2
    ev, direction, _ = select_event(x0[:h], x1[:h], kind=kind, delta=delta, alpha=alpha,
                                    labels=labels)
    if ev is None:
        return PairResult(pair.name, 0.0, False, "none", "-", (0, 0), n - h)
    k0 = int(ev.member(x0[h:]).sum())
    k1 = int(ev.member(x1[h:]).sum())
    num, den = (k1, k0) if direction == 1 else (k0, k1)
    m = n - h
    p1_low = float(cp_lower(num, m, alpha / 2))
    p0_high = float(cp_upper(den, m, alpha / 2))
    violated = p1_low > math.exp(eps) * p0_high + delta
    eps_lb = float(eps_lower_bound(num, den, m, m, delta, alpha))
    return PairResult(pair.name, eps_lb, bool(violated), ev.label,
                      "P1/P0" if direction == 1 else "P0/P1", (k0, k1), m)


# ------------------------------------------------------------------------ search + audit
@dataclass
class Report:
    eps: float
    delta: float
    seed: int
    results: list[PairResult] = field(default_factory=list)
    pilot: dict[str, float] = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        return any(r.violated for r in self.results)

    @property
    def eps_lb(self) -> float:
        return max((r.eps_lb for r in self.results), default=0.0)

    @property
    def best(self) -> PairResult:
        return max(self.results, key=lambda r: r.eps_lb)

    def __str__(self) -> str:
        lines = [f"claimed (eps={self.eps:g}, delta={self.delta:g}); seed {self.seed}; "
                 f"empirical eps lower bound {self.eps_lb:.3f}; "
                 f"{'VIOLATION' if self.violated else 'no violation'}"]
        for r in self.results:
            lines.append(f"  {r.pair}: eps_lb {r.eps_lb:.3f} on [{r.event}] {r.direction} "
                         f"counts(D0, D1)={r.counts} of {r.n}"
                         + ("" if r.pilot is None else f"; pilot {r.pilot:.3f}"))
        return "\n".join(lines)


def _pilot_score(sample, pair: Pair, n: int, ss, kind: str, delta: float) -> float:
    """Out-of-sample eps bound (level 0.05) of the event chosen on half of a pilot sample;
    the in-sample bound breaks ties (an in-sample bound alone favours sparse outcomes)."""
    x0, x1, labels = _draw(sample, pair, n, ss, kind)
    h = n // 2
    ev, direction, inside = select_event(x0[:h], x1[:h], kind=kind, delta=delta, alpha=0.05,
                                         labels=labels)
    if ev is None:
        return 0.0
    k0, k1 = int(ev.member(x0[h:]).sum()), int(ev.member(x1[h:]).sum())
    num, den = (k1, k0) if direction == 1 else (k0, k1)
    return float(eps_lower_bound(num, den, n - h, n - h, delta, 0.05)) + 1e-3 * inside


def audit(sample, pairs: list[Pair], *, eps: float, delta: float = 0.0, kind: str = "numeric",
          n: int, n_pilot: int | None = None, n_audit: int = 2, seed: int,
          alpha: float = ALPHA) -> Report:
    """Audit ``sample`` on the most revealing of ``pairs``.

    With more than ``n_audit`` pairs, a pilot of ``n_pilot`` draws per input ranks every pair
    (:func:`_pilot_score`), and only the ``n_audit`` best are audited, on fresh draws (``n``
    per input), each at level ``alpha / n_audit``.
    """
    if kind not in ("numeric", "discrete"):
        raise ValueError(f"kind must be 'numeric' or 'discrete'; got {kind!r}")
    ss_pilot, ss_audit = np.random.SeedSequence(seed).spawn(2)
    report = Report(eps, delta, seed)
    chosen = list(pairs)
    if len(pairs) > n_audit:
        n_pilot = n_pilot or max(n // 5, 200)
        for pair, ss in zip(pairs, ss_pilot.spawn(len(pairs)), strict=True):
            report.pilot[pair.name] = _pilot_score(sample, pair, n_pilot, ss, kind, delta)
        chosen = sorted(pairs, key=lambda p: -report.pilot[p.name])[:n_audit]
    for pair, ss in zip(chosen, ss_audit.spawn(len(chosen)), strict=True):
        res = audit_pair(sample, pair, eps=eps, delta=delta, kind=kind, n=n, ss=ss,
                         alpha=alpha / len(chosen))
        res.pilot = report.pilot.get(pair.name)
        report.results.append(res)
    return report


def record(mechanism: str, variant: str, relation: str, report: Report) -> Report:
    """Add an audit outcome to :data:`RESULTS` (printed at the end of the session)."""
    RESULTS.append({"mechanism": mechanism, "variant": variant, "neighbours": relation,
                    "eps": report.eps, "delta": report.delta, "eps_lb": report.eps_lb,
                    "violated": report.violated, "pair": report.best.pair if report.results
                    else "", "seed": report.seed, "full": FULL})
    print(f"\n[{mechanism} / {variant}] {report}")
    return report
