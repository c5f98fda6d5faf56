"""Messages that say what happened (issue 18), each pinned to its text.

Every text here is public: it depends on the arguments, the method and released values only.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats as dp
from dpstats.__main__ import eps_text, main
from dpstats.errors import PredictionError, ValidationError
from dpstats.results.facts import DROPPED
from dpstats.results.format import _fmt_n


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=50), "x2": rng.normal(size=50)})
    df["y"] = df.x1 + rng.normal(size=50)
    return df


@pytest.fixture(scope="module")
def ols(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dp.dp_lm("y ~ x1 + x2", small, method="ols", eps=1.0)


def test_row_count_shown_is_never_negative():
    assert _fmt_n(-116.3) == "< 1 (noisy)" and _fmt_n(0.4) == "< 1 (noisy)"
    assert _fmt_n(1234.4) == "1,234" and _fmt_n(None) == "not released"


def test_fifty_row_fit_shows_no_negative_n_and_says_why_it_was_withheld(small):
    fit = dp.dp_lm("y ~ x1 + x2", small, eps=1.0, random_state=1)    # the default
    assert not fit.released and fit.n_noisy < 0        # the released value is kept as is
    facts = dict(fit.summary().facts)
    assert facts["n (private lower bound):"] == "< 1 (noisy)"
    assert "-" not in facts["n (private lower bound):"]
    text = repr(fit)
    assert ("NOT released (too few rows for any method (stopped after the private row count))"
            in text)
    assert fit.spent == (0.05, 0.0)                 # stopped after the row count
    assert "PTR" not in text


def test_score_without_the_response_names_it(small, ols):
    with pytest.raises(PredictionError) as info:
        ols.score(small.drop(columns="y"))
    assert str(info.value).startswith("score needs the response column 'y' in newdata")


def test_score_without_a_transformed_response_names_it(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_lm("np.log(y + 10) ~ x1", small, method="ols", eps=1.0)
    with pytest.raises(PredictionError, match=r"^score needs the response 'np.log\(y \+ 10\)'"):
        fit.score(small.drop(columns="y"))


def test_unknown_weights_option_names_the_method_and_hints(small):
    with pytest.raises(ValidationError) as info:
        dp.dp_lm("y ~ x1", small, eps=1.0, method="tukey", weights=np.ones(50))
    msg = str(info.value)
    assert msg.startswith("`weights` is not an option of method='tukey'; the options of "
                          "method='tukey' are: centre")
    assert "dp_lm does not support weights" in msg and "it takes" not in msg
    with pytest.raises(ValidationError, match="dp_glm does not support weights"):
        dp.dp_glm("b ~ x1", small.assign(b=small.x1 > 0), family="binomial", eps=1.0,
                  weights=np.ones(50))


def test_ols_summary_has_no_randomness_and_no_row_count(ols):
    facts = dict(ols.summary().facts)
    assert facts["Randomness:"] == "none (not private)"
    assert "n (private lower bound):" not in facts
    assert "OS CSPRNG" not in ols.summary().as_text()


def test_frank_wolfe_fit_is_labelled_l1_constrained(small):
    fit = dp.dp_lm("y ~ x1 + x2", small, eps=1.0, method="fw", radius=2.0, random_state=1)
    assert dict(fit.summary().facts)["Constraint:"] == \
        "L1-constrained (radius 2): strong predictors can be exactly 0"
    assert "method=fw L1-constrained (radius 2) " in repr(fit)
    glm = dp.dp_glm("b ~ x1", small.assign(b=small.x1 > 0), family="binomial", eps=1.0, method="fw",
                    bounds={"x": (-3.0, 3.0), "y": (0.0, 1.0)}, random_state=1)
    assert "method=fw L1-constrained (radius " in repr(glm)
    tukey = dp.dp_lm("y ~ x1 + x2", small, eps=1.0, random_state=1)
    assert "Constraint:" not in dict(tukey.summary().facts) and "L1" not in repr(tukey)


def test_dropped_rows_are_mentioned_unconditionally(ols):
    assert DROPPED == "Rows with missing or invalid values are dropped (how many is not released)."
    notes = ols.summary().notes
    assert notes[-1] == DROPPED


def test_cli_exits_3_with_a_reason_when_nothing_was_released(small, tmp_path, capsys):
    path = tmp_path / "small.csv"
    small.to_csv(path, index=False)
    code = main(["lm", "y ~ x1 + x2", str(path), "--eps", "1", "--seed", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 3
    assert json.loads(out)["released"] is False          # --json output is kept
    assert err.strip().splitlines() == [
        "not released: too few rows for any method (stopped after the private row count); no "
        "coefficients were released and the budget is still spent (exit status 3)"]


def test_demo_says_eps_is_ln_3():
    assert eps_text(math.log(3)) == "ln 3 \u2248 1.099"
    assert eps_text(0.5) == "0.5"
