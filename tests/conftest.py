"""Shared fixtures (small frames for the formula tests) and the ``slow`` marker.

A test marked ``@pytest.mark.slow`` runs only with ``DPSTATS_FULL=1`` (long audits, full runs);
the default run skips it, and a fast variant of it runs instead.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

FULL = os.environ.get("DPSTATS_FULL", "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    """Skip the tests marked ``slow`` unless ``DPSTATS_FULL=1``."""
    if FULL:
        return
    skip = pytest.mark.skip(reason="slow: runs with DPSTATS_FULL=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


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
