"""Every vignette in vignettes/ executes in a real Jupyter kernel (fast mode).

Fast mode (the default) runs few trials on small grids; ``DPSTATS_VIGNETTES=full`` runs the
full analyses (use ``python vignettes/build.py`` for that, which also saves the figures).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
VIGNETTES = sorted((ROOT / "vignettes").glob("*.md"))


def execute(path: Path, mode: str = "fast", timeout: int = 600):
    """Execute the vignette at ``path`` in a fresh kernel; return the executed notebook.

    The kernel runs in the vignette's folder and imports dpstats from this checkout (its root
    is put first on PYTHONPATH), not from wherever the package happens to be installed.
    """
    nb = jupytext.read(path)
    env_cell = jupytext.reads(
        f"import os\nos.environ['DPSTATS_VIGNETTES'] = {mode!r}\n", fmt="py:percent").cells[0]
    nb.cells.insert(0, env_cell)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    path_var = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    client.execute(env={**os.environ, "PYTHONPATH": path_var})
    return nb


def test_vignettes_exist():
    names = {p.stem for p in VIGNETTES}
    assert "getting_started" in names


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs_fast(path):
    nb = execute(path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    # every vignette shows something: at least one code cell has output
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_no_stored_outputs():
    """Vignettes are MyST markdown: no outputs are stored in git."""
    for path in VIGNETTES:
        assert '"outputs"' not in path.read_text()
        assert os.path.getsize(path) < 60_000
