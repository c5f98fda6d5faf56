"""Issue 14, leak 4: the Tukey depth the mechanism samples reaches no output.

The depth is a statistic of the data that the released point does not determine, and it was
released without being paid for (``Estimate.depth``, the result's ``depth``, "Tukey depth: i of
D" in the summary). The check here is behavioural: the mechanism is forced to sample its
smallest and then its largest admissible depth while returning the *same* point, and every
output of the fit (result fields, repr, tidy, summary text and HTML, the command line's JSON,
warnings) must be identical between the two runs: then no output is a function of the depth.
``audit``-style evidence that releasing the depth breaks the guarantee is in
``test_audit_tukey.py::test_sampled_depth_is_not_released``.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.__main__ import main
from dpstats.estimators.outcome import Estimate
from dpstats.mechanisms import tukey_em
from dpstats.results.glm import DPGLMResult
from dpstats.results.lm import DPLMResult

FORMULA = "y ~ x1 + x2"


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-3, 3, size=n)})
    df["y"] = 2.0 + 3.0 * df.x1 - 1.5 * df.x2 + rng.normal(size=n)
    path = tmp_path_factory.mktemp("depth") / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_no_result_type_has_a_depth_field():
    for cls in (Estimate, DPLMResult, DPGLMResult):
        assert "depth" not in {f.name for f in dataclasses.fields(cls)}, cls.__name__


def _force_depth(monkeypatch, deepest: bool) -> list[int]:
    """The mechanism picks its smallest or largest admissible depth and returns a fixed point
    whatever the depth; returns the list the chosen depths are recorded in."""
    chosen: list[int] = []

    def pick(scores, *args, **kwargs):
        return len(scores) - 1 if deepest else 0

    def point(S, depth, rng):
        chosen.append(depth)
        return np.linspace(0.5, 1.5, S.shape[1])

    monkeypatch.setattr(tukey_em, "exponential", pick)
    monkeypatch.setattr(tukey_em, "sample_point_with_depth", point)
    return chosen


def _outputs(csv_path, capsys) -> dict[str, str]:
    """Every output of one seeded Tukey fit, as text."""
    data = pd.read_csv(csv_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp.dp_lm(FORMULA, data, eps=2.0, method="tukey", select=None, random_state=3)
    assert fit.released
    summary = fit.summary()
    out = {"repr": repr(fit), "text": summary.as_text(), "html": summary.as_html(),
           "tidy": fit.tidy().to_json(), "warnings": repr([str(w.message) for w in caught])}
    out.update({f"field {f.name}": repr(getattr(fit, f.name))
                for f in dataclasses.fields(fit)})
    capsys.readouterr()
    assert main(["lm", FORMULA, str(csv_path), "--eps", "2", "--method", "tukey",
                 "--select", "none", "--seed", "3", "--json"]) == 0
    out["cli json"] = capsys.readouterr().out
    return out


def test_outputs_do_not_depend_on_the_sampled_depth(csv_path, capsys, monkeypatch):
    low_depths = _force_depth(monkeypatch, deepest=False)
    low = _outputs(csv_path, capsys)
    monkeypatch.undo()
    high_depths = _force_depth(monkeypatch, deepest=True)
    high = _outputs(csv_path, capsys)
    assert set(low_depths).isdisjoint(high_depths)        # the depths really differed
    assert low.keys() == high.keys()
    changed = [k for k in low if low[k] != high[k]]
    assert not changed, f"outputs that depend on the sampled depth: {changed}"
    assert "Tukey depth:" not in low["text"] and '"depth"' not in low["cli json"]
