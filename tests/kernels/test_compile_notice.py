"""The compile message: with an empty numba cache the first compile of a dpstats kernel says so
on stderr (once per process) and the fit says when it is done; a warm cache and
``DPSTATS_QUIET=1`` print nothing.

Each case runs a subprocess with its own temporary ``NUMBA_CACHE_DIR``. The quick cases compile
only the small Fisher-Yates kernel (about a second); a whole fit with a cold cache (15-25 s of
compiling) runs under ``DPSTATS_FULL=1``, as does ``python -m dpstats warmup``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpstats._kernels.runtime import COMPILING

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("DPSTATS_FULL", "") not in ("", "0")

SMALL = """
import numpy as np
from dpstats._kernels.runtime import compile_notice
from dpstats._kernels.shuffle import fisher_yates
with compile_notice():
    fisher_yates(np.zeros(3, dtype=np.int64))
    fisher_yates(np.zeros(4, dtype=np.int64))
with compile_notice():
    fisher_yates(np.zeros(3, dtype=np.int32))   # a second signature: no second message
"""

FIT = """
import numpy as np, pandas as pd, dpstats as dp
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(3000, 2)), columns=["a", "b"])
df["y"] = df.a + rng.normal(size=3000)
dp.dp_lm("y ~ a + b", df, eps=1.0, select=None, random_state=0)
"""


def _run(code: str, cache: Path, *args: str, quiet: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("DPSTATS_QUIET", None)
    if quiet:
        env["DPSTATS_QUIET"] = "1"
    cmd = [sys.executable, *args] if args else [sys.executable, "-c", code]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    return out


def _check_cold_then_warm(code: str, cache: Path) -> None:
    cold = _run(code, cache).stderr
    assert cold.count(COMPILING) == 1, cold
    assert cold.count("dpstats: done compiling in ") >= 1, cold
    warm = _run(code, cache).stderr
    assert "dpstats:" not in warm, warm


def test_message_once_with_a_cold_cache_and_none_when_warm(tmp_path):
    _check_cold_then_warm(SMALL, tmp_path)
    lines = _run(SMALL, tmp_path / "cold").stderr.splitlines()
    ours = [line for line in lines if line.startswith("dpstats:")]
    assert len(ours) == 3 and ours[0] == COMPILING, lines   # one message, a "done" per fit
    assert all(line.startswith("dpstats: done compiling in ") and "(1 kernel," in line
               for line in ours[1:]), lines


def test_quiet_silences_it(tmp_path):
    assert "dpstats:" not in _run(SMALL, tmp_path, quiet=True).stderr


@pytest.mark.skipif(not FULL, reason="a cold-cache fit compiles for 15-25 s (DPSTATS_FULL=1)")
def test_a_cold_fit_says_it_compiles(tmp_path):
    _check_cold_then_warm(FIT, tmp_path)
