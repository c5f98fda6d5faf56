"""benchmarks/float_summation.py: its adversarial table separates the loop from the
fixed-point sums, its split table tells float sums of parts from FixedSum parts, and its grid
error is the grid's size."""

from __future__ import annotations

from benchmark_script import load_benchmark

fs = load_benchmark("float_summation.py")


def test_adversarial_table_separates_the_loop():
    r = fs.adversarial(16)
    assert r["loop"] > 2.0 ** (32 - 53) * 0.5
    assert r["fixed"] <= r["bound_fixed"]
    assert abs(r["compensated"]) < r["loop"] / 100


def test_split_table_tells_float_parts_from_fixed_parts():
    r = fs.splits(20_000, 8)
    assert r["fixed_distinct"] == 1
    assert r["float_distinct"] > 1 and 0.0 < r["float_spread"] < 1e-12


def test_grid_error_is_the_grid():
    r = fs.grid_error(20_000, p=5)
    assert r["rel_err_unshrunk"] < r["rel_err"] < 1e-5
