"""The coefficient plot of a private fit (matplotlib, imported on first use).

Only released quantities are ever drawn: a fit's released coefficients and which terms were
selected. Nothing here reads the training data, the Tukey depth regions or the subset models,
which are not private.

matplotlib is an optional dependency: ``pip install dpstats[plot]``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from ..formula.numeric import INTERCEPT

__all__ = ["coef_plot", "pyplot", "BASELINE_COLOUR", "FAIL_COLOUR", "PRIVATE_COLOUR"]

PRIVATE_COLOUR = "#1f6feb"
SELECTED_COLOUR = "#1f6feb"
BASELINE_COLOUR = "#6e7781"
FAIL_COLOUR = "#cf222e"


def pyplot():
    """matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("dpstats plots need matplotlib: pip install dpstats[plot] "
                          "(or pip install matplotlib)") from err
    return plt


# -------------------------------------------------------------------------------------
def _status(fit) -> str:
    if not fit.private:
        return "NOT PRIVATE (non-private baseline)"
    if fit.ptr is not None:
        return "PTR passed" if fit.ptr.passed else "PTR failed — nothing released"
    return "released" if fit.released else "nothing released"


def _title(fit) -> str:
    from .format import format_number
    parts = [f"method={fit.method}"]
    if fit.private:
        parts.append(f"eps={format_number(fit.eps)}, delta={format_number(fit.delta, 3)}")
    if fit.selector:
        parts.append(f"selected k={fit.k} by {fit.selector}")
    status = _status(fit) + (" · seeded: not fit for release" if fit.seeded else "")
    return f"{fit.formula}\n" + " · ".join(parts) + "\n" + status


def _power(x: float) -> str:
    if x == 0:
        return "0"
    e = round(math.log10(abs(x)))
    return ("−" if x < 0 else "") + f"$10^{{{e}}}$"


def _xscale(ax, values: np.ndarray, scale: str) -> str:
    nonzero = np.abs(values[np.isfinite(values) & (values != 0)])
    if scale == "auto":
        wide = nonzero.size > 1 and nonzero.max() / nonzero.min() > 1e3
        scale = "symlog" if wide else "linear"
    if scale == "symlog":
        if not nonzero.size:
            nonzero = np.ones(1)
        lo = math.floor(math.log10(float(nonzero.min())))
        hi = math.ceil(math.log10(float(nonzero.max())))
        ax.set_xscale("symlog", linthresh=10.0 ** lo)
        step = max(1, math.ceil((hi - lo) / 3))      # at most ~4 decades labelled per side
        decades = [10.0 ** e for e in range(lo, hi + 1) if e % step == 0] or [10.0 ** hi]
        ticks = sorted([-d for d in decades] + [0.0] + decades)
        ax.set_xticks(ticks, [_power(t) for t in ticks])
        return f"symmetric log scale, linear within ±{_power(10.0 ** lo)}"
    if scale != "linear":
        raise ValidationError(f"scale must be 'auto', 'linear' or 'symlog'; got {scale!r}")
    return ""


#: ``terms="auto"`` lists only the selected terms when the design has more columns than this.
MAX_TERMS = 40


