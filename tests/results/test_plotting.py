"""Tests for dpstats.results.plot: what each plot draws (released values only) and its errors."""

from __future__ import annotations

import io
import math
import sys

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dpstats.errors import ValidationError  # noqa: E402
from dpstats.lab import plots  # noqa: E402
from dpstats.mechanisms.accountant import Charge  # noqa: E402
from dpstats.mechanisms.ptr import PTRReport  # noqa: E402
from dpstats.results import plot as plotting  # noqa: E402
from dpstats.results.glm import DPGLMResult  # noqa: E402
from dpstats.results.lm import DPLMResult, FitSpec, SelectionReport  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def result(names=("Intercept", "a", "b", "c"), values=(3.0, 2.0, 0.0, -1.5), selected=("c", "a"),
           cls=DPLMResult, **kw):
    spec = FitSpec(formula="y ~ .", expanded="y ~ a + b + c", label="y", columns=tuple(names),
                   has_intercept=True, model_spec=None)
    base = dict(params=pd.Series(values, index=list(names), dtype=float), spec=spec,
                method="tukey", eps=1.0, delta=1e-5,
                charges=(Charge("regression", "exponential", 1.0, 1e-5, "x"),), released=True,
                selector="kendall" if selected else None, k=len(selected) or None,
                selected=list(selected),
                selection=SelectionReport("kendall", len(selected), tuple(selected), 0.05)
                if selected else None,
                ptr=PTRReport(True, 20.0, 20.0, 9.0, "8.5", 0.1), seeded=True)
    base.update(kw)
    return cls(**base)


def points(ax):
    """(filled, hollow) point coordinates of an Axes' scatters (hollow: no or white fill)."""
    filled, hollow = [], []
    for c in ax.collections:
        face = c.get_facecolors()
        empty = len(face) == 0 or face[0][3] == 0 or tuple(face[0]) == (1, 1, 1, 1)
        (hollow if empty else filled).extend(map(tuple, c.get_offsets()))
    return filled, hollow


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_coef_plot_marks_selected_terms_with_their_rank():
    ax = result().plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    filled, hollow = points(ax)
    assert sorted(filled) == [(-1.5, 2.0), (2.0, 0.0)] and hollow == [(0.0, 1.0)]
    assert sorted(texts(ax)) == ["#1", "#2"]
    title = ax.get_title(loc="left")
    assert "PTR passed" in title and "seeded: not fit for release" in title
    assert "selected k=2 by kendall" in title and "eps=1" in title
    assert ax.get_xlabel() == "released coefficient" and ax.get_xscale() == "linear"


def test_plot_delegates_to_coef_plot_and_saves_png():
    fit = result()
    ax = fit.plot(intercept=True)
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "Intercept"
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"


def test_no_selection_draws_every_term_filled_without_legend():
    ax = plotting.coef_plot(result(selected=()))
    filled, hollow = points(ax)
    assert len(filled) == 3 and hollow == [] and ax.get_legend() is None


def test_failed_ptr_draws_no_estimate():
    nan = [math.nan] * 4
    fit = result(values=nan, released=False, ptr=PTRReport(False, 2.0, 2.0, 9.0, "8.5", 0.1))
    ax = fit.plot()
    assert points(ax) == ([], [])
    assert "PTR failed — nothing released" in texts(ax)
    assert "PTR failed — nothing released" in ax.get_title(loc="left")


def test_not_private_baseline_is_labelled():
    fit = result(method="ols", private=False, selected=(), ptr=None, charges=())
    title = plotting.coef_plot(fit).get_title(loc="left")
    assert "NOT PRIVATE" in title and "eps=" not in title


def test_many_terms_show_only_selected_and_say_how_many_are_hidden():
    names = ["Intercept"] + [f"g{i}" for i in range(60)]
    values = [1.0] + [0.0] * 60
    values[5], values[9] = 0.3, -0.2
    fit = result(names=names, values=values, selected=("g8", "g4"))
    ax = fit.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["g4", "g8"]
    assert "58 unselected terms (fixed at 0) not shown" in ax.get_xlabel()
    assert len(fit.plot(terms="all").get_yticklabels()) == 60


def test_wide_coefficients_use_symlog_and_glm_says_log_odds():
    fit = result(values=(0.0, 5e4, 0.0, -0.02), cls=DPGLMResult)
    ax = fit.plot()
    assert ax.get_xscale() == "symlog" and "symmetric log scale" in ax.get_xlabel()
    assert ax.get_xlabel().startswith("released log-odds coefficient")
    assert plotting.coef_plot(fit, scale="linear").get_xscale() == "linear"


