"""A fit displayed in a real Jupyter kernel renders the HTML summary (and a plot).

Builds a small notebook with nbformat, executes it with nbclient in the ``python3`` kernel that
ipykernel provides (jupyter_client runs it with this interpreter), and reads the ``text/html``
outputs. Skipped when nbformat, nbclient or ipykernel are missing (they are test extras).
"""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import dpstats as dp  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: The kernel imports the same dpstats as this test process (installed or checked out).
PACKAGE_HOME = str(Path(dp.__file__).resolve().parents[1])
FORMULA = "median_house_value ~ ."
CELLS = [
    f"import sys\nsys.path.insert(0, {PACKAGE_HOME!r})\n"
    "import dpstats as dp\ndata = dp.datasets.load('california')",
    f"fit = dp.dp_lm({FORMULA!r}, data, eps=1.0, method='tukey', k=5, random_state=0)\nfit",
    f"bad = dp.dp_lm({FORMULA!r}, data.head(2000), eps=0.2, select=None, method='tukey',"
    " random_state=1)\n"
    "display(bad)",
    "%matplotlib inline\nax = fit.plot()",
    "import pathlib\nprint(pathlib.Path(dp.__file__).resolve().parent)",
]


class Cells(HTMLParser):
    """Text of every element with a class, and the rows of each table, keyed by class."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[set[str]] = []
        self.text: dict[str, list[str]] = {}
        self.rows: dict[str, list[list[str]]] = {}
        self.table: str | None = None

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append(classes)
        if tag == "table":
            self.table = next(iter(classes), None)
            self.rows.setdefault(self.table, [])
        elif tag == "tr" and self.table:
            self.rows[self.table].append([])
        elif tag in ("td", "th") and self.table and self.rows[self.table]:
            self.rows[self.table][-1].append("")

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()
        if tag == "table":
            self.table = None

    def handle_data(self, data):
        for classes in self.stack:
            for c in classes:
                self.text.setdefault(c, []).append(data)
        if self.table and self.rows[self.table] and self.rows[self.table][-1]:
            self.rows[self.table][-1][-1] += data


def parse(html: str) -> Cells:
    p = Cells()
    p.feed(html)
    p.rows = {k: [[c.strip() for c in row] for row in rows] for k, rows in p.rows.items()}
    return p


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return nb


def _html(cell) -> str:
    htmls = [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
    assert len(htmls) == 1, [o.get("output_type") for o in cell.outputs]
    return htmls[0]


def test_kernel_uses_this_checkout(executed):
    printed = executed.cells[4].outputs[0]["text"].strip()
    assert printed == str(Path(dp.__file__).resolve().parent)


def test_released_fit_renders_header_coefficients_ledger_and_badge(executed):
    html = _html(executed.cells[1])
    assert html == dp.dp_lm(FORMULA, dp.datasets.load("california"), eps=1.0, method="tukey",
                            k=5, random_state=0)._repr_html_()
    p = parse(html)
    header = " ".join(p.text["dpstats-header"])
    for fact in ("Formula:", FORMULA, "Method:", "tukey", "Selector:", "n (private lower bound):",
                 "Budget spent:", "eps=1, delta=1e-05", "PTR:", "passed"):
        assert fact in header, fact
    assert "".join(p.text["dpstats-badge-pass"]) == "\u2713 PTR passed"
    assert "dpstats-badge-fail" not in p.text
    coefs = p.rows["dpstats-coefs"]
    assert coefs[0] == ["term", "estimate", "std err", "z", "P>|z|", "[0.025", "0.975]",
                        "selected"]
    terms = {r[0]: r for r in coefs[1:]}
    assert set(terms) == {"Intercept", *[c for c in dp.datasets.load("california").columns
                                         if c != "median_house_value"]}
    assert terms["Intercept"][-1] == "always kept"
    assert all(r[2] == "NaN" for r in coefs[1:])     # Tukey: no standard errors (yet)
    picked = [r for r in coefs[1:] if r[-1].startswith("selected #")]
    assert len(picked) == 5 and all(float(r[1]) != 0 for r in picked)
    ledger = p.rows["dpstats-ledger"]
    assert ledger[0] == ["stage", "mechanism", "eps", "delta", "detail"]
    stages = [r[0] for r in ledger[1:-1]]
    assert {"private n", "selection", "regression"} <= set(stages)
    assert ledger[-1][0] == "total" and float(ledger[-1][2]) == pytest.approx(1.0)


def test_failed_ptr_renders_red_badge_and_no_numbers(executed):
    p = parse(_html(executed.cells[2]))
    assert "".join(p.text["dpstats-badge-fail"]) == "\u2717 PTR failed \u2014 nothing released"
    assert "dpstats-badge-pass" not in p.text
    assert "PTR failed" in " ".join(p.text["dpstats-alert"])
    assert all(r[1] == "NaN" for r in p.rows["dpstats-coefs"][1:])
    assert p.rows["dpstats-ledger"][-1][0] == "total"


def test_fit_plot_displays_a_png(executed):
    pngs = [o["data"]["image/png"] for o in executed.cells[3].outputs
            if "image/png" in o.get("data", {})]
    assert len(pngs) == 1
    assert base64.b64decode(pngs[0])[:8] == b"\x89PNG\r\n\x1a\n"
