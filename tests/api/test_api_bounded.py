"""dp_lm with the bounded estimators (AdaSSP, BAS): released box, clipped predictions, public
bounds carried through selection."""

import numpy as np
import pandas as pd
import pytest

import dpstats as dp


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    n = 40000
    df = pd.DataFrame(rng.uniform(-2, 2, (n, 6)), columns=[f"x{i}" for i in range(6)])
    df["y"] = 1.0 + 0.8 * df.x1 - 0.5 * df.x4 + 0.1 * rng.standard_normal(n)
    return df


@pytest.mark.parametrize("method", ["adassp", "bas"])
def test_bounded_methods_fit_and_clip_predictions(frame, method):
    fit = dp.dp_lm("y ~ .", frame, eps=50.0, method=method, select=None, random_state=0)
    assert fit.released and fit.ptr is None and fit.clip is not None
    assert fit.spent == pytest.approx((50.0, 1e-5))
    assert fit.score(frame.iloc[:5000]) > 0.95
    lo, hi = fit.clip
    far = frame.iloc[:3].copy()
    far[[f"x{i}" for i in range(6)]] = 1e6
    X = np.column_stack([np.ones(3), np.clip(far.iloc[:, :6].to_numpy(), lo[1:], hi[1:])])
    np.testing.assert_allclose(fit.predict(far).to_numpy(), X @ fit.params.to_numpy())
    assert "not used by this method" in str(fit.summary())


def test_public_array_bounds_follow_the_selected_columns(frame):
    arr = np.tile([-2.0, 2.0], (6, 1))
    fit = dp.dp_lm("y ~ .", frame, eps=50.0, method="adassp", select="kendall", k=2,
                   bounds={"x": arr, "y": (-4.0, 6.0)}, random_state=1)
    assert sorted(fit.selected) == ["x1", "x4"] and fit.released
    np.testing.assert_allclose(fit.params[["x1", "x4"]], [0.8, -0.5], atol=0.05)


def test_tukey_has_no_clip_box(frame):
    fit = dp.dp_lm("y ~ x1 + x4", frame, eps=5.0, random_state=0)
    assert fit.clip is None


@pytest.mark.parametrize("method", ["adassp", "bas", "fw"])
def test_unusable_label_bounds_withhold_the_fit(method):
    """Too few rows for the label's private histogram: nothing is released, and the summary
    says why (before this guard, the coefficients came back multiplied by ~2^64)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    df = pd.DataFrame({"x": x, "y": 1e5 * (3 + x + rng.normal(size=60))})
    fit = dp.dp_lm("y ~ x", df, eps=0.3, method=method, random_state=1)
    assert not fit.released
    assert fit.params.isna().all()
    assert "private bounds of the response" in fit.summary().as_text().replace("\n!! ", " ")
    # everything but the inference share (AdaSSP, BAS: 5%, released only with a fit) is spent
    unspent = 0.05 if method in ("adassp", "bas") else 0.0
    assert fit.spent[0] == pytest.approx(0.3 * (1 - unspent))
    # public label bounds make the same fit usable
    ok = dp.dp_lm("y ~ x", df, eps=0.3, method=method, random_state=1,
                  bounds={"x": (-4, 4), "y": (-5e5, 1e6)})
    assert ok.released and np.isfinite(ok.params).all()


def test_label_bound_unusable_rule():
    from dpstats.estimators.bounded import label_bound_unusable
    assert label_bound_unusable(-2.0 ** 64, 2.0 ** 64)
    assert label_bound_unusable(0.0, 2.0 ** 65)
    assert not label_bound_unusable(-1e6, 1e6)
    assert not label_bound_unusable(None, None)


@pytest.mark.parametrize("method", ["adassp", "fw"])
def test_octave_fallback_finds_bounds_for_moderate_n(method):
    """3000 standard-normal rows at eps=1: no quarter-octave cell clears the noise, but whole
    octaves (sums of released cells, post-processing) do; before the fallback every such fit
    was withheld (or, before the withholding guard, scaled by 2^64)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    df = pd.DataFrame(X, columns=list("abcdef"))
    df["y"] = X.sum(axis=1) + rng.normal(size=3000)
    fit = dp.dp_lm("y ~ .", df, eps=1.0, method=method, select=None, random_state=3)
    assert fit.released
    lo, hi = fit.clip
    assert np.all(hi[1:] <= 16) and np.all(lo[1:] >= -16)
    assert np.all(np.abs(fit.params.to_numpy()) < 50)
