"""``released_seed``: simulation seeds that are functions of released values only."""

import numpy as np

from dpstats.mechanisms.simulation import released_seed, simulation_noise


def test_same_released_values_give_the_same_seed():
    a = released_seed(np.array([1.0, -2.0]), 3.5, salt=4)
    assert a == released_seed(np.array([1.0, -2.0]), 3.5, salt=4)
    assert 0 <= a < 2**63


def test_any_change_of_a_released_value_or_the_salt_changes_the_seed():
    base = released_seed(np.array([1.0, -2.0]), 3.5, salt=4)
    assert base != released_seed(np.array([1.0, -2.0 + 1e-4]), 3.5, salt=4)
    assert base != released_seed(np.array([1.0, -2.0]), 3.5, salt=5)
    # the shape is part of the key: the same bytes in another shape are other values
    assert released_seed(np.zeros((2, 1))) != released_seed(np.zeros((1, 2)))


def test_fits_with_different_releases_get_independent_draws():
    """The reason for the helper: a fixed seed repeats one set of draws in every fit."""
    z = [simulation_noise({"z": (4000,)}, seed=released_seed(float(i)))["z"] for i in range(3)]
    assert abs(np.corrcoef(z[0], z[1])[0, 1]) < 0.1
    assert not np.array_equal(z[1], z[2])


def test_the_last_bits_of_a_sum_do_not_change_the_seed():
    """A dask fit's released values equal the in-memory fit's to ~1e-12: same draws by default
    (6 significant digits), other draws when hashing the exact bits."""
    a, b = np.array([1.0, -2.0]), np.array([1.0 + 1e-12, -2.0])
    assert released_seed(a, 3.5) == released_seed(b, 3.5)
    assert released_seed(a, 3.5, digits=None) != released_seed(b, 3.5, digits=None)