def coef_plot(fit, *, intercept: bool = False, terms: str = "auto", scale: str = "auto",
              ax=None):
    """Dot plot of a fit's released coefficients, with the selected terms marked.

    Selected terms (or every term when no selection ran) are filled dots labelled with their
    selection rank; terms the selector left out are hollow grey dots at 0 (fixed, not
    estimated). When nothing was released (a failed PTR) no estimate is drawn and the panel
    says so. Only released quantities are plotted: the coefficients, the selection and the
    public settings. The Tukey depth regions, the m subset models and the data are not private
    and are deliberately not drawn.

    Parameters
    ----------
    fit : DPLMResult or DPGLMResult
    intercept : bool, default False
        Include the intercept (often on a very different scale from the slopes).
    terms : {"auto", "all", "selected"}
        Which terms get a row: every design column, or only the selected ones (and the
        intercept). ``"auto"``: all up to 40 columns, else only the selected ones (the panel
        says how many were left out).
    scale : {"auto", "linear", "symlog"}
        x axis scale; ``"auto"`` uses a symmetric log scale when the non-zero coefficients
        span more than three orders of magnitude.
    ax : matplotlib Axes, optional
        Draw here instead of a new figure.

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = pyplot()
    names, values, marks, ran, hidden = _rows(fit, intercept, terms)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 1.9 + 0.32 * len(names)), layout="constrained")
    y = np.arange(len(names))
    ax.axvline(0.0, color=BASELINE_COLOUR, lw=0.8, zorder=0)
    if fit.released:
        _draw_intervals(ax, fit, names, y, marks)
        note = _draw_released(ax, fit, y, values, marks, ran, scale)
    else:
        note = _draw_withheld(ax, fit)
    ax.set_yticks(y, names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    scale_word = "log-odds " if getattr(fit, "family", None) else ""
    label = f"released {scale_word}coefficient"
    if hidden:
        label += f"; {hidden} unselected terms (fixed at 0) not shown"
    ax.set_xlabel(label + (f"\n({note})" if note else ""))
    ax.set_title(_title(fit), fontsize=10, loc="left")
    ax.grid(axis="x", alpha=0.3)
    if fit.released and (ran or np.isfinite(fit.bse.to_numpy()).any()):
        ax.legend(loc="best", fontsize=8, framealpha=0.9)
    return ax


def _rows(fit, intercept: bool, terms: str):
    """The plot's rows: ``(names, values, marks, ran, hidden)``.

    ``marks`` say how each term entered ("selected #r", "not selected", "estimated", ...),
    ``ran`` whether a selection ran, ``hidden`` how many unselected terms were left out.
    """
    from .facts import _marker
    names = [str(t) for t in fit.params.index]
    values = np.asarray(fit.params, dtype=np.float64)
    keep = [i for i, n in enumerate(names) if intercept or n != INTERCEPT] or [0]
    names, values = [names[i] for i in keep], values[keep]
    rank = fit.spec.column_ranks(fit.selected)
    ran = bool(fit.selected) or fit.selection is not None
    marks = [_marker(n, rank, fit.spec.has_intercept) if ran else "estimated" for n in names]
    if terms not in ("auto", "all", "selected"):
        raise ValidationError(f"terms must be 'auto', 'all' or 'selected'; got {terms!r}")
    hidden = 0
    if ran and (terms == "selected" or (terms == "auto" and len(names) > MAX_TERMS)):
        rows = [i for i, m in enumerate(marks) if not m.startswith("not")] or [0]
        hidden = len(names) - len(rows)
        names, values = [names[i] for i in rows], values[rows]
        marks = [marks[i] for i in rows]
    return names, values, marks, ran, hidden


def _draw_released(ax, fit, y: np.ndarray, values: np.ndarray, marks: list[str], ran: bool,
                   scale: str) -> str:
    """Dots for the released coefficients (hollow at 0 for unselected terms) with selection
    ranks; returns the x-scale note."""
    colour = SELECTED_COLOUR if fit.private else BASELINE_COLOUR
    est = np.array([not m.startswith("not") for m in marks])
    if est.any():
        ax.scatter(values[est], y[est], s=42, color=colour, zorder=3,
                   label="selected (estimated)" if ran else "estimated")
    if (~est).any():
        ax.scatter(np.zeros(int((~est).sum())), y[~est], s=42, facecolors="none",
                   edgecolors=BASELINE_COLOUR, zorder=3, label="not selected (fixed at 0)")
    for yi, v, m in zip(y, values, marks, strict=True):
        if m.startswith("selected #"):
            ax.annotate(m.removeprefix("selected "), (v, yi), xytext=(6, 4),
                        textcoords="offset points", fontsize=8, color=colour)
    note = _xscale(ax, values, scale)
    ax.margins(x=0.1)
    return note


def _draw_intervals(ax, fit, names: list[str], y: np.ndarray, marks: list[str]) -> None:
    """Horizontal 95% interval bars (released standard errors) for estimated terms that have
    one; nothing for terms without (not selected, or a method without inference)."""
    ci = fit.conf_int(0.05)
    lo = np.array([ci.at[n, "lower"] for n in names], dtype=np.float64)
    hi = np.array([ci.at[n, "upper"] for n in names], dtype=np.float64)
    ok = np.isfinite(lo) & np.isfinite(hi) & np.array([not m.startswith("not") for m in marks])
    if ok.any():
        ax.hlines(y[ok], lo[ok], hi[ok], color=SELECTED_COLOUR if fit.private else
                  BASELINE_COLOUR, lw=1.6, alpha=0.55, zorder=2, label="95% interval")
        for edge in (lo, hi):
            ax.scatter(edge[ok], y[ok], marker="|", s=60, color=SELECTED_COLOUR, alpha=0.7,
                       zorder=2)


def _draw_withheld(ax, fit) -> str:
    """The panel of a fit that released nothing: its status instead of estimates."""
    ax.set_xlim(-1, 1)
    ax.set_xticks([])
    ax.text(0.5, 0.5, _status(fit), transform=ax.transAxes, ha="center", va="center",
            color=FAIL_COLOUR, fontsize=12, fontweight="bold",
            bbox={"facecolor": "white", "edgecolor": FAIL_COLOUR, "boxstyle": "round"})
    return ""
