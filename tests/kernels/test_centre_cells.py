"""The one-pass centre-cell kernel returns exactly ``centre_cells`` (issue 15 speed), and the
private centre releases the same values whichever way the cells were counted."""

import numpy as np
import pytest

from dpstats._kernels.centre_cells import cell_count_buffer, column_cells
from dpstats.estimators.tukey.centre import kernel_cells, private_centre
from dpstats.mechanisms.centre import CELL_KEYS, centre_cells

EDGE = np.array([0.0, -0.0, 1.0, -1.0, 2.0**-64, -2.0**-64, 2.0**-65, -1e-300, 5e-324, -5e-324,
                 2.0**64, -2.0**64, np.nextafter(2.0**64, 0), 1e300, -1e300, 1.0 + 1 / 1024,
                 np.nextafter(1.0 + 1 / 1024, 2), np.nextafter(1.0, 0), -np.nextafter(1.0, 0),
                 np.nextafter(2.0**-64, 0), np.nextafter(2.0**-64, 1)])


def _columns():
    rng = np.random.default_rng(3)
    yield EDGE
    yield rng.normal(size=2000)
    yield rng.normal(-120.0, 2.0, 3000)
    yield rng.integers(-3, 4, 999).astype(float)
    yield np.ldexp(rng.random(3000) * 2 - 1, rng.integers(-80, 80, 3000))
    yield np.zeros(0)


@pytest.mark.parametrize("case", range(6))
def test_kernel_cells_equal_centre_cells_contiguous_and_strided(case):
    v = list(_columns())[case]
    M = np.column_stack([v * 3.0, v])                 # column 1: a strided view
    buf = cell_count_buffer(CELL_KEYS[3])
    for col in (v, M[:, 1], M[:, 0]):
        want = centre_cells(col)
        got = column_cells(col, buf, CELL_KEYS)
        assert got[0].tobytes() == want[0].tobytes()
        assert got[1].dtype == want[1].dtype and got[1].tolist() == want[1].tolist()
        assert not buf.any()                           # left zeroed for the next column


def test_kernel_cells_of_every_column_and_a_wrong_key_is_caught():
    X = np.column_stack([np.ones(500), np.random.default_rng(4).normal(5.0, 2.0, (500, 3))])
    got = kernel_cells(X, [1, 2, 3])
    for j in (1, 2, 3):
        want = centre_cells(X[:, j])
        assert got[j][0].tobytes() == want[0].tobytes() and got[j][1].tolist() == want[1].tolist()
    broken = (CELL_KEYS[0], CELL_KEYS[1], CELL_KEYS[2] - 1, CELL_KEYS[3] * 2)   # finer cells
    bad = column_cells(X[:, 1], cell_count_buffer(broken[3]), broken)
    want = centre_cells(X[:, 1])
    assert bad[0].size != want[0].size or bad[0].tobytes() != want[0].tobytes()


def test_private_centre_same_release_with_the_kernel():
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(3000), rng.normal(-120.0, 2.0, 3000),
                         rng.integers(0, 2, 3000), rng.lognormal(size=3000)])
    for seed in range(5):
        a = private_centre(X, 0, 0.5, np.random.default_rng(seed))
        b = private_centre(X, 0, 0.5, np.random.default_rng(seed), kernel=True)
        assert a.tobytes() == b.tobytes()
