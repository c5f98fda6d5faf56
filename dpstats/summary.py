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

import pandas as pd
from statsmodels.iolib.table import SimpleTable

__all__ = ["Summary", "format_number"]

#: Width of the text summary (statsmodels uses 78 too); wide tables may make it wider.
WIDTH = 78

PTR_HINT = ("Coefficients are not released; the budget is still spent. Try: more rows, fewer "
            "features (select=..., smaller k), or a larger eps.")
SEEDED = "seeded (random_state given) — reproducible, NOT fit for release"


def format_number(x, digits: int = 4) -> str:
    """Format a number with ``digits`` significant digits (``%g``), robust to extremes.

    NaN prints as ``NaN``, infinities as ``inf``/``-inf``, and ``-0.0`` as ``0``.

    Examples
    --------
    >>> [format_number(v) for v in (1e300, -0.0, 0.000123456, float("-inf"))]
    ['1e+300', '0', '0.0001235', '-inf']
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "" if x is None else str(x)
    if math.isnan(v):
        return "NaN"
    return "0" if v == 0 else f"{v:.{digits}g}"     # %g already prints inf and -inf


def _fmt_n(n) -> str:
    if n is None:
        return "not released"
    return f"{round(float(n)):,}" if math.isfinite(float(n)) else format_number(n)


def _eps_delta(eps, delta) -> str:
    return f"eps={format_number(eps)}, delta={format_number(delta, 3)}"


def _ptr_text(ptr) -> str:
    d, t = format_number(ptr.noisy_distance), format_number(ptr.threshold)
    if ptr.passed:
        return f"passed: noisy distance {d} >= threshold {t}, lemma {ptr.lemma}"
    return f"FAILED: noisy distance {d} < threshold {t}, lemma {ptr.lemma}"


def _marker(name: str, rank: dict[str, int], intercept: bool) -> str:
    if intercept and name == "Intercept":
        return "always kept"
    r = rank.get(name, rank.get(name.split("[", 1)[0]))
    return f"selected #{r}" if r is not None else "not selected"


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
                 selection_label="", notes=(), badges=()):
        self.title, self.facts, self.tables = title, list(facts), dict(tables)
        self.spent = (float(spent[0]), float(spent[1]))
        self.banner, self.alert, self.badges = banner, alert, list(badges)
        self.selected, self.selection_label = list(selected), selection_label
        self.notes = list(notes)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_result(cls, result) -> Summary:
        """Build the summary of a :class:`~dpstats.results.DPLMResult` (or a look-alike).

        Only released values and public metadata are read; no R^2, residual statistics or
        true row count exist on a result, so none can appear.
        """
        title, banner, facts = _facts(result)
        return cls(title, facts, _tables(result), spent=result.spent, banner=banner,
                   alert=_alert(result), selected=list(result.selected),
                   selection_label=_selection_label(result), notes=_notes(result),
                   badges=_badges(result))

    # -- text ------------------------------------------------------------------------------
    def _coef_rows(self) -> tuple[list[str], list[list[str]]]:
        df = self.tables["coefficients"]
        rows = [[str(r.term), format_number(r.estimate)]
                + ([str(r.selected)] if "selected" in df else []) for r in df.itertuples()]
        return list(df.columns), rows

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
        if len(heads) == 2:     # a blank last column takes the slack, as "selected" does
            heads, rows = heads + [""], [r + [""] for r in rows]
        w = [max(len(c) for c in col) for col in zip(heads, *rows, strict=True)]
        w = [max(w[0], 16), max(w[1], 12), w[2]]
        w[2] = max(w[2], width - w[0] - w[1] - 4)
        return self._simple_table([heads, *rows], "lrl", w, "Coefficients")

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
        coefs = self._text_coefs(WIDTH)
        width = max(WIDTH, *(len(ln) for ln in coefs.split("\n")))
        ledger = self._text_ledger(width)
        if any(len(ln) > width for ln in ledger.split("\n")):
            width = max(len(ln) for ln in ledger.split("\n"))
            coefs, ledger = self._text_coefs(width), self._text_ledger(width)
        out = []
        if self.banner:
            out += ["*" * width, "*" + self.banner.center(width - 2) + "*", "*" * width]
        out += ["=" * width, self.title.center(width).rstrip(), "=" * width]
        out += self._text_facts(width)
        if self.alert:
            out += [""] + ["!! " + s for s in textwrap.wrap(self.alert, width - 3)]
        out += ["", coefs]
        if self.selected:
            out += ["", f"Selected terms ({self.selection_label}), in selection order:"]
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
        heads, crows = self._coef_rows()
        parts.append(_html_table("dpstats-coefs", "Coefficients", heads, crows, {1}))
        if self.selected:
            items = "".join(f"<li>{e(t)}</li>" for t in self.selected)
            parts.append(f'<div class="dpstats-selected"><b>Selected terms</b> '
                         f'({e(self.selection_label)}), in selection order:<ol>{items}</ol></div>')
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


def _facts(result) -> tuple[str, str | None, list[tuple[str, str]]]:
    """Title, banner (None when private) and the ordered header facts of a result."""
    spec, ptr = result.spec, result.ptr
    family = getattr(result, "family", None)
    kind = f"GLM (family={family})" if family else "linear regression"
    banner = None
    if result.private:
        title = f"Differentially private {kind}"
        guarantee = "(eps, delta)-DP, add/remove one row: " + _eps_delta(result.eps, result.delta)
    else:
        title = f"Non-private {kind} (baseline)"
        name = "OLS" if result.method == "ols" else str(result.method).upper()
        banner = f"NOT PRIVATE — non-private {name} baseline (method='{result.method}')"
        guarantee = "NONE — not differentially private"
    facts = [("Formula:", spec.formula)]
    if spec.expanded and spec.expanded != spec.formula:
        facts.append(("Expanded formula:", spec.expanded))
    sel = (f"{result.selector} (k={result.k})" if result.selector and result.k is not None
           else (result.selector or "none"))
    facts += [("Response:", spec.label), ("Method:", result.method), ("Selector:", sel),
              ("n (private estimate):", _fmt_n(result.n_noisy))]
    if result.m is not None:
        facts.append(("m (models):", str(result.m)))
    if result.depth is not None:
        of = f" of {result.max_depth}" if result.max_depth is not None else ""
        facts.append(("Tukey depth:", f"{result.depth}{of}"))
    facts += [("Budget spent:", _eps_delta(*result.spent)),
              ("Randomness:", SEEDED if result.seeded else "OS entropy"),
              ("Privacy guarantee:", guarantee),
              ("PTR:", _ptr_text(ptr) if ptr is not None else "not used by this method")]
    return title, banner, [(str(lab), str(val)) for lab, val in facts]


def _badges(result) -> list[tuple[str, str]]:
    badges = [("notprivate", "NOT PRIVATE")] if not result.private else []
    if result.ptr is None:
        badges.append(("none", "no PTR"))
    else:
        badges.append(("pass", "PTR passed") if result.ptr.passed else ("fail", "PTR failed"))
    return badges + ([("seeded", "seeded")] if result.seeded else [])


def _alert(result) -> str | None:
    """The block explaining why coefficients were not released (None when they were)."""
    ptr = result.ptr
    if result.released:
        return None
    if ptr is not None and not ptr.passed:
        return (f"PTR failed: noisy distance {format_number(ptr.noisy_distance)} < threshold "
                f"{format_number(ptr.threshold)} (lemma {ptr.lemma}). " + PTR_HINT)
    return ("Coefficients are not released (see Notes); the budget is still spent. "
            "Try: more rows, fewer features, or a larger eps.")


def _tables(result) -> dict[str, pd.DataFrame]:
    """Coefficient table (NaN estimates unless released) and the ledger (one row per charge)."""
    rank = {name: i + 1 for i, name in enumerate(result.selected)}
    nan = float("nan")
    coef = pd.DataFrame({"term": [str(t) for t in result.params.index],
                         "estimate": [float(v) if result.released else nan
                                      for v in result.params.to_numpy()]})
    if result.selected or result.selection is not None:
        coef["selected"] = [_marker(t, rank, result.spec.has_intercept) for t in coef["term"]]
    cols = ["stage", "mechanism", "eps", "delta", "detail"]
    ledger = pd.DataFrame([{"stage": str(c.stage), "mechanism": str(c.mechanism),
                            "eps": float(c.eps), "delta": float(c.delta),
                            "detail": str(c.detail)} for c in result.charges], columns=cols)
    return {"coefficients": coef, "ledger": ledger}


def _selection_label(result) -> str:
    rep = result.selection
    if rep is None:
        return str(result.selector or "selector")
    return f"{rep.method}, k={rep.k}, eps={format_number(rep.eps)}"


def _notes(result) -> list[str]:
    notes = [str(n) for n in result.notes]
    if result.spec.levels_from_data:
        notes.append("Category levels of " + ", ".join(result.spec.levels_from_data)
                     + " were read from the data (not private); declare them with "
                     "pd.Categorical or C(x, levels=...).")
    if not result.private:
        notes.append("This fit is NOT differentially private: it is a baseline for "
                     "comparison and must not be released.")
    return notes


def _group_facts(facts, half: int) -> list[list[tuple[str, str]]]:
    """Pair consecutive facts that fit in half a line; a longer fact gets a line to itself."""
    groups: list[list[tuple[str, str]]] = []
    prev_short = False
    for label, value in facts:
        short = len(label) + len(value) + 1 <= half
        if short and prev_short and len(groups[-1]) == 1:
            groups[-1].append((label, value))
        else:
            groups.append([(label, value)])
        prev_short = short
    return groups


def _html_table(cls, caption, headers, rows, numeric, total=None) -> str:
    e = html.escape

    def row(cells, tag="td"):
        return "<tr>" + "".join(
            f'<{tag} class="{"dpstats-num" if i in numeric else "dpstats-txt"}">{e(c)}</{tag}>'
            for i, c in enumerate(cells)) + "</tr>"

    out = [f'<table class="{cls}"><caption>{e(caption)}</caption>',
           "<thead>" + row(headers, "th") + "</thead>", "<tbody>"]
    out += [row(r) for r in rows]
    out.append("</tbody>")
    if total is not None:
        out.append("<tfoot>" + row(total) + "</tfoot>")
    out.append("</table>")
    return "\n".join(out)


# Readable on light and dark notebook themes: text inherits the theme colour, rules are
# translucent grey, and coloured blocks carry their own background. Every rule is scoped.
_GREY = "rgba(128, 128, 128, .7)"
_CSS = """<style>
.dpstats-summary { font-family: var(--jp-content-font-family, inherit); color: inherit;
  max-width: 60em; line-height: 1.4; }
