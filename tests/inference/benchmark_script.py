"""Load a script of ``benchmarks/`` by path, for the tests of its pure functions (the
scripts are not a package, and each puts ``benchmarks/`` first on ``sys.path``: restored)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(filename: str):
    """The module ``benchmarks/<filename>``, loaded under a private name."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(
            "dpstats_" + filename.removesuffix(".py"), BENCHMARKS / filename)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = saved          # the script puts benchmarks/ first (see its guard)
    return mod
