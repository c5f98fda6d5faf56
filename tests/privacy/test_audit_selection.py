"""Audits of the private selectors: DPKendall's rounds, SubLasso's vote and DP-SIS.

Neighbours: add/remove one row of ``(X, y)``. Each selector is run once on ``D`` and once on
``D'`` with a recorder on the mechanism it calls (:func:`hooks.recording`); the recorded call
(the statistic the selector computed, the sensitivity and eps it passed) is then replayed many
times through the same module attribute (:func:`hooks.replay`). This audits what the selector
releases without re-running its non-private work per draw. A pair is always "``D`` and ``D``
plus one row": the selectors' output distributions do not depend on the order of the rows
(SubLasso's group labels are i.i.d. and ``rng.integers`` draws them sequentially, so the common
rows keep their groups), so removing any row is the same pair read the other way round.

* DPKendall (:func:`dpstats.selection.kendall.select`): round 1 (k = 1, eps = 1) and round 2
  of k = 2 (eps = 2, i.e. eps/k = 1 per round) with the first pick fixed (adaptive
  composition conditions on it). Candidate rows: corners of a box beyond the data in every
  coordinate and in y. Broken: score sensitivities 3/2 and 3 divided by 4.
* SubLasso (:func:`dpstats.selection.sublasso.select`): the vote of 5 groups, k = 2 of 4,
  eps = 1; candidate rows push one feature with an extreme label, for three label draws.
  Broken: Gumbel noise a quarter of ``2 k / eps`` (votes' sensitivity taken as 1/4).
* DP-SIS (:func:`dpstats.selection.sis.select`) with public bounds (-1, 1): k = 2 of 6,
  eps = 1; candidate rows at corners of the bounds and far outside them. Broken: the columns
  are scaled by the bounds but not clipped, so an outlying row moves a score by far more than 1.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for
from hooks import recording, replay, sensitivity_times

from dpstats.selection import kendall, sis, sublasso

RELATION = "add/remove one row"


def _record(module, name, run, picks=()):
    """The last call ``run()`` makes to ``module.name``; earlier calls return ``picks``."""
    with recording(module, name, respond=lambda i, _: picks[i] if i < len(picks) else None) \
            as calls:
        run()
    call = dict(calls[-1])
    call["scores"] = np.array(call["scores"], dtype=np.float64)
    return call


def _row_pairs(X, y, rows, record_call) -> list[Pair]:
    base = record_call(X, y)
    out = []
    for name, (x_new, y_new) in rows:
        X1, y1 = np.vstack([X, x_new]), np.append(y, y_new)
        out.append(Pair(f"add {name}", base, record_call(X1, y1)))
    return out


# ------------------------------------------------------------------------------ DPKendall
def _kendall_data():
    """Columns perfectly concordant and discordant with y (where one row moves tau_hat by the
    full 3/2), one noisy copy of y and one unrelated column."""
    rng = np.random.default_rng(7)
    y = rng.normal(size=12)
    X = np.column_stack([y + 0.01 * rng.normal(size=12), -y, y + rng.normal(size=12),
                         rng.normal(size=12)])
    return X, y


def kendall_pairs(k: int, picks=()) -> list[Pair]:
    X, y = _kendall_data()

    def rec(Xa, ya):
        return _record(kendall, "exponential", lambda: kendall.select(
            Xa, ya, k=k, eps=float(k), rng=np.random.default_rng(0)), picks)

    corners = [(f"corner {''.join('+' if s > 0 else '-' for s in signs)}",
                (10.0 * np.array(signs[:-1]), 10.0 * signs[-1]))
               for signs in itertools.product((-1.0, 1.0), repeat=X.shape[1] + 1)]
    return _row_pairs(X, y, corners, rec)


@pytest.mark.parametrize("variant", ["real", "sensitivities / 4"])
@pytest.mark.parametrize("round_", [1, 2])
def test_kendall_round(round_, variant, monkeypatch):
    """One DPKendall round at eps/k = 1 (round 2: first pick fixed at column 0)."""
    if variant != "real":
        monkeypatch.setattr(kendall, "SENS_FIRST", kendall.SENS_FIRST / 4)
        monkeypatch.setattr(kendall, "SENS_LATER", kendall.SENS_LATER / 4)
    pairs = kendall_pairs(round_, picks=(0,) * (round_ - 1))
    rep = audit(replay(kendall, "exponential"), pairs, eps=1.0, kind="discrete",
                n=draws(12_000), n_pilot=draws(300),
                seed=seed_for(f"kendall{round_}/{variant}"))
    record(f"DPKendall round {round_}", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ SubLasso
def sublasso_pairs() -> list[Pair]:
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 4))
    y = X.sum(axis=1) + 0.5 * rng.normal(size=40)
    pairs = []
    for label_seed in range(3):
        def rec(Xa, ya, s=label_seed):
            return _record(sublasso, "peel_topk", lambda: sublasso.select(
                Xa, ya, k=2, eps=1.0, rng=np.random.default_rng(s), groups=5))
        rows = [(f"x{j}=10 sign(y), y={sy} (labels {label_seed})",
                 (10.0 * np.eye(4)[j] * np.sign(sy), float(sy)))
                for j in range(4) for sy in (-10, 10)]
        pairs += _row_pairs(X, y, rows, rec)
    return pairs


@pytest.mark.parametrize("variant", ["real", "Gumbel scale / 4"])
def test_sublasso_vote(variant, monkeypatch):
    """SubLasso: one-shot Gumbel top-2 of the votes of 5 groups on 4 columns, eps = 1."""
    if variant != "real":
        monkeypatch.setattr(sublasso, "peel_topk", sensitivity_times(sublasso.peel_topk, 1 / 4))
    rep = audit(replay(sublasso, "peel_topk"), sublasso_pairs(), eps=1.0, kind="discrete",
                n=draws(10_000), n_pilot=draws(400), seed=seed_for(f"sublasso/{variant}"))
    record("SubLasso vote", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ DP-SIS
def sis_pairs() -> list[Pair]:
    rng = np.random.default_rng(13)
    X = rng.uniform(-1, 1, size=(20, 6))
    y = np.clip(X[:, 0] - X[:, 3] + 0.2 * rng.normal(size=20), -1, 1)

    def rec(Xa, ya):
        return _record(sis, "lipschitz_topk", lambda: sis.select(
            Xa, ya, k=2, eps=1.0, rng=np.random.default_rng(0), bounds=(-1.0, 1.0)))

    signs = rng.choice([-1.0, 1.0], size=(8, 7))
    rows = [(f"corner #{i}", (s[:6], s[6])) for i, s in enumerate(signs)]
    rows += [(f"outlier x{i},x{j}=10, y=10", (10.0 * (np.eye(6)[i] + np.eye(6)[j]), 10.0))
             for i, j in ((1, 2), (4, 5))]
    return _row_pairs(X, y, rows, rec)


def unclipped_normal(values, lo, hi):
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return (np.asarray(values, dtype=np.float64) - (lo + hi) / 2) / ((hi - lo) / 2)


@pytest.mark.parametrize("variant", ["real", "columns scaled but not clipped"])
def test_sis(variant, monkeypatch):
    """DP-SIS with public bounds: canonical Lipschitz top-2 of |x_j^T y|, eps = 1."""
    if variant != "real":
        # the exact sums (dpstats._kernels.row_sums) clip each entry to its bound again, so
        # the broken variant also sums the unclipped products in floats, as before them
        monkeypatch.setattr(sis, "to_unit", unclipped_normal)
        monkeypatch.setattr(sis, "tdot", lambda a, b, ba, bb: np.asarray(a).T @ b)
    rep = audit(replay(sis, "lipschitz_topk"), sis_pairs(), eps=1.0, kind="discrete",
                n=draws(6_000), n_pilot=draws(400), seed=seed_for(f"sis/{variant}"))
    record("DP-SIS (public bounds)", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
