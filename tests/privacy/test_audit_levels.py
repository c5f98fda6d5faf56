"""Audit of the private discovery of category levels (:func:`private_levels`).

Neighbours: add/remove one row. The mechanism's input is the histogram of each column (level ->
number of rows), so one row changes one count per column by 1, and that count may be a level
the other data set lacks (count 1 vs absent). The audited pairs: a new level beside common and
rare ones, a count crossing the threshold, a rare level's count moving the pooled level across
the threshold, a new rare level feeding the pooled level, and a row in two columns at once (one
existing level, one new). Claimed (eps, delta) = (1, 0.02) for the whole release; the output is
discrete: the released levels of every column and whether each pooled level was kept.

Broken variants (monkeypatched module attributes, nothing in dpstats changed): threshold 0 (a
new level is released most of the time), and no noise on the counts (a count at the threshold
decides the output).
"""

from __future__ import annotations

import numpy as np
import pytest
from auditor import Pair, audit, draws, record, seed_for

from dpstats.mechanisms import levels as levels_mod

EPS, DELTA = 1.0, 0.02


def _pairs() -> list[Pair]:
    # threshold at (eps / 2, delta) = (0.5, 0.02) for one column: 8 (scale 2)
    _, _, tau = levels_mod.stability_threshold(EPS / 2, DELTA)
    common = {"a": 3 * tau, "b": tau + 2}
    pairs = [
        Pair("new level (count 1)", [common], [{**common, "z": 1}]),
        Pair("count crosses the threshold", [{"a": 3 * tau, "b": tau - 1}],
             [{"a": 3 * tau, "b": tau}]),
        Pair("rare count moves the pooled level", [{"a": 3 * tau, "r": tau - 2}],
             [{"a": 3 * tau, "r": tau - 1}]),
        Pair("new rare level feeds the pooled level",
             [{"a": 3 * tau, "r": tau // 2, "s": tau // 2}],
             [{"a": 3 * tau, "r": tau // 2, "s": tau // 2, "z": 1}]),
    ]
    _, _, tau2 = levels_mod.stability_threshold(EPS / 4, DELTA / 2)
    pairs.append(Pair("one row in two columns (one new level)",
                      [{"a": tau2}, {"x": tau2}], [{"a": tau2 + 1}, {"x": tau2, "y": 1}]))
    return pairs


def _sample(hists, n, rng):
    out = []
    for _ in range(n):
        rel = levels_mod.private_levels(hists, EPS, DELTA, rng)
        out.append(";".join(",".join(map(str, r.levels)) + ("|P" if r.pooled else "|-")
                            for r in rel))
    return np.array(out)


class _Silent:
    """The discrete module without noise."""

    dyadic_at_least = staticmethod(levels_mod._discrete.dyadic_at_least)

    @staticmethod
    def discrete_laplace(num, den, n, rng):
        return np.zeros(n, dtype=np.int64)


#: Built with the real threshold, for every variant.
PAIRS = _pairs()
VARIANTS = ["real", "threshold 0", "no noise"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_private_levels(variant, monkeypatch):
    if variant == "threshold 0":
        real = levels_mod.stability_threshold
        monkeypatch.setattr(levels_mod, "stability_threshold",
                            lambda eps, delta: (*real(eps, delta)[:2], 0))
    elif variant == "no noise":
        monkeypatch.setattr(levels_mod, "_discrete", _Silent)
    rep = audit(_sample, PAIRS, eps=EPS, delta=DELTA, kind="discrete", n=draws(3_000),
                n_pilot=draws(400), seed=seed_for(f"levels/{variant}"))
    record("private levels (stability histogram)", variant, "add/remove one row", rep)
    assert rep.violated == (variant != "real"), str(rep)

