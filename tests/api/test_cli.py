"""Tests for the command line: python -m dpstats lm/glm (text and --json) and its errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dpstats as dp
from dpstats.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
FORMULA = "median_house_value ~ median_income + housing_median_age"


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "houses.csv"
    dp.datasets.load("california").head(6000).to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_lm_prints_the_summary(capsys, csv):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--seed", 3)
    assert code == 0 and err == ""
    fit = dp.dp_lm(FORMULA, pd.read_csv(csv), eps=1.0, random_state=3)
    assert out.strip() == str(fit.summary()).strip()


def test_lm_json_matches_the_fit(capsys, csv):
    code, out, _ = run(capsys, "lm", FORMULA, csv, "--eps", 2, "--delta", 1e-6, "--seed", 3,
                       "--select", "none", "--method", "tukey", "--json")
    assert code == 0
    res = json.loads(out)
    fit = dp.dp_lm(FORMULA, pd.read_csv(csv), eps=2.0, delta=1e-6, select=None,
                   method="tukey", random_state=3)
    assert res["params"] == pytest.approx(fit.params.to_dict())
    assert list(res["params"]) == list(fit.params.index)
    assert res["released"] is True and res["seeded"] is True and res["private"] is True
    assert res["ptr"]["passed"] is True and res["ptr"]["lemma"] == "8.5"
    assert res["ptr"]["threshold"] == pytest.approx(fit.ptr.threshold)
    assert res["spent"] == pytest.approx({"eps": 2.0, "delta": 1e-6})
    assert math.fsum(c["eps"] for c in res["ledger"]) == pytest.approx(2.0)
    assert {c["stage"] for c in res["ledger"]} - {"inference"} == {"private n", "regression"}
    assert res["n_noisy"] == pytest.approx(fit.n_noisy) and res["selected"] == []


def test_json_of_failed_ptr_is_strict_json(capsys, csv):
    code, out, err = run(capsys, "lm", "median_house_value ~ .", csv, "--eps", 0.1,
                         "--select", "none", "--method", "tukey", "--seed", 1, "--json")
    assert code == 3 and "NaN" not in out and "Infinity" not in out   # nothing released
    assert err.strip().splitlines() == ["not released: the PTR check failed; no coefficients "
                                        "were released and the budget is still spent (exit "
                                        "status 3)"]
    res = json.loads(out)
    assert res["released"] is False and res["ptr"]["passed"] is False
    assert all(v is None for v in res["params"].values())
    assert res["spent"]["eps"] == pytest.approx(0.1)


def test_selection_options_reach_dp_lm(capsys):
    code, out, _ = run(capsys, "lm", "PTS_home ~ .", "nba", "--eps", 1, "--select", "kendall",
                       "--k", 2, "--method", "adassp", "--seed", 0, "--json")
    res = json.loads(out)
    assert code == 0 and res["method"] == "adassp" and res["selector"] == "kendall"
    assert len(res["selected"]) == 2 and res["k"] == 2 and res["ptr"] is None


def test_glm_on_a_bundled_data_set(capsys):
    code, out, _ = run(capsys, "glm", "income ~ age + sex", "adult", "--eps", 1, "--seed", 0,
                       "--json")
    res = json.loads(out)
    # the default method="auto" runs objective perturbation on this many rows
    assert code == 0 and res["family"] == "binomial" and res["method"] == "objpert"
    assert set(res["params"]) == {"Intercept", "age", "sex[T.Male]"}


def test_unseeded_fit_says_so(capsys, csv):
    _, out, _ = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--method", "adassp", "--json")
    assert json.loads(out)["seeded"] is False


def test_warnings_go_to_stderr_in_one_line(capsys, csv):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--method", "ols")
    assert code == 0 and "NOT PRIVATE" in out
    assert err.startswith("warning: method='ols' is NOT differentially private")
    assert "Traceback" not in err and "warnings.warn" not in err


@pytest.mark.parametrize(("argv", "needle"), [
    (["lm", FORMULA, "{csv}", "--eps", "-1"], "eps must be"),
    (["lm", FORMULA, "{csv}", "--eps", "1", "--delta", "2"], "delta must lie in"),
    (["lm", "median_house_value ~ nope", "{csv}", "--eps", "1"], "'nope'"),
    (["lm", FORMULA, "{csv}", "--eps", "1", "--method", "bogus"], "method='bogus'"),
    (["lm", FORMULA, "{csv}", "--eps", "1", "--k", "0"], "k must be"),
    (["lm", FORMULA, "missing.csv", "--eps", "1"], "no file 'missing.csv'"),
    (["lm", FORMULA, "{empty}", "--eps", "1"], "could not read"),
    (["glm", "income ~ age", "adult", "--eps", "1", "--method", "adassp"], "method='adassp'"),
])
def test_errors_exit_2_with_one_message(capsys, csv, tmp_path, argv, needle):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    argv = [a.format(csv=csv, empty=empty) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1


def test_module_entry_point_exits_2_without_traceback(csv):
    proc = subprocess.run([sys.executable, "-m", "dpstats", "lm", FORMULA, str(csv),
                           "--eps", "0"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: eps") and "Traceback" not in proc.stderr


def test_eps_is_required():
    with pytest.raises(SystemExit) as exc:
        main(["lm", FORMULA, "nba"])
    assert exc.value.code == 2
