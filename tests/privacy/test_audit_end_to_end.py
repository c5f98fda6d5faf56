"""End-to-end audits through the public entry points (issue 14): ``dpstats.select`` and
``dpstats.dp_lm``, not a single mechanism.

Neighbours: add/remove one row; every pair is ``D`` and ``D`` plus one adversarial row (the
output distributions do not depend on the order of the rows, so removing a row is the same pair
read the other way round). Each
draw is a whole call of the entry point with its own generator
(``random_state=np.random.default_rng(...)`` seeded from the auditor's spawned streams), and
the output handed to the auditor is a function of the public result only. Each audit also runs
a deliberately broken variant (monkeypatched in the test tree; nothing in ``dpstats`` changed)
that it must flag. Draws: a few hundred fits per input in CI (4x under ``DPSTATS_FULL=1``);
each pair list is short enough to be audited whole (no pilot), at ``alpha / len(pairs)`` each.

* **Selection** (``dp.select("y ~ .", D, eps=1, method="kendall", k=1)``, 200 rows): two
  candidate columns tied with ``y`` (``b`` is ``a`` plus a perturbation far below the gaps
  between its values, so the Kendall scores are equal) and one unrelated column; the added
  row is concordant with ``y`` in ``a`` and discordant in ``b``, which moves the score
  difference by about 2 (of the 3 that two sensitivities of 3/2 allow) and makes ``a`` the
  favourite. Output: the selected tuple (discrete). Claimed (1, 0): DPKendall with k = 1
  spends all of eps in one exponential mechanism. Broken: the round-1 score sensitivity
  ``SENS_FIRST`` divided by 8.
* **Level discovery** (``dp.dp_lm("y ~ x + g", ...)``, AdaSSP with public bounds, no
  selection, 300 rows): ``g`` is a text column with two common levels; the added row carries
  a new level (and an extreme ``x``, ``y``). Output: the coefficient names
  ``tuple(fit.params.index)`` (discrete). Claimed: the fit's (eps, delta) = (2, 0.02), a
  quarter of both for the levels stage. Broken: ``levels="data"`` (levels read from the data:
  the new level's coefficient appears exactly when the row is there).
* **Release decision, clip box and coefficients** (``dp.dp_lm("y ~ x", ...)``, AdaSSP with
  private bounds ``"auto"``, no selection, 2000 rows): the added row is an outlier
  (``y = 1e6``, with ``x`` at 0 or at 1e6). Output: ``fit.clip`` of ``x`` and ``fit.params``
  (numeric; a NaN row when nothing was released, so the release decision is an event too).
  Claimed: the fit's (eps, delta) = (1, 1e-3). Broken: the label bound is the exact
  ``max |y|`` of the data (``dpstats.estimators.bounded._resolve`` patched), a non-private
  bound that scales the coefficients' noise by the outlier.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from auditor import Pair, audit, draws, record, seed_for

import dpstats as dp
from dpstats.estimators import bounded
from dpstats.selection import kendall

RELATION = "add one row (public entry point)"


def _rngs(n: int, rng: np.random.Generator) -> list[np.random.Generator]:
    """``n`` independent generators for ``n`` fits, spawned from the auditor's stream."""
    return rng.spawn(n)


def _add_row(D: pd.DataFrame, row: dict) -> pd.DataFrame:
    return pd.concat([D, pd.DataFrame([row])], ignore_index=True)


# ------------------------------------------------------------------------------ selection
def selection_pairs() -> list[Pair]:
    rng = np.random.default_rng(21)
    n = 200
    y = rng.normal(size=n)
    a = y + 0.3 * rng.normal(size=n)
    # b: a copy of a moved far less than the gaps between its values (same ranks: an exact
    # tie of the two scores on D)
    D = pd.DataFrame({"a": a, "b": a + 1e-9 * rng.normal(size=n), "c": rng.normal(size=n),
                      "y": y})
    big = 10.0
    return [Pair("add (a, b, y) = (10, -10, 10)", D,
                 _add_row(D, {"a": big, "b": -big, "c": 0.0, "y": big}))]


