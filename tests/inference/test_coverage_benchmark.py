"""Smoke test of the umbrella coverage benchmark (benchmarks/coverage.py, issue 16): its quick
mode runs one small cell of each family through the specialised scripts' generators and
fitters and writes the common schema; ``--merge`` keeps the later row of a key."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from benchmark_script import load_benchmark

FULL = os.environ.get("DPSTATS_FULL", "") == "1"


def _load():
    return load_benchmark("coverage.py")


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="runs four small cells, ~5-10 s (DPSTATS_FULL=1)")
def test_quick_run_writes_every_family(tmp_path, capsys):
    mod = _load()
    out = tmp_path / "cov.csv"
    assert mod.main(["--quick", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["family"]) == {"lm", "glm", "tukey"}
    assert set(mod.COLUMNS) <= set(table.columns)
    assert (table["reps"] == 2).all()
    assert table["with_interval"].between(0, 1).all()
    released = table[table["with_interval"] > 0]
    assert len(released) >= 1 and released["coverage"].between(0, 1).all()
    assert np.isfinite(released["width_ratio"]).all()
    assert "[4/4" in capsys.readouterr().out            # progress lines


def test_merge_keeps_the_later_row(tmp_path):
    mod = _load()
    base = {"family": "lm", "cell": "centre", "model": "linear", "method": "bas"}
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame([{**base, "reps": 10}, {**base, "method": "adassp", "reps": 5}]).to_csv(a)
    pd.DataFrame([{**base, "reps": 500}]).to_csv(b)
    table = mod.merge([str(a), str(b)], tmp_path / "m.csv")
    assert sorted(table["reps"]) == [5, 500]


def test_declared_grid_spans_the_issue():
    """n 2e3-2e5, p 1-10, eps 0.5-4, the three covariate and error designs, every method."""
    mod = _load()
    jobs = mod.jobs(["lm", "tukey", "glm"], set(), set(), True)
    cells = {c for _, c, _, _ in jobs}
    for name in ("n=2000", "n=200000", "p=1", "p=10", "eps=0.5", "eps=4.0",
                 "covariates=skewed", "covariates=binary", "errors=t3", "errors=hetero"):
        assert name in cells
    methods = {m for _, _, m, _ in jobs}
    assert {"default", "adassp", "bas", "dpgd", "fw", "tukey", "glm-auto", "glm-dpgd",
            "lm-dpgd"} <= methods
    assert any(logit for *_, logit in jobs)


def test_row_summarises_coverage_bias_and_spread():
    """The fast variant: the common row from per-fit z-scores (a fit without intervals is left
    out of coverage; a biased coefficient shows in ``z_bias`` and lowers ``coverage_min``; a
    wild z is counted in ``z_wild`` and does not swamp the mean and sd)."""
    mod = _load()
    rng = np.random.default_rng(3)
    z = rng.normal(size=(4000, 2))
    z[:, 1] = 0.5 * z[:, 1] + 2.0                  # biased, and conservative in spread
    has = np.ones(4000, dtype=bool)
    has[:1000] = False
    z[:1000] = np.nan
    z[2000, 0] = 1e17                              # one broken interval (se ~ 0)
    row = mod._row("lm", "centre", "linear", "bas", {"n": 1}, 4000, has, z,
                   np.full((4000, 2), 2.0), 0.0)
    assert row["with_interval"] == 0.75
    assert abs(row["coverage_max"] - 0.95) < 0.015
    assert abs(row["coverage_min"] - 0.468) < 0.03     # P(|N(2, 0.5^2)| <= 1.96)
    assert abs(row["z_bias"] - 2.0) < 0.05
    assert abs(row["z_sd_min"] - 0.5) < 0.03 and abs(row["z_sd_max"] - 1.0) < 0.05
    assert row["width_ratio"] == 2.0
    assert row["z_wild"] == 1 / 6000               # counted, and kept out of z_bias / z_sd


def test_import_keeps_the_newest_interval_coverage_row(tmp_path):
    """coverage.csv lists newest runs first and keeps older runs of a cell as history: the
    import keeps only the first row per (cell, model, method) (the older ones used to win the
    merge, which put the rows from before the BAS residual fix in coverage_all.csv)."""
    mod = _load()
    cell = {"design": "errors=hetero", "n": 20000, "p": 5, "eps": 1.0, "covariates": "gaussian",
            "errors": "hetero", "model": "linear", "method": "bas", "with_interval": 1.0,
            "width_ratio": 2.9}
    pd.DataFrame([{**cell, "reps": 500, "coverage": 0.962, "coverage_min": 0.932},
                  {**cell, "reps": 400, "coverage": 0.941, "coverage_min": 0.842}]
                 ).to_csv(tmp_path / "coverage.csv", index=False)
    pd.DataFrame([{"method": "glm-auto", "n": 20000, "p": 5, "eps": 1.0, "cov": "gaussian",
                   "reps": 10, "withheld_share": 0.0, "coverage": 0.95,
                   "median_width_ratio": 2.0}]).to_csv(tmp_path / "glm_coverage.csv",
                                                      index=False)
    table = mod.imported(tmp_path)
    lm = table[table["family"] == "lm"]
    assert len(lm) == 1 and lm["coverage_min"].iloc[0] == 0.932 and lm["reps"].iloc[0] == 500
