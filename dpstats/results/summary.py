"""Printed and HTML summaries of a private fit.

A :class:`Summary` is built from a result object by :meth:`Summary.from_result`. It reads only
released values and public metadata (the result holds nothing else), turns them into *facts*
(an ordered list of ``(label, value)`` strings) and *tables* (pandas DataFrames), and renders
those as text (statsmodels :class:`~statsmodels.iolib.table.SimpleTable`) or as self-contained
HTML. Rendering never looks at the result again, so nothing reaches the output that is not in
``facts``, ``tables``, ``selected`` or ``notes``.
"""

from __future__ import annotations

import html
import math
import textwrap

import pandas as pd  # noqa: F401  (used by the doctest of Summary)
from statsmodels.iolib.table import SimpleTable

from .facts import _alert, _badges, _facts, _notes, _selection_label, _tables
from .format import _group_facts, format_number
from .html import _CSS, _html_table

__all__ = ["Summary", "format_number"]

#: Width of the text summary (statsmodels uses 78 too); wide tables may make it wider.
WIDTH = 78


def _cell(head: str, value) -> str:
    """One coefficient-table cell: statistics and p-values with 3 decimals (as statsmodels),
    other numbers with 4 significant digits, text as is."""
    if head in ("term", "selected"):
        return str(value)
    if head in ("z", "P>|z|"):
        v = float(value)
        return format_number(v) if not math.isfinite(v) else f"{v:.3f}"
    return format_number(value)


