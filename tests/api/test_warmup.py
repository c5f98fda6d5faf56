"""``python -m dpstats warmup``: its steps are every kernel unit, and it runs (compiling every
unit into an empty cache takes about 20-30 s: under ``DPSTATS_FULL=1``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpstats._kernels.prepare import UNITS
from dpstats.api.warmup import STEPS

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("DPSTATS_FULL", "") not in ("", "0")


def test_steps_are_every_unit():
    assert set(STEPS) == set(UNITS)


def test_warm_cache_is_a_no_op(tmp_path):
    """With every unit cached, warmup compiles nothing and says so."""
    code = ("import dpstats.api.warmup as w\n"
            "w.missing_units = lambda names: ()\n"       # every unit cached
            "w.warmup()\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert "warmup: already cached: " in out.stdout and "compiling" not in out.stdout
    assert "warmup: every kernel compiled and cached" in out.stdout
    assert "dpstats:" not in out.stderr


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="compiles every kernel, about 30 s (DPSTATS_FULL=1)")
def test_warmup_command_compiles_every_unit(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "dpstats", "warmup"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert f"[{len(STEPS)}/{len(STEPS)}]" in out.stdout
    assert "warmup: every kernel compiled and cached" in out.stdout
    assert "dpstats:" not in out.stderr                    # the steps are the progress
    check = ("from dpstats._kernels.prepare import missing_units, UNITS\n"
             "assert missing_units(UNITS) == (), missing_units(UNITS)\n")
    again = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stderr
