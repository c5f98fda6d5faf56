"""The design moments' block kernel (``_kernels/moments.py``) gives the numpy reference's sums
to the bit (issue 16 speed: the release of :func:`design_moments` is unchanged), and the
comparison is sharp enough to catch a variant that differs in the last bits."""

import numpy as np
import pytest

from dpstats._kernels.moments import clip_block
from dpstats.mechanisms import design_moments as dm


def _designs():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((5000, 6))
    X[:, 0] = 1.0
    X[::7, 2] *= 40.0                         # clipped on both sides
    X[::5, 3] = 0.0                           # ties at the centre
    yield X, np.arange(1, 6), 64              # several blocks and a short last one
    yield X, np.array([4, 1, 2]), 1 << 15     # columns out of order, one block
    Z = rng.lognormal(size=(3001, 3))
    yield Z, np.arange(3), 1000
    yield X[:0], np.arange(1, 6), 64          # no rows
    yield X, np.array([2]), 100               # one column: a buffer numba sees as C-ordered


@pytest.mark.parametrize("case", range(5))
def test_kernel_sums_equal_numpy_to_the_bit(case):
    X, cols, chunk = list(_designs())[case]
    centre = np.linspace(-0.3, 0.4, cols.size)
    scale = np.linspace(0.5, 2.0, cols.size)
    a = dm.clipped_sums(X, centre, scale, 3.0, chunk=chunk, cols=cols)
    b = dm.clipped_sums(X, centre, scale, 3.0, chunk=chunk, cols=cols, kernel=True)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


def test_kernel_sums_equal_numpy_on_threads(monkeypatch):
    """From THREADED_ROWS rows the blocks run on two threads, each with its own buffer."""
    monkeypatch.setattr(dm, "THREADED_ROWS", 1000)
    X = np.random.default_rng(2).standard_normal((20_000, 5))
    c, s = np.zeros(4), np.full(4, 0.7)
    a = dm.clipped_sums(X, c, s, 3.0, chunk=512, cols=np.arange(1, 5))
    b = dm.clipped_sums(X, c, s, 3.0, chunk=512, cols=np.arange(1, 5), kernel=True)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


def test_design_moments_release_the_same_with_the_kernel():
    X = np.random.default_rng(3).standard_normal((4000, 4))
    args = (X, np.zeros(3), np.ones(3), 1.0)
    a = dm.design_moments(*args, np.random.default_rng(5), cols=[1, 2, 3])
    b = dm.design_moments(*args, np.random.default_rng(5), cols=[1, 2, 3], kernel=True)
    assert all(u.tobytes() == v.tobytes() for u, v in zip(a, b, strict=True))


def test_block_is_fortran_ordered_and_clipped():
    X = np.array([[1.0, 9.0, -9.0], [1.0, 0.5, 0.25]])
    out = np.empty((4, 2), order="F")
    U = clip_block(X, 0, 2, np.array([1, 2], dtype=np.intp), np.zeros(2), np.ones(2), 2.0, out)
    assert U.tolist() == [[2.0, -2.0], [0.5, 0.25]] and U.base is out


def test_a_different_block_is_caught():
    """The sums are exact on a grid (dpstats._kernels.row_sums), so the comparison that
    matters is of the blocks themselves: the kernel's block equals numpy's ``(X - c) * (1/s)``
    to the bit, and a variant dividing by ``s`` instead differs in the last bits."""
    X = np.random.default_rng(4).standard_normal((1 << 12, 4)) * 1e3
    c, s = np.linspace(-0.3, 0.4, 4), np.linspace(0.3, 2.7, 4)
    out = np.empty((X.shape[0], 4), order="F")
    U = clip_block(X, 0, X.shape[0], np.arange(4, dtype=np.intp), c, 1.0 / s, 1e9, out)
    ref = np.clip((X - c) * (1.0 / s), -1e9, 1e9)
    other = np.clip((X - c) / s, -1e9, 1e9)
    assert np.ascontiguousarray(U).tobytes() == ref.tobytes()
    assert other.tobytes() != ref.tobytes() and np.allclose(other, ref)
