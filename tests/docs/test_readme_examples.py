"""The README is executed: its ```python blocks run in order, in one namespace.

So the examples cannot drift from the code. A block that genuinely must not run is marked by
an HTML comment ``<!-- no-run -->`` on the line right before its opening fence (none is
today); a marked block is still compiled, so it stays valid Python. Output is captured; the
blocks run with the OS generator as a user's would, so the test checks that they run, not what
they print (except the Budget example, whose refusal is deterministic).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(?P<mark><!-- no-run -->\n)?```python\n(?P<code>.*?)^```\s*$",
                   re.MULTILINE | re.DOTALL)


def readme_blocks() -> list[tuple[str, bool]]:
    """``(code, runs)`` for every ```python block of README.md, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m["code"], m["mark"] is None) for m in FENCE.finditer(text)]


def test_the_readme_has_python_examples():
    blocks = readme_blocks()
    assert len(blocks) >= 2
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("```python") == len(blocks)   # the pattern finds every python fence
    assert all(runs for _, runs in blocks)          # no block is marked no-run today


def test_readme_python_blocks_run_in_order():
    namespace: dict = {"__name__": "__readme__"}
    out = io.StringIO()
    for i, (code, runs) in enumerate(readme_blocks()):
        compiled = compile(code, f"README.md python block {i + 1}", "exec")
        if not runs:
            continue
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compiled, namespace)  # noqa: S102  (the README is ours)
    printed = out.getvalue()
    assert "Differentially private linear regression" in printed      # the summary
    assert "eps ran out" in printed and "delta ran out" in printed    # the Budget refusal
    assert max(namespace["b"].remaining) < 1e-9                       # both fits paid