class Summary:
    """Facts and tables describing a private fit, renderable as text or HTML.

    Usually built with :meth:`from_result`. The parts are public so other code can reuse them.

    Parameters
    ----------
    title : str
        Title line.
    facts : list of (str, str)
        Header facts ``(label, value)``, in display order.
    tables : dict of str to pandas.DataFrame
        ``"coefficients"`` (term, estimate[, selected]) and ``"ledger"`` (stage, mechanism,
        eps, delta, detail; one row per charge, no total row).
    spent : (float, float)
        Total (eps, delta) of the ledger, printed as its total row.
    banner, alert : str, optional
        Loud warning above everything (non-private fits); block above the coefficients.
    selected : list of str
        Selected terms in selection order; ``selection_label`` describes the selector.
    notes : list of str
        Public notes, printed numbered at the bottom.
    badges : list of (str, str)
        HTML badges ``(kind, text)``, kind in pass, fail, none, notprivate, seeded.

    Examples
    --------
    >>> s = Summary("Demo", [("Method:", "tukey")],
    ...             {"coefficients": pd.DataFrame({"term": ["x"], "estimate": [1.5]}),
    ...              "ledger": pd.DataFrame(columns=["stage", "mechanism", "eps", "delta",
    ...                                              "detail"])}, spent=(0.0, 0.0))
    >>> "Method:" in s.as_text() and "dpstats-summary" in s.as_html()
    True
    """

    def __init__(self, title, facts, tables, *, spent, banner=None, alert=None, selected=(),
                 selection_label="", notes=(), badges=(), ordered=True):
        self.title, self.facts, self.tables = title, list(facts), dict(tables)
        self.ordered = bool(ordered)
        self.spent = (float(spent[0]), float(spent[1]))
        self.banner, self.alert, self.badges = banner, alert, list(badges)
        self.selected, self.selection_label = list(selected), selection_label
        self.notes = list(notes)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_result(cls, result) -> Summary:
        """Build the summary of a :class:`~dpstats.results.lm.DPLMResult` (or a look-alike).

        Only released values and public metadata are read; no R^2, residual statistics or
        true row count exist on a result, so none can appear.
        """
        title, banner, facts = _facts(result)
        rep = result.selection
        return cls(title, facts, _tables(result), spent=result.spent, banner=banner,
                   alert=_alert(result), selected=list(result.selected),
                   selection_label=_selection_label(result), notes=_notes(result),
                   badges=_badges(result), ordered=getattr(rep, "ordered", True))

    @property
    def _order_words(self) -> str:
        return "in selection order" if self.ordered else "a set, listed in column order"

    # -- text ------------------------------------------------------------------------------
    def _coef_rows(self) -> tuple[list[str], list[list[str]]]:
        df = self.tables["coefficients"]
        heads = list(df.columns)
        rows = [[_cell(h, v) for h, v in zip(heads, r, strict=True)]
                for r in df.itertuples(index=False)]
        return heads, rows

    def _ledger_rows(self) -> list[list[str]]:
        return [[str(r.stage), str(r.mechanism), format_number(r.eps),
                 format_number(r.delta, 3), str(r.detail)]
                for r in self.tables["ledger"].itertuples()]

    @staticmethod
    def _simple_table(rows, aligns, widths, title, rules=()) -> str:
        """Render ``rows`` (header row first) with SimpleTable; rules go below given rows."""
        fmt = {"data_aligns": aligns, "colwidths": widths, "colsep": "  ",
               "table_dec_above": "=", "table_dec_below": "-"}
        t = SimpleTable(rows, title=title, txt_fmt=fmt)
        for i in (0, *rules):
            t[i].add_format("txt", row_dec_below="-")
        return "\n".join(ln.rstrip() for ln in t.as_text().split("\n"))

    def _text_facts(self, width: int) -> list[str]:
        """Consecutive short facts in two columns (label left, value right); others alone."""
        half = (width - 2) // 2
        groups = _group_facts(self.facts, half)
        indent = max([len(g[0][0]) + 2 for g in groups if len(g) == 1], default=0)
        lines: list[str] = []
        for g in groups:
            if len(g) == 2:
                lines.append("  ".join(lab + val.rjust(half - len(lab)) for lab, val in g))
                continue
            label, value = g[0]
            body = textwrap.wrap(value, width - indent) or [""]
            lines.append(label.ljust(indent) + body[0])
            lines += [" " * indent + b for b in body[1:]]
        return [ln.rstrip() for ln in lines]

    def _total_row(self) -> list[str]:
        n = len(self.tables["ledger"])
        return ["total", "", format_number(self.spent[0]), format_number(self.spent[1], 3),
                f"{n} charge{'' if n == 1 else 's'}, basic composition"]

    def _text_coefs(self, width: int) -> str:
        heads, rows = self._coef_rows()
        if heads[-1] != "selected":     # a blank last column takes the slack, as "selected" does
            heads, rows = heads + [""], [r + [""] for r in rows]
        w = [max(len(c) for c in col) for col in zip(heads, *rows, strict=True)]
        w[0], w[1] = max(w[0], 16), max(w[1], 12)
        w[-1] = max(w[-1], width - sum(w[:-1]) - 2 * (len(w) - 1))
        aligns = "l" + "r" * (len(w) - 2) + "l"
        return self._simple_table([heads, *rows], aligns, w, "Coefficients")

    def _text_ledger(self, width: int) -> str:
        heads = ["stage", "mechanism", "eps", "delta", "detail"]
        lrows, total = self._ledger_rows(), self._total_row()
        w = [max(len(c) for c in col) for col in zip(heads, *lrows, total, strict=True)][:4]
        w[2:] = [max(w[2], 6), max(w[3], 6)]
        dw = max(width - sum(w) - 8, 24)
        rows = [heads]
        for r in lrows:
            parts = textwrap.wrap(r[4], dw) or [""]
            rows += [r[:4] + [parts[0]]] + [["", "", "", "", p] for p in parts[1:]]
        return self._simple_table(rows + [total], "llrrl", w + [dw],
                                  "Privacy ledger (add/remove one row)", rules=(len(rows) - 1,))

    def as_text(self) -> str:
        """The summary as plain text, 78 characters wide (wider only for very long names).

        Returns
        -------
        str
        """
        has_coefs = "coefficients" in self.tables
        coefs = self._text_coefs(WIDTH) if has_coefs else ""
        width = max(WIDTH, *(len(ln) for ln in coefs.split("\n")))
        ledger = self._text_ledger(width)
        if any(len(ln) > width for ln in ledger.split("\n")):
            width = max(len(ln) for ln in ledger.split("\n"))
            coefs = self._text_coefs(width) if has_coefs else ""
            ledger = self._text_ledger(width)
        out = []
        if self.banner:
            out += ["*" * width, "*" + self.banner.center(width - 2) + "*", "*" * width]
        out += ["=" * width, self.title.center(width).rstrip(), "=" * width]
        out += self._text_facts(width)
        if self.alert:
            out += [""] + ["!! " + s for s in textwrap.wrap(self.alert, width - 3)]
        if has_coefs:
            out += ["", coefs]
        if self.selected:
            out += ["", f"Selected terms ({self.selection_label}), {self._order_words}:"]
            items = ", ".join(f"{i}. {t}" for i, t in enumerate(self.selected, 1))
            out += textwrap.wrap(items, width, initial_indent="  ", subsequent_indent="  ",
                                 break_long_words=False, break_on_hyphens=False)
        out += ["", ledger]
        if self.notes:
            out += ["", "Notes:"]
            for i, note in enumerate(self.notes, 1):
                out += textwrap.wrap(f"[{i}] {note}", width, subsequent_indent="    ")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        # a bare ``fit.summary()`` at a console or a notebook's text view shows the table
        return self.as_text()

    # -- HTML ------------------------------------------------------------------------------
    def as_html(self) -> str:
        """The summary as a self-contained HTML fragment (inline CSS, no script).

        Every string is escaped with :func:`html.escape`.

        Returns
        -------
        str
        """
        e = html.escape
        parts = ['<div class="dpstats-summary">', _CSS]
        if self.banner:
            parts.append(f'<div class="dpstats-banner">{e(self.banner)}</div>')
        badges = "".join(f'<span class="dpstats-badge dpstats-badge-{e(k)}">{e(t)}</span>'
                         for k, t in self.badges)
        parts.append(f'<div class="dpstats-header"><div class="dpstats-title">{e(self.title)} '
                     f'{badges}</div>')
        parts.append('<table class="dpstats-facts"><tbody>')
        for g in _group_facts(self.facts, (WIDTH - 2) // 2):
            cells = "".join(f"<th>{e(lab)}</th><td>{e(val)}</td>" for lab, val in g)
            parts.append(f"<tr>{cells}</tr>" if len(g) == 2 else
                         f'<tr><th>{e(g[0][0])}</th><td colspan="3">{e(g[0][1])}</td></tr>')
        parts.append("</tbody></table></div>")
        if self.alert:
            parts.append(f'<div class="dpstats-alert">{e(self.alert)}</div>')
        if "coefficients" in self.tables:
            heads, crows = self._coef_rows()
            numeric = {i for i, h in enumerate(heads) if h not in ("term", "selected")}
            parts.append(_html_table("dpstats-coefs", "Coefficients", heads, crows, numeric))
        if self.selected:
            items = "".join(f"<li>{e(t)}</li>" for t in self.selected)
            parts.append(f'<div class="dpstats-selected"><b>Selected terms</b> '
                         f'({e(self.selection_label)}), {e(self._order_words)}:'
                         f'<ol>{items}</ol></div>')
        parts.append(_html_table("dpstats-ledger", "Privacy ledger (add/remove one row)",
                                 ["stage", "mechanism", "eps", "delta", "detail"],
                                 self._ledger_rows(), {2, 3}, self._total_row()))
        if self.notes:
            items = "".join(f"<li>{e(n)}</li>" for n in self.notes)
            parts.append(f'<div class="dpstats-notes"><b>Notes</b><ol>{items}</ol></div>')
        parts.append("</div>")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.as_html()
