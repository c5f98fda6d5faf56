"""Behaviour snapshots: seeded releases of every method, selector, dp_glm, select and the CLI.

Each case in ``tests/snapshots/cases.py`` (the one place the cases are defined) runs a seeded
fit through the PUBLIC API only (``dp.dp_lm``, ``dp.dp_glm``, ``dp.select``, ``dp.Budget``,
``dp.datasets.load``, ``python -m dpstats ... --json``) and is compared with the record frozen
in ``tests/snapshots/behaviour.json``: coefficients, released flag, PTR report, withheld reason,
selected terms, private row count, number of models, spent budget, every column of every ledger
entry, predictions on a few rows, user-facing warnings, and the command line's JSON. They exist
so that a restructure of the package layout can be checked to release exactly what it released
before; they import no dpstats submodule by path and must pass unchanged after such a move.

Comparison
----------
By default every value must be equal and floats must agree to a relative 1e-10
(:data:`DEFAULT_RTOL`; they are stored as ``float.hex()``): any change of behaviour moves a
release by far more, while a different CPU or BLAS moves the last bits (seen: an AMD EPYC machine
differs from the Intel one the file was recorded on in the last bits of 13 of 37 cases).
A failure names the case and the field (e.g. ``lm-method-fw: params["median_income"]``) and
shows the expected and the actual value; floats are shown as hex and decimal with their relative
difference, so last-bit floating-point noise (relative difference ~1e-16) can be told apart from
a real change of behaviour.

Set ``DPSTATS_SNAPSHOT_RTOL`` to compare with another relative tolerance: ``0`` compares
floats bit for bit (use it on the machine that recorded the file, e.g. right after
regenerating), a larger value confirms that a difference is only rounding noise; never use it
to hide a change. NaN equals NaN, infinities must match; strings, booleans, integers and
structure are always compared exactly.

Regenerating
------------
``python tests/snapshots/regenerate_behaviour.py`` rewrites ``behaviour.json`` from the cases.
Run it ONLY when a change alters a release on purpose, and review the diff; never to make this
test pass after a refactor that should not change behaviour.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "snapshots"
SNAPSHOT = HERE / "behaviour.json"
RTOL_ENV = "DPSTATS_SNAPSHOT_RTOL"
MAX_REPORTED = 30  # mismatches listed per case
#: Relative tolerance for floats when ``DPSTATS_SNAPSHOT_RTOL`` is not set.
DEFAULT_RTOL = 1e-10


def _load_cases():
    """tests/snapshots/cases.py, loaded by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("dpstats_behaviour_cases", HERE / "cases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


cases = _load_cases()

_HEX = re.compile(r"^-?(0x[0-9a-f]+(\.[0-9a-f]*)?p[+-]?\d+|inf|nan)$")


def _is_float(value) -> bool:
    return isinstance(value, str) and bool(_HEX.match(value))


def _show_float(text: str) -> str:
    return f"{text} ({float.fromhex(text)!r})"


def _rel_diff(a: float, b: float) -> float:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale


def _floats_equal(old: str, new: str, rtol: float | None) -> bool:
    if old == new:
        return True
    if rtol is None:
        return False
    a, b = float.fromhex(old), float.fromhex(new)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:300] + "..."


def compare(old, new, path: str, rtol: float | None, out: list[str]) -> None:
    """Append one line per difference between the expected ``old`` and the actual ``new``."""
    if _is_float(old) and _is_float(new):
        if not _floats_equal(old, new, rtol):
            a, b = float.fromhex(old), float.fromhex(new)
            out.append(f"{path}: expected {_show_float(old)}, got {_show_float(new)}; "
                       f"relative difference {_rel_diff(a, b):.3g}")
        return
    if isinstance(old, dict) and isinstance(new, dict):
        if list(old) != list(new):
            gone = [k for k in old if k not in new]
            added = [k for k in new if k not in old]
            out.append(f"{path}: keys differ; missing {gone}, new {added}"
                       + ("" if gone or added else
                          f", order was {list(old)} and is now {list(new)}"))
        for key in old:
            if key in new:
                compare(old[key], new[key], f"{path}[{key!r}]" if path else key, rtol, out)
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            out.append(f"{path}: length {len(old)} expected, got {len(new)}: expected "
                       f"{_short(old)}, got {_short(new)}")
            return
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            compare(a, b, f"{path}[{i}]", rtol, out)
        return
    # everything else (str, bool, int, None, or a type change) compares exactly, type included
    if type(old) is not type(new) or old != new:
        what = [_show_float(v) if _is_float(v) else _short(v) for v in (old, new)]
        out.append(f"{path}: expected {what[0]}, got {what[1]}")


def _rtol() -> float | None:
    text = os.environ.get(RTOL_ENV, "").strip()
    if not text:
        return DEFAULT_RTOL
    try:
        rtol = float(text)
    except ValueError:
        raise pytest.UsageError(f"{RTOL_ENV}={text!r} is not a number (e.g. 1e-12)") from None
    if not (rtol >= 0 and math.isfinite(rtol)):
        raise pytest.UsageError(f"{RTOL_ENV} must be a finite number >= 0; got {text!r}")
    return None if rtol == 0 else rtol


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case_id", cases.CASE_IDS)
def test_behaviour_snapshot(case_id: str, snapshot: dict) -> None:
    if case_id not in snapshot:
        pytest.fail(f"{case_id}: no frozen record in {SNAPSHOT.name}; a new case needs "
                    "`python tests/snapshots/regenerate_behaviour.py` (review the diff)")
    rtol = _rtol()
    actual = json.loads(json.dumps(cases.run_case(case_id)))  # as it would be stored
    problems: list[str] = []
    compare(snapshot[case_id], actual, "", rtol, problems)
    if problems:
        mode = "exactly (bit for bit)" if rtol is None else f"with {RTOL_ENV}={rtol:g}"
        shown = problems[:MAX_REPORTED]
        more = len(problems) - len(shown)
        pytest.fail(
            f"behaviour snapshot {case_id!r} changed ({len(problems)} difference(s), floats "
            f"compared {mode}):\n  " + "\n  ".join(f"{case_id}: {p}" for p in shown)
            + (f"\n  ... and {more} more" if more else "")
            + f"\n(the case runs: {cases.describe(case_id)})"
            "\nIf this change of a release is intended, regenerate with "
            "`python tests/snapshots/regenerate_behaviour.py` and review the diff; if it is "
            f"only rounding, confirm with a larger {RTOL_ENV}.",
            pytrace=False)


def test_snapshot_file_matches_the_cases(snapshot: dict) -> None:
    """No frozen record is left over from a case that no longer exists."""
    stale = sorted(set(snapshot) - set(cases.CASE_IDS))
    assert not stale, (f"{SNAPSHOT.name} holds records of cases that are no longer defined: "
                       f"{stale}; regenerate it")
