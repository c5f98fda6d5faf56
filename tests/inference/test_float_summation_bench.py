"""benchmarks/float_summation.py: its exact sums are exact and the library's float sums stay
inside the worst-case bound it prints (a sum that dropped a block would not)."""

from __future__ import annotations

import numpy as np
from benchmark_script import load_benchmark

fs = load_benchmark("float_summation.py")


def test_exact_gram_is_the_integer_gram():
    Xi = np.arange(-12, 12, dtype=np.int64).reshape(8, 3) * (1 << 20)
    ex = fs.exact_gram(Xi, block=3)
    assert ex == [[int(v) for v in row] for row in (Xi.T @ Xi)]


def test_library_sums_are_within_the_bound():
    r = fs.measure(40_000, 4)
    assert 0.0 <= r["twice_err_rel"] <= r["bound"]
    assert fs.bound(10 ** 8) > fs.bound(10 ** 6) * 100     # grows faster than n
