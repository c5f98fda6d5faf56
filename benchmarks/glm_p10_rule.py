"""dp_glm's default from 6 to 20 predictors: objective perturbation's inference share chosen
from public values and the released count (issue 16; design note "NN").

**Rule, fixed before any figure of a candidate** (this docstring is committed before the runs).

Candidates, in order (simplest first), all :func:`candidate_share` (committed with this rule
as ``dpstats.estimators.objpert.inference_share``, commit 1599201; moved here when no candidate
passed, the library unchanged): 0.10 up to 6 columns; above, the share whose ``mu`` is the
reference's (0.20 at 11 columns, 20,000 rows, fit eps 0.95) times ``(k/11)^1.5 * 20,000 /
n_hat``; lowered towards 0.10 until ``n_hat * mu`` at the fit's reduced eps is twice
``glm_auto``'s switch (``method="auto"``'s switch itself unchanged); at most ``cap``:

* ``cap0.25`` (the constants as committed), ``cap0.20``, ``cap0.15``;
* ``default``: the rule before (share 0.10 always; ``cap`` = 0.10).

Grid (derivation): n in {7,000, 10,000, 20,000, 50,000}, p (predictors) in {8, 10, 15, 20},
eps in {0.5, 1, 2}; glm_coverage.py's design (gaussian covariates, intercept -0.5, slopes of
norm 1.2 alternating), ``dp_glm(method="auto", select=None)``; 100 fits per cell (48 cells;
p = 5 is unchanged by construction: up to 6 columns the share is 0.10 and the switch is
untouched, checked by a test). Data seed ``7_300_000 + 1000 * cell index``, fit seed ``data
seed * 1000 + r``: each fit's data and ``random_state`` are shared by all settings (a setting
whose share equals the default's in a fit is the default's fit: not refitted).

Metrics per cell and setting: intervals share (fits with finite intervals for every
coefficient), coverage per coefficient of the model's coefficients (``conf_int``), pooled RMSE
of all coefficients over all fits and its ratio to the default's, fits with an RMSE (over its
coefficients) above 0.5 ("breakdowns"), the method chosen, the share used, and ``n_hat * mu``
over the switch (median).

Decision: adopt the first candidate that passes in every cell
(i) intervals in >= 80% of fits where objective perturbation is chosen (majority of fits),
    ``n_hat * mu`` is at least twice the switch (median over fits) and the wanted share is
    within the cap (the rule's own claim; cells outside are reported);
(ii) every coefficient's coverage in [0.93, 0.98] up to Monte Carlo error in cells where at
    least 20 fits have intervals: a miss counts if its one-sided binomial p-value at the edge
    is below 0.05 (unadjusted; as coverage_band.py);
(iii) pooled RMSE at most 1.05 x the default's, and no more breakdowns than the default, in
    every cell;
(iv) p <= 5 unchanged (by construction; test).
If none passes, nothing ships. Validation (fixed now): coverage.py ``--seed-offset 15000``,
500 fits, glm cell p=10 plus arms p = 8, 15, 20 at n = 20,000 and p = 10 at n = 10,000 and
eps 0.5 (this script, ``--part validate``, data seed ``9_100_000 + 1000 * arm``): confirmed if
(ii) holds in each cell with intervals, (i) holds where it applies, and (iii) holds against the
default on the same seeds; else nothing ships.

    nice -n 10 python benchmarks/glm_p10_rule.py --part derive --chunk 0/2 --out FILE.csv
    python benchmarks/glm_p10_rule.py --table FILE.csv ... [--out TABLE.csv]

Reads no real data.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.estimators import glm_auto, objpert  # noqa: E402
from dpstats.mechanisms.gdp import gdp_mu  # noqa: E402

CAPS = {"default": 0.10, "cap0.25": 0.25, "cap0.20": 0.20, "cap0.15": 0.15}
DERIVE = [(n, p, e) for n in (7_000, 10_000, 20_000, 50_000) for p in (8, 10, 15, 20)
          for e in (0.5, 1.0, 2.0)]
VALIDATE = [(20_000, 8, 1.0), (20_000, 15, 1.0), (20_000, 20, 1.0), (10_000, 10, 1.0),
            (20_000, 10, 0.5),
            # after the decision (information, no rule adopted): the p = 10 cell itself and
            # the derivation's failing cell, on these fresh seeds
            (20_000, 10, 1.0), (50_000, 20, 2.0)]
LOW, HIGH = 0.93, 0.98


#: The candidate's reference: the share that opened intervals in every fit at 11 columns,
#: n = 20,000, eps 1 (fit eps 0.95; design note 75: 500 fits, coverage 0.960).
SHARE_REF, REF_ROWS, REF_COLS, REF_EPS = 0.20, 20_000.0, 11, 0.95
#: The information's smallest eigenvalue falls like ``n / k`` (rows scaled by ``sqrt(k)``), a
#: k x k noise matrix's spectrum spreads like ``sqrt(k)``: the noise allowed is ``n / k^1.5``.
SHARE_POWER = 1.5
#: A share above 0.10 only while ``n_hat * mu`` at the fit's reduced eps is at least this many
#: times ``method="auto"``'s switch to objective perturbation.
HEADROOM = 2.0
BASE = 0.10


def candidate_share(k: int, eps: float, delta: float, n_hat: float | None, switch: float,
                    cap: float, headroom: float = HEADROOM) -> float:
    """The candidate rule's share of objective perturbation's ``(eps, delta)`` for the Fisher
    information (public ``k``, ``eps``, ``delta``, ``switch``; released ``n_hat``).

    0.10 up to 6 columns. From 7, the share whose Gaussian-DP ``mu`` is the reference's times
    ``(k / REF_COLS)^SHARE_POWER * REF_ROWS / n_hat``, within ``[0.10, cap]``, lowered (not
    below 0.10) until ``n_hat * mu`` at the eps and delta left to the fit, rescaled so that
    0.10 gives ``method="auto"``'s own ``n_hat * mu``, is at least ``headroom * switch``.

    >>> candidate_share(6, 0.95, 1e-5, 20_000.0, 1000.0, 0.25)
    0.1
    >>> round(candidate_share(11, 0.95, 1e-5, 20_000.0, 1354.0, 0.25), 3)
    0.2
    >>> candidate_share(11, 0.95, 1e-5, 7_000.0, 1354.0, 0.25)
    0.1
    """
    if k <= 6 or n_hat is None or not n_hat > 0:
        return BASE
    target = (gdp_mu(REF_EPS * SHARE_REF, delta * SHARE_REF)
              * (k / REF_COLS) ** SHARE_POWER * REF_ROWS / float(n_hat))

    def fit_ok(s: float) -> bool:
        keep = (1.0 - s) / (1.0 - BASE)
        return float(n_hat) * gdp_mu(eps * keep, min(delta * keep, 0.5)) >= headroom * switch

    def bisect(ok, lo: float, hi: float) -> tuple[float, float]:   # ok(lo), not ok(hi)
        for _ in range(40):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return lo, hi

    def short(s: float) -> bool:                        # s too small to meet the target
        return gdp_mu(eps * s, delta * s) < target

    if not fit_ok(BASE) or not short(BASE):
        return BASE
    share = cap if short(cap) else bisect(short, BASE, cap)[1]
    if not fit_ok(share):
        share = bisect(fit_ok, BASE, share)[0]
    return float(share)


def switch_of(k: int) -> float:
    return glm_auto.OBJPERT_CONSTANT * (k / 6.0) ** glm_auto.OBJPERT_POWER


def share_for(cap: float, k: int, eps: float, delta: float, n_hat: float) -> float:
    """The share the candidate with ``cap`` gives (post-processing of public values)."""
    return candidate_share(k, eps, delta, n_hat, switch_of(k), cap)


def fit(df, eps: float, seed: int, cap: float, record: list):
    """``dp_glm``'s default with objective perturbation's ``inference_share`` set by the
    candidate with ``cap`` (0.10: the library's default); ``record`` gets the
    objective-perturbation call's public inputs ``(k, eps, n_hat, share)``."""
    real_est = objpert.estimate

    def spy(X, y, **kw):
        k, n_hat = X.shape[1], kw.get("n_noisy")
        kw["inference_share"] = share_for(cap, k, kw["eps"], kw["delta"], n_hat)
        record.append((k, kw["eps"], n_hat, kw["inference_share"]))
        return real_est(X, y, **kw)

    objpert.estimate = spy
    try:
        formula = "y ~ " + " + ".join(c for c in df.columns if c != "y")
        return dp.dp_glm(formula, df, eps=eps, delta=gc.DELTA, select=None, random_state=seed)
    finally:
        objpert.estimate = real_est


def rows_of(res, beta, label, cell, r, setting, share, headroom):
    est = res.params.to_numpy()
    ci = res.conf_int().to_numpy()
    ok = bool(res.released) and np.isfinite(ci).all()
    return [{"cell": label, "n": cell[0], "p": cell[1], "eps": cell[2], "setting": setting,
             "rep": r, "coef": j, "truth": beta[j], "estimate": est[j], "lo": ci[j, 0],
             "hi": ci[j, 1], "released": ok, "method": res.method.split(" ")[0],
             "share": share, "headroom": headroom} for j in range(beta.size)]


def cell_data(cells: list, base: int, reps: int):
    """Each cell's ``reps`` data sets (glm_coverage.py's gaussian design, the cell's own seed
    ``base + 1000 i``): ``(label, cell, r, fit_seed, df, beta)``, a progress line per cell
    (shared with glm_box_share.py: the same data in both)."""
    for i, cell in cells:
        n, p, eps = cell
        seed = base + 1000 * i
        rng = np.random.default_rng(seed)
        label = f"n={n} p={p} eps={eps:g}"
        t0 = time.time()
        for r in range(reps):
            df, beta = gc.simulate({"n": n, "p": p, "eps": eps, "cov": "gaussian"}, "glm-auto",
                                   rng)
            yield label, cell, r, seed * 1000 + r, df, beta
        print(f"  {label}: {reps} fits [{time.time() - t0:.0f}s]", flush=True)


def run(cells: list, base: int, reps: int, settings: list[str]) -> pd.DataFrame:
    out = []
    for label, cell, r, fit_seed, df, beta in cell_data(cells, base, reps):
        p, eps = cell[1], cell[2]
        rec: list = []
        res = fit(df, eps, fit_seed, CAPS["default"], rec)
        k, e_fit, n_hat, _ = rec[-1] if rec else (p + 1, np.nan, np.nan, np.nan)
        head = (n_hat * gdp_mu(e_fit, gc.DELTA) / (glm_auto.OBJPERT_CONSTANT * (
            k / 6.0) ** glm_auto.OBJPERT_POWER)) if rec else np.nan
        out += rows_of(res, beta, label, cell, r, "default", 0.10 if rec else np.nan, head)
        for s in settings:
            share = share_for(CAPS[s], k, e_fit, gc.DELTA, n_hat) if rec else np.nan
            res_s = fit(df, eps, fit_seed, CAPS[s], []) if rec and share != 0.10 else res
            out += rows_of(res_s, beta, label, cell, r, s, share, head)
    return pd.DataFrame(out)


def _miss(cov: float, m: int) -> bool:
    k = round(cov * m)
    return bool(stats.binom.cdf(k, m, LOW) < 0.05 or stats.binom.sf(k - 1, m, HIGH) < 0.05)


def table(d: pd.DataFrame) -> pd.DataFrame:
    """Per cell and setting: the metrics and criteria of the module docstring."""
    d = d.assign(err2=(d["estimate"] - d["truth"]) ** 2,
                 cover=(d["lo"] <= d["truth"]) & (d["truth"] <= d["hi"]))
    out = []
    for (cell, setting), g in d.groupby(["cell", "setting"], sort=False):
        fits = g.groupby("rep").agg(rel=("released", "first"), m=("method", "first"),
                                    share=("share", "first"), head=("headroom", "first"),
                                    rmse=("err2", lambda x: np.sqrt(x.mean())))
        rel = g[g["released"]]
        m = rel["rep"].nunique()
        cov = rel.groupby("coef")["cover"].mean()
        misses = [j for j, c in cov.items() if _miss(c, m)] if m >= 20 else []
        out.append({"cell": cell, "setting": setting, "fits": len(fits),
                    "objpert": (fits["m"] == "objpert").mean(), "share": fits["share"].median(),
                    "head": fits["head"].median(), "intervals": fits["rel"].mean(),
                    "coverage": cov.mean() if m else np.nan,
                    "worst": cov.min() if m else np.nan, "best": cov.max() if m else np.nan,
                    "misses": ",".join(map(str, misses)),
                    "rmse": float(np.sqrt(g["err2"].mean())),
                    "breakdowns": int((fits["rmse"] > 0.5).sum())})
    t = pd.DataFrame(out)
    dflt = t[t["setting"] == "default"].set_index("cell")
    t["rmse_ratio"] = t["rmse"] / t["cell"].map(dflt["rmse"])
    t["more_breakdowns"] = t["breakdowns"] - t["cell"].map(dflt["breakdowns"])
    return t


def wanted(n: int, p: int, eps: float, head: float) -> float:
    """The rule's share without its cap and headroom (the share meeting the reference's
    noise), at the released count ``head * switch / mu`` (the fit's eps is 0.95 eps)."""
    k = int(p) + 1
    n_hat = head * switch_of(k) / gdp_mu(0.95 * eps, gc.DELTA)
    return candidate_share(k, 0.95 * eps, gc.DELTA, n_hat, switch_of(k), 0.99, headroom=0.0)


def decide(t: pd.DataFrame) -> pd.DataFrame:
    """Per candidate: the cells failing (i), (ii), (iii). (i) applies where objective
    perturbation is chosen, the median ``n_hat * mu`` is twice the switch and the wanted
    share (:func:`wanted`, at the median count) is within the cap."""
    rows = []
    t = t.assign(wanted=[wanted(*map(float, c.replace("=", " ").split()[1::2]), h)
                         if np.isfinite(h) else np.nan for c, h in zip(t["cell"], t["head"],
                                                                      strict=True)])
    for s, g in t[t["setting"] != "default"].groupby("setting", sort=False):
        cap = CAPS[s]
        claim = (g["objpert"] > 0.5) & (g["head"] >= 2.0) & (g["wanted"] <= cap + 1e-9)
        f1 = g[claim & (g["intervals"] < 0.8)]["cell"].tolist()
        f2 = g[g["misses"].fillna("") != ""]["cell"].tolist()
        f3 = g[(g["rmse_ratio"] > 1.05) | (g["more_breakdowns"] > 0)]["cell"].tolist()
        rows.append({"setting": s, "fail_i": f1, "fail_ii": f2, "fail_iii": f3,
                     "passes": not (f1 or f2 or f3)})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("derive", "validate"), default="derive")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--chunk", default="0/1", help="i/m: every m-th cell from the i-th")
    ap.add_argument("--settings", default="cap0.25,cap0.20,cap0.15")
    ap.add_argument("--out")
    ap.add_argument("--table", nargs="*", help="only summarise these CSV files")
    a = ap.parse_args(argv)
    pd.set_option("display.width", 250)
    return table_or_run(a, table, decide, run, (DERIVE, 7_300_000) if a.part == "derive"
                        else (VALIDATE, 9_100_000))


def table_or_run(a, table, decide, run, grid_base) -> int:
    """The scripts' common end (this one's and glm_box_share.py's): with ``--table``, the
    per-cell table of the given files and the decision; else the ``--chunk`` of the part's
    grid run and written to ``--out``."""
    if a.table:
        t = table(pd.concat(pd.read_csv(f) for f in a.table))
        if a.out:                                       # the per-cell table, e.g. results/
            t.round(4).to_csv(a.out, index=False)
        print(t.round(3).to_string(index=False))
        print(decide(t).to_string(index=False))
        return 0
    grid, base = grid_base
    i, m = (int(x) for x in a.chunk.split("/"))
    cells = [(j, c) for j, c in enumerate(grid) if j % m == i]
    d = run(cells, base, a.reps, [s for s in a.settings.split(",") if s])
    d.to_csv(a.out, index=False)
    print(table(d).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