def _select_sample(D, n, rng):
    out = []
    for r in _rngs(n, rng):
        res = dp.select("y ~ .", D, eps=1.0, method="kendall", k=1, random_state=r)
        out.append(",".join(res.selected))
    return np.array(out)


@pytest.mark.parametrize("variant", ["real", "SENS_FIRST / 8"])
def test_select_kendall(variant, monkeypatch):
    if variant != "real":
        monkeypatch.setattr(kendall, "SENS_FIRST", kendall.SENS_FIRST / 8)
    rep = audit(_select_sample, selection_pairs(), eps=1.0, kind="discrete", n=draws(1_000),
                seed=seed_for(f"e2e-select/{variant}"))
    record("e2e: dp.select kendall, k=1", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ levels
LV_EPS, LV_DELTA = 2.0, 0.02
#: A quarter of eps and delta for the levels stage, the rest for the regression.
LV_SPLIT = {"levels": 0.25, "n": 0.0, "selection": 0.0, "regression": 0.75}


def levels_pairs() -> list[Pair]:
    rng = np.random.default_rng(22)
    n = 300
    x = rng.uniform(-2, 2, size=n)
    D = pd.DataFrame({"x": x, "g": rng.choice(["red", "blue"], size=n),
                      "y": 2 * x + rng.normal(size=n)})
    return [Pair("add a row with a new level", D,
                 _add_row(D, {"x": 5.0, "g": "zzz-new", "y": 20.0}))]


def _levels_sample(levels: str):
    def sample(D, n, rng):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in _rngs(n, rng):
                fit = dp.dp_lm("y ~ x + g", D, eps=LV_EPS, delta=LV_DELTA, method="adassp",
                               select=None, bounds={"x": (-5, 5), "y": (-20, 20)},
                               split=LV_SPLIT, levels=levels, random_state=r)
                out.append("|".join(fit.params.index))
        return np.array(out)

    return sample


@pytest.mark.parametrize("variant", ["real", "levels='data'"])
def test_dp_lm_levels(variant):
    sample = _levels_sample("private" if variant == "real" else "data")
    rep = audit(sample, levels_pairs(), eps=LV_EPS, delta=LV_DELTA, kind="discrete",
                n=draws(200), seed=seed_for(f"e2e-levels/{variant}"))
    record("e2e: dp_lm category levels", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)


# ------------------------------------------------------------------------------ release
RL_EPS, RL_DELTA = 1.0, 1e-3


def release_pairs() -> list[Pair]:
    rng = np.random.default_rng(23)
    n = 2_000
    x = rng.uniform(-1, 1, size=n)
    D = pd.DataFrame({"x": x, "y": x + 0.5 * rng.normal(size=n)})
    return [Pair("add outlier (x, y) = (0, 1e6)", D, _add_row(D, {"x": 0.0, "y": 1e6})),
            Pair("add outlier (x, y) = (1e6, 1e6)", D, _add_row(D, {"x": 1e6, "y": 1e6}))]


def _release_sample(D, n, rng):
    out = np.full((n, 4), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, r in enumerate(_rngs(n, rng)):
            fit = dp.dp_lm("y ~ x", D, eps=RL_EPS, delta=RL_DELTA, method="adassp",
                           select=None, random_state=r)
            if fit.released:
                j = list(fit.params.index).index("x")
                out[i] = [fit.clip[0][j], fit.clip[1][j], *fit.params.to_numpy()]
    return out


def _exact_label_bound(resolve):
    def broken(plan, X, y, release):
        b = resolve(plan, X, y, release)
        top = float(np.max(np.abs(y)))
        return dataclasses.replace(b, y_lo=-top, y_hi=top)

    return broken


@pytest.mark.parametrize("variant", ["real", "label bound = exact max |y|"])
def test_dp_lm_release(variant, monkeypatch):
    if variant != "real":
        monkeypatch.setattr(bounded, "_resolve", _exact_label_bound(bounded._resolve))
    rep = audit(_release_sample, release_pairs(), eps=RL_EPS, delta=RL_DELTA, n=draws(400),
                seed=seed_for(f"e2e-release/{variant}"))
    record("e2e: dp_lm adassp, auto bounds", variant, RELATION, rep)
    assert rep.violated == (variant != "real"), str(rep)
