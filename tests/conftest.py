"""Shared fixtures: small frames for the formula tests."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def num():
    """Numeric frame; the label is not the first column and one name has a space."""
    rng = np.random.default_rng(1)
    n = 50
    return pd.DataFrame({
        "a": rng.normal(size=n),
        "y": rng.normal(size=n),
        "BOROUGH_Staten Island": rng.integers(0, 2, size=n).astype(float),
        "b": rng.uniform(1, 2, size=n),
    })


@pytest.fixture
def mixed():
    rng = np.random.default_rng(2)
    n = 60
    return pd.DataFrame({
        "y": rng.normal(size=n),
        "x": rng.normal(size=n),
        "h": pd.Categorical(rng.choice(["u", "v"], size=n), categories=["u", "v", "w"]),
        "g": rng.choice(["a", "b", "c"], size=n),
    })


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
