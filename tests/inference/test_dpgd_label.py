"""The clips' bias of squared-loss DP-GD (dpstats.estimators.inference.dpgd_label, issue 16).

DP-GD fits the label clipped to its released range on the inputs clipped to the released
box; its intervals hold the clipped fit's expected shift from the model's. Checked: the
shift against exact least squares on a large normal design (label clip alone, and with the
box's cut); that a fit whose public label range clips 7% of labels covers the true slope with
the shift held and misses it without (the rule before); and that the logistic DP-GD's
intervals do not depend on the setting.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.estimators.inference import dpgd as inf_dpgd
from dpstats.estimators.inference.dpgd_label import label_clip_bias


def _unit_design(n: int, seed: int, box: float):
    """Normal inputs mapped to a unit box of half-width ``box`` sd (clipped), the label
    ``0.2 + 0.25 x0 - 0.2 x1 + N(0, 0.25^2)`` on the unit scale (about 2.7% of labels
    clipped); rows scaled by 1/sqrt(3), intercept last. Returns the rows, the clipped label,
    the model's coefficients."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)) / box
    y = 0.2 + x @ np.array([0.25, -0.2]) * box + 0.25 * rng.normal(size=n)
    s = np.sqrt(3.0)
    U = np.c_[np.clip(x, -1.0, 1.0), np.ones(n)] / s
    model = np.r_[np.array([0.25, -0.2]) * box, 0.2] * s
    return U, np.clip(y, -1.0, 1.0), model


@pytest.mark.parametrize("box", [8.0, 2.2])
def test_the_shift_matches_exact_least_squares(box):
    U, yc, model = _unit_design(400_000, 1, box)
    t_c = np.linalg.lstsq(U, yc, rcond=None)[0]
    C = U.T @ U
    s2 = float(np.sum((yc - U @ t_c) ** 2) / (U.shape[0] - 3))
    cut = (np.array([1e9, 1e9, np.nan]), np.ones(3)) if box < 8 else None   # counts: cut
    d = label_clip_bias(C[None], t_c, np.array([s2]), 2, cut)[0]
    shift = t_c - model
    assert np.abs(shift).max() > 0.004                       # the clips move the fit
    if box == 8.0:          # the box holds the inputs: the label clip alone
        assert d == pytest.approx(shift, abs=0.2 * np.abs(shift).max())
    else:                   # the box's cut and the label clip partly cancel
        d0 = label_clip_bias(C[None], t_c, np.array([s2]), 2)[0]
        assert np.abs(d - shift).max() < 0.15 * np.abs(d0 - shift).max()


def _clipped_fits(mode):
    out = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=20_000)
        df = pd.DataFrame({"x": x, "y": 1.0 + 2.0 * x + rng.normal(size=x.size)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = dp.dp_lm("y ~ x", df, eps=1.0, delta=1e-5, method="dpgd", select=None,
                         random_state=seed, bounds={"x": (-4, 4), "y": (-3, 5)})
        lo, hi = r.conf_int().to_numpy()[1]
        out.append(lo <= 2.0 <= hi)
    return out


def test_a_clipped_label_is_covered_with_the_shift_held(monkeypatch):
    # the label range [-3, 5] clips about 7% of labels: the slope is attenuated to ~1.86
    assert inf_dpgd.CLIP_BIAS                                # the shipped rule holds it
    assert all(_clipped_fits(inf_dpgd.CLIP_BIAS))
    monkeypatch.setattr(inf_dpgd, "CLIP_BIAS", None)         # the rule before
    assert not any(_clipped_fits(None))


def test_logistic_dpgd_intervals_do_not_depend_on_the_setting(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5_000, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = (rng.uniform(size=5_000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.3])))) * 1.0
    cis = []
    for mode in (None, "label", "box"):
        monkeypatch.setattr(inf_dpgd, "CLIP_BIAS", mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = dp.dp_glm("y ~ a + b + c", df, eps=1.0, delta=1e-5, method="dpgd",
                          select=None, random_state=3)
        cis.append(r.conf_int().to_numpy())
    assert np.isfinite(cis[0]).all()
    assert np.array_equal(cis[0], cis[1]) and np.array_equal(cis[0], cis[2])
