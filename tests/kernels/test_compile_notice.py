"""The compile notice: decided by the request's public arguments and the cache state, before the
kernels run; said on stderr once per missing unit set, with progress; silent when the cache is
warm or ``DPSTATS_QUIET=1``; and the fit itself then compiles nothing.

Each case runs a subprocess with its own temporary ``NUMBA_CACHE_DIR``. The quick cases compile
only the small Fisher-Yates unit (about a second); whole fits with a cold cache (several
seconds of compiling each) run under ``DPSTATS_FULL=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpstats._kernels.prepare import COMPILING, UNITS, request_units
from dpstats.pipeline.request import GLM_METHODS
from dpstats.selection import SELECTORS

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("DPSTATS_FULL", "") not in ("", "0")
HEAD = COMPILING.split("(about")[0]

SMALL = """
from dpstats._kernels.prepare import prepare
prepare(["shuffle"])
prepare(["shuffle"])        # compiled now: nothing more to say
"""

# After the request's units are prepared, the fit compiles nothing (every kernel it calls was
# compiled by prepare on tiny inputs of the same argument types).
FIT = """
import json, sys
import numpy as np, pandas as pd, dpstats as dp
from dpstats._kernels.prepare import prepare, request_units
from dpstats._kernels.runtime import compile_stats
kind, method, select = sys.argv[1], sys.argv[2], sys.argv[3]
select = None if select == "none" else select
units = request_units("select" if kind == "select" else kind, method, select)
if select == "auto":
    units += request_units("select", None, "sublasso") + request_units("select", None, "kendall")
prepare(units)
before = compile_stats()[0]
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(3000, 7)), columns=list("abcdefg"))
df["y"] = df.a - df.b + rng.normal(size=3000)
df["z"] = (df.y > 0).astype(int)
if kind == "lm":
    dp.dp_lm("y ~ . - z", df, eps=2.0, method=method, select=select)
elif kind == "glm":
    dp.dp_glm("z ~ . - y", df, eps=2.0, method=method, select=select)
else:
    dp.select("y ~ . - z", df, eps=2.0, method=select, k=2)
print(json.dumps({"compiles_in_fit": compile_stats()[0] - before}))
"""


def _run(code: str, cache: Path, *args: str, quiet: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("DPSTATS_QUIET", None)
    if quiet:
        env["DPSTATS_QUIET"] = "1"
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    return out


def test_notice_with_progress_when_cold_and_nothing_when_warm(tmp_path):
    lines = [ln for ln in _run(SMALL, tmp_path).stderr.splitlines() if ln.startswith("dpstats:")]
    assert len(lines) == 3, lines
    assert lines[0].startswith(HEAD) and "(about 1 s)" in lines[0]
    assert lines[1].startswith(f"dpstats:   [1/1] {UNITS['shuffle'].label} ... ")
    assert lines[1].endswith(" s")
    assert lines[2].startswith("dpstats: done compiling in ")
    assert "dpstats:" not in _run(SMALL, tmp_path).stderr      # warm cache: silent


def test_quiet_silences_it(tmp_path):
    assert "dpstats:" not in _run(SMALL, tmp_path, quiet=True).stderr


def test_units_come_from_public_arguments_only():
    assert request_units("lm", "tukey", None) == ("tukey",)
    assert request_units("lm", "fw", "kendall") == ("fw", "kendall", "shuffle")
    assert request_units("glm", "tukey", "sublasso") == ("tukey_glm", "sublasso")
    assert request_units("lm", "bas", "sis") == ()
    # select="auto" is prepared when chosen from the released count (run_selection)
    assert request_units("lm", "adassp", "auto") == ()
    # a method this table does not know (e.g. one chosen automatically): every method's units
    assert set(request_units("lm", "some_future_method", None)) == {"tukey", "fw"}
    assert set(request_units("select", None, "unknown")) == {"kendall", "shuffle", "sublasso"}
    every = {u for m in ("tukey", "adassp", "bas", "fw", "dpgd", "ols")
             for u in request_units("lm", m, None)}
    every |= {u for m in GLM_METHODS for u in request_units("glm", m, None)}
    every |= {u for s in SELECTORS for u in request_units("select", None, s)}
    assert every == set(UNITS)                                  # every unit is reachable


def test_every_unit_names_numba_kernels_and_warms_them():
    """The table must follow the kernel modules (a renamed or removed kernel fails here; at run
    time it would only be skipped)."""
    import importlib

    from dpstats._kernels.prepare import _WARM
    assert set(_WARM) == set(UNITS)
    for unit in UNITS.values():
        module = importlib.import_module(f"dpstats._kernels.{unit.module}")
        for name in unit.kernels:
            assert hasattr(getattr(module, name, None), "signatures"), (unit.module, name)


def test_a_fit_announces_before_touching_the_data(tmp_path):
    """A request whose kernels are cold says so even when the data make the fit fail."""
    code = ("import pandas as pd, dpstats as dp\n"
            "df = pd.DataFrame({'y': [1.0, 2.0], 'a': [0.5, float('nan')]})\n"
            "try:\n    dp.select('y ~ a', df, eps=1.0, method='kendall', k=1)\n"
            "except Exception:\n    pass\n")
    err = _run(code, tmp_path).stderr
    assert err.count(HEAD) == 1 and UNITS["kendall"].label in err, err


CASES = ([("lm", m, "none") for m in ("tukey", "adassp", "bas", "fw", "dpgd")]
         + [("glm", m, "none") for m in GLM_METHODS]
         + [("select", "none", s) for s in SELECTORS]
         + [("lm", "bas", "auto")])


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="cold-cache fits compile for seconds each (DPSTATS_FULL=1)")
@pytest.mark.parametrize("kind, method, select", CASES)
def test_the_fit_compiles_nothing_after_prepare(tmp_path, kind, method, select):
    out = _run(FIT, tmp_path, kind, method, select, quiet=True)
    assert json.loads(out.stdout.strip().splitlines()[-1])["compiles_in_fit"] == 0
