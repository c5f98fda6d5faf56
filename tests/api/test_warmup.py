"""``python -m dpstats warmup``: its steps cover every method and selector, and it runs (the
run compiles every kernel into an empty cache, about 30 s: under ``DPSTATS_FULL=1``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpstats.api.warmup import STEPS
from dpstats.pipeline.request import GLM_METHODS

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("DPSTATS_FULL", "") not in ("", "0")


def test_steps_cover_every_method_and_selector():
    lm = {o.get("method") for _, kind, o in STEPS if kind == "lm"} - {None}
    glm = {o["method"] for _, kind, o in STEPS if kind == "glm"}
    selectors = {o.get("select") for _, kind, o in STEPS} - {None}
    assert lm == {"tukey", "adassp", "bas", "fw", "dpgd"}
    assert glm == set(GLM_METHODS)
    assert selectors == {"kendall", "sublasso", "sis", "auto"}


@pytest.mark.skipif(not FULL, reason="compiles every kernel, about 30 s (DPSTATS_FULL=1)")
def test_warmup_command_exits_0(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "dpstats", "warmup"], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert f"[{len(STEPS)}/{len(STEPS)}]" in out.stdout
    assert "warmup: every kernel compiled and cached in" in out.stdout
    assert "dpstats: compiling" not in out.stderr       # the steps are the progress
