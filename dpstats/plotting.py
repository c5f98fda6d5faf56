"""Plots of a private fit and of experiment results (matplotlib, imported on first use).

Only released quantities are ever drawn: a fit's released coefficients and which terms were
selected, or experiment metrics that the caller computed on held-out data. Nothing here reads
the training data, the Tukey depth regions or the subset models, which are not private.

matplotlib is an optional dependency: ``pip install dpstats[plot]``.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd

from .errors import ValidationError

__all__ = ["coef_plot", "r2_boxplot", "utility_vs_eps"]

PRIVATE_COLOUR = "#1f6feb"
SELECTED_COLOUR = "#1f6feb"
BASELINE_COLOUR = "#6e7781"
FAIL_COLOUR = "#cf222e"
_METRIC_LABEL = {"r2": "test R²", "accuracy": "test accuracy"}
#: Experiment plots put at most this many data sets side by side, then start a new row.
PANELS_PER_ROW = 3


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("dpstats plots need matplotlib: pip install dpstats[plot] "
                          "(or pip install matplotlib)") from err
    return plt


# -- a fit -------------------------------------------------------------------------------------
def _status(fit) -> str:
    if not fit.private:
        return "NOT PRIVATE (non-private baseline)"
    if fit.ptr is not None:
        return "PTR passed" if fit.ptr.passed else "PTR failed — nothing released"
    return "released" if fit.released else "nothing released"


def _title(fit) -> str:
    from ._summary_format import format_number
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
    from ._summary_facts import _marker
    plt = _pyplot()
    names = [str(t) for t in fit.params.index]
    values = np.asarray(fit.params, dtype=np.float64)
    keep = [i for i, n in enumerate(names) if intercept or n != "Intercept"] or [0]
    names, values = [names[i] for i in keep], values[keep]
    rank = {name: i + 1 for i, name in enumerate(fit.selected)}
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
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 1.9 + 0.32 * len(names)), layout="constrained")
    y = np.arange(len(names))
    ax.axvline(0.0, color=BASELINE_COLOUR, lw=0.8, zorder=0)
    colour = SELECTED_COLOUR if fit.private else BASELINE_COLOUR
    if fit.released:
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
    else:
        note = ""
        ax.set_xlim(-1, 1)
        ax.set_xticks([])
        ax.text(0.5, 0.5, _status(fit), transform=ax.transAxes, ha="center", va="center",
                color=FAIL_COLOUR, fontsize=12, fontweight="bold",
                bbox={"facecolor": "white", "edgecolor": FAIL_COLOUR, "boxstyle": "round"})
    ax.set_yticks(y, names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    scale_word = "log-odds " if getattr(fit, "family", None) else ""
    label = f"released {scale_word}coefficient"
    if hidden:
        label += f"; {hidden} unselected terms (fixed at 0) not shown"
    ax.set_xlabel(label + (f"\n({note})" if note else ""))
    ax.set_title(_title(fit), fontsize=10, loc="left")
    ax.grid(axis="x", alpha=0.3)
    if fit.released and ran:
        ax.legend(loc="best", fontsize=8, framealpha=0.9)
    return ax


# -- experiment results ------------------------------------------------------------------------
def _frame(df, metric, needed=("dataset", "method", "eps", "metric", "value", "released")):
    if not isinstance(df, pd.DataFrame) or set(needed) - set(df.columns):
        raise ValidationError("expected the DataFrame returned by dpstats.experiments.run "
                              f"(columns {list(needed)})")
    metrics = list(dict.fromkeys(df["metric"]))
    if metric is None:
        if len(metrics) != 1:
            raise ValidationError(f"df has several metrics {metrics}; pass metric=...")
        metric = metrics[0]
    if metric not in metrics:
        raise ValidationError(f"metric={metric!r} is not in df; it has {metrics}")
    out = df[df["metric"] == metric]
    if "private" not in out:
        out = out.assign(private=True)
    return out, metric


def _panels(n: int, ax, width: float, height: float):
    plt = _pyplot()
    if ax is not None:
        if n != 1:
            raise ValidationError("ax= draws one data set; df has several (filter it, or "
                                  "leave ax=None for one panel per data set)")
        return ax.figure, [ax]
    ncols = min(n, PANELS_PER_ROW)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             layout="constrained", squeeze=False)
    flat = list(axes.ravel())
    for extra in flat[n:]:
        extra.set_visible(False)
    return fig, flat[:n]


def _ylabel(metric: str, floor, clipped: bool) -> str:
    label = _METRIC_LABEL.get(metric, metric)
    if clipped:
        label += f"\n(values < {floor:g}, incl. failed releases = -inf, drawn at {floor:g})"
    return label


def r2_boxplot(df: pd.DataFrame, *, eps: float | None = None, metric: str | None = None,
               floor: float = -1.0, ax=None):
    """Box plots of the test metric (R^2) by method, one panel per data set.

    Values below ``floor`` -- including failed releases, recorded as ``-inf`` -- are drawn at
    ``floor`` (the axis label says so) and the number of failed releases is printed under each
    box. Non-private baselines are grey. Only the experiment's metric values are plotted.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`dpstats.experiments.run`.
    eps : float, optional
        Which budget to show when ``df`` has several.
    metric : str, optional
        Which metric to show when ``df`` has several.
    floor : float, default -1.0
        Lowest value drawn.
    ax : matplotlib Axes, optional
        Only when ``df`` holds one data set.

    Returns
    -------
    matplotlib.figure.Figure
    """
    df, metric = _frame(df, metric)
    budgets = sorted(set(df["eps"]))
    if eps is None and len(budgets) > 1:
        raise ValidationError(f"df has several eps values {budgets}; pass eps=... (or plot "
                              "them all with plotting.utility_vs_eps)")
    eps = budgets[0] if eps is None else eps
    df = df[np.isclose(df["eps"], eps)]
    if df.empty:
        raise ValidationError(f"no rows with eps={eps!r}; df has eps values {budgets}")
    sets = list(dict.fromkeys(df["dataset"]))
    fig, axes = _panels(len(sets), ax, max(3.2, 1.1 * df["method"].nunique() + 1.2), 4.6)
    for a, name in zip(axes, sets, strict=True):
        part = df[df["dataset"] == name]
        methods = list(dict.fromkeys(part["method"]))
        vals = [np.maximum(part.loc[part["method"] == m, "value"].dropna().to_numpy(), floor)
                for m in methods]
        private = [bool(part.loc[part["method"] == m, "private"].all()) for m in methods]
        box = a.boxplot(vals, patch_artist=True, widths=0.6, showfliers=False,
                        medianprops={"color": "black"})
        for patch, priv in zip(box["boxes"], private, strict=True):
            colour = PRIVATE_COLOUR if priv else BASELINE_COLOUR
            patch.set(facecolor=colour, alpha=0.35, edgecolor=colour)
        for i, v in enumerate(vals, 1):
            jitter = np.linspace(-0.12, 0.12, v.size) if v.size > 1 else np.zeros(v.size)
            a.scatter(i + jitter, v, s=10, color="black", alpha=0.5, zorder=3)
            failed = int((~part.loc[part["method"] == methods[i - 1], "released"]).sum())
            if failed:
                a.annotate(f"{failed}/{len(v)}\nnot released", (i, 1),
                           xycoords=("data", "axes fraction"), xytext=(0, -4),
                           textcoords="offset points", ha="center", va="top", fontsize=8,
                           color=FAIL_COLOUR)
        a.set_xticks(range(1, len(methods) + 1),
                     [textwrap.fill(m, 14) + ("" if p else "\n(not private)")
                      for m, p in zip(methods, private, strict=True)],
                     rotation=30 if len(methods) > 6 else 0,
                     ha="right" if len(methods) > 6 else "center")
        if not part["released"].all():       # headroom for the "not released" counts
            y0, y1 = a.get_ylim()
            a.set_ylim(y0, y1 + 0.15 * (y1 - y0))
        lowest = min((float(v.min()) for v in vals if v.size), default=0.0)
        if lowest <= floor:
            a.axhline(floor, color=FAIL_COLOUR, lw=0.8, ls=":")
        if metric == "r2" and lowest < 0:       # mark R^2 = 0 when the data reach it
            a.axhline(0.0, color=BASELINE_COLOUR, lw=0.6)
        a.set_ylabel(_ylabel(metric, floor, lowest <= floor))
        a.set_title(f"{name} (eps={eps:g})", fontsize=10)
        a.grid(axis="y", alpha=0.3)
    return fig


def utility_vs_eps(df: pd.DataFrame, *, metric: str | None = None, floor: float = -1.0,
                   band: bool = True, logx: bool = True, ax=None):
    """Median test metric against eps for each method, one panel per data set.

    Medians and the interquartile band are taken over trials after failed releases (``-inf``)
    and values below ``floor`` are set to ``floor`` (the axis label says so). A hollow marker
    means that some fits at that eps released nothing. Non-private baselines are dashed grey.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`dpstats.experiments.run` with several eps values.
    metric : str, optional
        Which metric to show when ``df`` has several.
    floor : float, default -1.0
        Lowest value drawn.
    band : bool, default True
        Shade the interquartile range.
    logx : bool, default True
        Log scale for eps.
    ax : matplotlib Axes, optional
        Only when ``df`` holds one data set.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .experiments import quantile
    df, metric = _frame(df, metric)
    sets = list(dict.fromkeys(df["dataset"]))
    fig, axes = _panels(len(sets), ax, 5.6, 4.2)
    cmap = _pyplot().get_cmap("tab10")
    for a, name in zip(axes, sets, strict=True):
        part = df[df["dataset"] == name]
        clipped = False
        for j, (method, g) in enumerate(part.groupby("method", sort=False)):
            rows = []
            for e, ge in g.groupby("eps"):
                v = np.maximum(ge["value"].to_numpy(dtype=np.float64), floor)
                clipped |= bool((ge["value"] < floor).any())
                rows.append((e, quantile(v, 0.5), quantile(v, 0.25), quantile(v, 0.75),
                             bool(ge["released"].all())))
            e, med, lo, hi, ok = (np.array(c) for c in zip(*rows, strict=True))
            private = bool(g["private"].all())
            colour = cmap(j % 10) if private else BASELINE_COLOUR
            label = method if private else f"{method} (not private)"
            a.plot(e, med, color=colour, ls="-" if private else "--", label=label)
            a.scatter(e[ok], med[ok], color=colour, s=25, zorder=3)
            a.scatter(e[~ok], med[~ok], facecolors="white", edgecolors=colour, s=30, zorder=3)
            if band and private:
                a.fill_between(e, lo, hi, color=colour, alpha=0.15, lw=0)
        if logx:
            a.set_xscale("log")
            grid = sorted(set(part["eps"]))
            if len(grid) <= 8:
                a.set_xticks(grid, [f"{e:g}" for e in grid])
                a.minorticks_off()
        if clipped:
            a.axhline(floor, color=FAIL_COLOUR, lw=0.8, ls=":")
        a.set_xlabel("eps (total budget per fit)")
        a.set_ylabel("median " + _ylabel(metric, floor, clipped))
        a.set_title(name, fontsize=10)
        a.grid(alpha=0.3)
        a.legend(fontsize=8, framealpha=0.9)
    caption = ("median over trials" + ("; band: quartiles" if band else "")
               + "; hollow marker: some fits at that eps released nothing")
    if ax is None:
        fig.suptitle(caption, fontsize=9)
    else:
        ax.set_title(f"{sets[0]}\n({caption})", fontsize=9)
    return fig
