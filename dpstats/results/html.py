"""HTML pieces of the summary: tables and the scoped inline CSS."""

from __future__ import annotations

import html


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
.dpstats-summary .dpstats-badge { display: inline-block; font-size: .8em; font-weight: 600;
  padding: .15em .65em; margin-left: .4em; border-radius: 1em; color: #fff;
  vertical-align: middle; white-space: nowrap; }
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
.dpstats-summary .dpstats-facts th { font-weight: 600; white-space: nowrap; padding-right: .4em; }
.dpstats-summary .dpstats-facts td { padding-right: 1.6em; }
.dpstats-summary .dpstats-ledger td:last-child { min-width: 18em; max-width: 36em;
  white-space: normal; }
.dpstats-summary tbody tr, .dpstats-summary tbody tr:nth-child(odd),
.dpstats-summary tbody tr:hover { background: transparent; }
</style>""".replace("GREY", _GREY)