.dpstats-summary .dpstats-title { font-size: 1.15em; font-weight: 600; margin: .3em 0 .4em; }
.dpstats-summary .dpstats-banner { background: #cf222e; color: #fff; font-weight: 700;
  padding: .5em .8em; margin-bottom: .5em; border-radius: 4px; }
.dpstats-summary .dpstats-badge { display: inline-block; font-size: .75em; font-weight: 600;
  padding: .1em .55em; margin-left: .4em; border-radius: 1em; color: #fff; }
.dpstats-summary .dpstats-badge-pass { background: #1a7f37; }
.dpstats-summary .dpstats-badge-none { background: #6e7781; }
.dpstats-summary .dpstats-badge-fail, .dpstats-summary .dpstats-badge-notprivate {
  background: #cf222e; }
.dpstats-summary .dpstats-badge-seeded { background: #d4a72c; color: #1f2328; }
.dpstats-summary .dpstats-alert { border-left: 4px solid #cf222e; padding: .4em .8em;
  margin: .6em 0; background: rgba(207, 34, 46, .12); }
.dpstats-summary table { border-collapse: collapse; margin: .6em 0; color: inherit;
  border-top: 2px solid GREY; border-bottom: 2px solid GREY; }
.dpstats-summary caption { text-align: left; font-weight: 600; padding: .2em 0; }
.dpstats-summary th, .dpstats-summary td { padding: .15em .7em; vertical-align: top;
  border: none; color: inherit; text-align: left; }
.dpstats-summary thead th { border-bottom: 1px solid GREY; }
.dpstats-summary tfoot td { border-top: 1px solid GREY; font-weight: 600; }
.dpstats-summary .dpstats-num { text-align: right; font-variant-numeric: tabular-nums;
  white-space: nowrap; }
.dpstats-summary ol { margin: .2em 0 .4em 1.5em; padding: 0; }
.dpstats-summary .dpstats-notes { font-size: .9em; }
</style>""".replace("GREY", _GREY)
