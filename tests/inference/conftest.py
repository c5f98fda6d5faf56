"""Shared stand-ins for the inference tests: a DP-GD plan whose releases ignore the data and a
minimal design, for calling ``dpgd_inference`` directly."""

from __future__ import annotations

import numpy as np
import pytest


class BlindPlan:
    """A stand-in for DP-GD's charged plan whose releases ignore the data (as the taint
    test's stubs): a fixed curvature and residual sum of squares."""

    def __init__(self, C, rss=40.0):
        self.C, self.rss = C, rss

    def release(self, part, value, sensitivity, symmetric=False):
        return np.array(self.C) if part == "curvature" else float(self.rss)

    def sigma(self, part, sensitivity):
        return 1.0


def blind_design(q: int):
    """A design with ``q`` kept columns, no intercept column, centre 0 and ``y_half`` 2."""
    class D:
        kept = tuple(range(q))
        mid = np.zeros(q)
        dropped = ()
        intercept_col = None
        y_half = 2.0
    return D()


@pytest.fixture
def blind():
    """``(BlindPlan, blind_design)``."""
    return BlindPlan, blind_design