@pytest.mark.parametrize("kw", [{"scale": "log"}, {"terms": "some"}])
def test_coef_plot_bad_options(kw):
    with pytest.raises(ValidationError):
        result().plot(**kw)


def experiment_frame():
    rows = []
    for ds in ("d1", "d2"):
        for t in range(5):
            for e in (0.5, 2.0):
                fail = ds == "d1" and e == 0.5 and t < 2
                rows.append({"dataset": ds, "method": "tukey", "trial": t, "eps": e,
                             "delta": 1e-5, "metric": "r2",
                             "value": -math.inf if fail else 0.5 + 0.01 * t + e / 10,
                             "released": not fail, "private": True, "time": 0.1})
                rows.append({"dataset": ds, "method": "ols", "trial": t, "eps": e,
                             "delta": 1e-5, "metric": "r2", "value": -3.0 if t == 0 else 0.7,
                             "released": True, "private": False, "time": 0.1})
    return pd.DataFrame(rows)


def test_boxplot_clips_failures_and_counts_them():
    fig = plots.r2_boxplot(experiment_frame(), eps=0.5)
    a1, a2 = fig.axes
    assert a1.get_title() == "d1 (eps=0.5)"
    assert [t.get_text() for t in a1.get_xticklabels()] == ["tukey", "ols\n(not private)"]
    assert "2/5\nnot released" in texts(a1) and texts(a2) == []
    assert "drawn at -1" in a1.get_ylabel()
    ys = [y for _, y in points(a1)[0]]
    assert min(ys) == -1.0 and ys.count(-1.0) == 3         # two failures and one -3.0
    assert len(a1.patches) == 2


def test_boxplot_needs_one_eps_and_one_panel_for_ax():
    df = experiment_frame()
    with pytest.raises(ValidationError, match="several eps"):
        plots.r2_boxplot(df)
    _, ax = plt.subplots()
    with pytest.raises(ValidationError, match="one data set"):
        plots.r2_boxplot(df, eps=2.0, ax=ax)
    fig = plots.r2_boxplot(df[df["dataset"] == "d2"], eps=2.0, ax=ax)
    assert fig is ax.figure and "drawn at" in ax.get_ylabel()     # ols -3.0 clipped
    with pytest.raises(ValidationError, match="no rows with eps"):
        plots.r2_boxplot(df, eps=7.0)


def test_utility_vs_eps_medians_and_hollow_failures():
    fig = plots.utility_vs_eps(experiment_frame())
    a1 = fig.axes[0]
    lines = {ln.get_label(): ln for ln in a1.get_lines() if not ln.get_label().startswith("_")}
    assert set(lines) == {"tukey", "ols (not private)"}
    x, y = lines["tukey"].get_data()
    assert list(x) == [0.5, 2.0]
    assert y[0] == pytest.approx(0.57) and y[1] == pytest.approx(0.72)   # -inf counted low
    assert lines["ols (not private)"].get_linestyle() == "--"
    filled, hollow = points(a1)
    assert (0.5, pytest.approx(0.57)) in [(px, py) for px, py in hollow]
    assert a1.get_xscale() == "log" and "hollow marker" in fig.get_suptitle()


def test_metric_must_be_chosen_when_mixed():
    df = experiment_frame()
    df.loc[df["method"] == "ols", "metric"] = "accuracy"
    with pytest.raises(ValidationError, match="several metrics"):
        plots.utility_vs_eps(df)
    fig = plots.utility_vs_eps(df, metric="accuracy")
    assert fig.axes[0].get_ylabel().startswith("median test accuracy")
    with pytest.raises(ValidationError, match="not in df"):
        plots.utility_vs_eps(df, metric="mae")
    with pytest.raises(ValidationError, match="experiments.run"):
        plots.r2_boxplot(pd.DataFrame({"x": [1]}))


def test_missing_matplotlib_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install dpstats\[plot\]"):
        result().plot()


def test_only_released_values_are_read():
    """coef_plot works on a result whose params are all that is numeric: nothing else to read."""
    fit = result()
    ax = fit.plot()
    filled, _ = points(ax)
    assert {x for x, _ in filled} <= set(np.asarray(fit.params, dtype=float))
