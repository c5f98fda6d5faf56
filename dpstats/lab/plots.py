"""Plots of experiment results: test metrics by method and data set (matplotlib).

Only the metric values that :func:`dpstats.lab.experiments.run` computed on held-out data are
drawn. matplotlib is an optional dependency: ``pip install dpstats[plot]``.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd

from ..errors import ValidationError
from ..results.plot import BASELINE_COLOUR, FAIL_COLOUR, PRIVATE_COLOUR, pyplot
from .experiments import quantile

__all__ = ["r2_boxplot", "utility_vs_eps"]

_METRIC_LABEL = {"r2": "test R²", "accuracy": "test accuracy"}
#: Experiment plots put at most this many data sets side by side, then start a new row.
PANELS_PER_ROW = 3

def _frame(df, metric, needed=("dataset", "method", "eps", "metric", "value", "released")):
    if not isinstance(df, pd.DataFrame) or set(needed) - set(df.columns):
        raise ValidationError("expected the DataFrame returned by dpstats.lab.experiments.run "
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
    plt = pyplot()
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
        Output of :func:`dpstats.lab.experiments.run`.
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
        Output of :func:`dpstats.lab.experiments.run` with several eps values.
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
    df, metric = _frame(df, metric)
    sets = list(dict.fromkeys(df["dataset"]))
    fig, axes = _panels(len(sets), ax, 5.6, 4.2)
    cmap = pyplot().get_cmap("tab10")
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
