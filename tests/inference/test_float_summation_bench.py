"""benchmarks/float_summation.py: its exact sums are exact, the library's float sums stay
inside the worst-case bound it prints, and its adversarial table shows the loop's excess
(which the blocked sums do not have)."""

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
    assert 0.0 <= r["moments"] <= r["bound_moments"]
    assert 0.0 <= r["tdot"] <= r["bound_tdot"]


def test_adversarial_table_separates_the_loop():
    r = fs.adversarial(16)
    assert r["loop"] > 2.0 ** (32 - 53) * 0.5
    assert abs(r["tdot"]) <= r["bound_tdot"] and abs(r["fw_kernel"]) <= r["bound_tdot"]
