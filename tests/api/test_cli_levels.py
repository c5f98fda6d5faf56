"""The command line and category levels: a numeric column with one non-numeric entry, and the
options that declare column types (--levels, --numeric, --categorical, --levels-from-data)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpstats.__main__ import main

CANARY = "CANARY_cli_9d41"
FORMULA = "y ~ x + g"


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 8000
    x = rng.standard_normal(n)
    g = rng.choice(["a", "b"], n)
    code = rng.choice([1, 2, 3], n)
    y = 1 + 2 * x + (g == "b") + 0.5 * (code == 2) + rng.standard_normal(n)
    df = pd.DataFrame({"y": y, "x": x.round(4).astype(object), "g": g, "code": code})
    df.loc[17, "x"] = CANARY              # a numeric column with one non-numeric entry
    path = tmp_path_factory.mktemp("cli_levels") / "data.csv"
    df.to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("json_flag", [True, False])
def test_stray_entry_of_a_numeric_column_is_never_printed(capsys, csv, json_flag):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--seed", 0,
                         *(["--json"] if json_flag else []))
    assert code == 0
    assert CANARY not in out and CANARY not in err
    if json_flag:
        res = json.loads(out)
        assert res["private"] is True
        # x is text: its levels are (almost) all singletons, so none is a coefficient
        assert not any(k.startswith("x[") for k in res["params"])
        assert [c["stage"] for c in res["ledger"]][:2] == ["levels", "levels"]


def test_numeric_option_reads_the_column_as_numbers(capsys, csv):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--seed", 0, "--json",
                         "--numeric", "x")
    assert code == 0 and CANARY not in out + err
    res = json.loads(out)
    assert list(res["params"]) == ["Intercept", "x", "g[T.b]"]
    assert [c["stage"] for c in res["ledger"]].count("levels") == 1     # g only


def test_declared_levels_cost_nothing(capsys, csv):
    code, out, _ = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--seed", 0, "--json",
                       "--numeric", "x", "--levels", "g=b,a")
    res = json.loads(out)
    assert code == 0 and list(res["params"]) == ["Intercept", "x", "g[T.a]"]
    assert "levels" not in {c["stage"] for c in res["ledger"]}


def test_categorical_option_discovers_integer_codes(capsys, csv):
    code, out, _ = run(capsys, "lm", "y ~ x + code", csv, "--eps", 2, "--seed", 0, "--json",
                       "--numeric", "x", "--categorical", "code")
    res = json.loads(out)
    assert code == 0 and list(res["params"]) == ["Intercept", "x", "code[T.2]", "code[T.3]"]
    assert [c["stage"] for c in res["ledger"]].count("levels") == 1


def test_levels_from_data_is_not_private(capsys, csv):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, "--seed", 0, "--json",
                         "--numeric", "x", "--levels-from-data")
    assert code == 0 and json.loads(out)["private"] is False
    assert "NOT differentially private" in err


@pytest.mark.parametrize("argv, match", [
    (["--levels", "g"], "COLUMN=LEVEL1"),
    (["--levels", "g=a,,b"], "COLUMN=LEVEL1"),
    (["--levels", "nope=a,b"], "'nope'"),
    (["--numeric", "x", "--categorical", "x"], "more than one"),
])
def test_bad_type_options_exit_2(capsys, csv, argv, match):
    code, out, err = run(capsys, "lm", FORMULA, csv, "--eps", 1, *argv)
    assert code == 2 and out == "" and match in err and CANARY not in err


def test_help_documents_the_options(capsys):
    with pytest.raises(SystemExit):
        main(["lm", "--help"])
    out = capsys.readouterr().out
    for opt in ("--levels", "--numeric", "--categorical", "--levels-from-data"):
        assert opt in out
    assert "discovered privately" in out
