"""``params_bias_corrected`` and the summary note for a coef outside its own bias-centred
interval (the ridge's bias can exceed 1.96 se at large n: design note 57)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import dpstats as dp


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(3)
    n = 20000
    df = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + df.a - 0.5 * df.b)))).astype(float)
    return dp.dp_glm("y ~ a + b", df, eps=1.0, delta=1e-5, random_state=4)


def _with_bias(fit, bias):
    inf = dataclasses.replace(fit.inference, bias=pd.Series(bias, index=fit.params.index))
    return dataclasses.replace(fit, inference=inf)


def test_centre_is_params_minus_bias(fit):
    assert fit.inference.reason is None
    shifted = _with_bias(fit, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(shifted.params_bias_corrected, fit.params)
    big = 10 * shifted.bse.to_numpy()
    moved = _with_bias(fit, big)
    np.testing.assert_allclose(moved.params_bias_corrected, fit.params - big)
    mid = moved.conf_int().mean(axis=1)
    np.testing.assert_allclose(mid, moved.params_bias_corrected)


def test_note_names_the_terms_outside_their_interval(fit):
    se = fit.bse.to_numpy()
    moved = _with_bias(fit, [0.0, 5 * se[1], 0.1 * se[2]])
    text = " ".join(str(moved.summary()).split())     # the notes wrap
    assert "1 term(s)" in text and "coef lies outside its own interval" in text
    assert f"a {moved.params_bias_corrected['a']:.4g}" in text
    inside = _with_bias(fit, [0.0, 0.1 * se[1], 0.1 * se[2]])
    assert "outside its own" not in str(inside.summary())


def test_no_note_without_a_bias_estimate(fit):
    plain = dataclasses.replace(fit, inference=dataclasses.replace(fit.inference, bias=None))
    assert "outside its own" not in str(plain.summary())
    np.testing.assert_allclose(plain.params_bias_corrected, plain.params)
