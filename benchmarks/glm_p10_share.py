"""What opens dp_glm's default intervals at p = 10 (issue 16): the inference share of objective
perturbation against its cost to the point estimate, and the positive-definite gate relaxed.

Runs ``glm_coverage.py``'s cells with the same data and fit seeds as ``coverage.py --families
glm --methods glm-auto`` (cell ``i``: data seed ``1000 + 17 i``, fit seed ``seed * 1000 + r``).
Each replication's data are fitted once per inference share (``dp_glm``'s default,
``method="auto"``, with objective perturbation's ``inference_share`` set by wrapping
:func:`dpstats.estimators.objpert.estimate`; ``"auto"`` itself takes no options), so the shares
are compared on the same data and the same random stream. Per share it reports the share of
fits with intervals, coverage of the model's coefficients per coefficient (``conf_int``), the
median width against the non-private Logit interval (first ``--baseline-reps`` replications),
and the point estimate's RMSE and mean ``|error|`` against the truth, and relative to the first
share (all fits, with or without intervals).

The zero-budget variant (``--pd``): the first share's fits record what
:func:`~dpstats.estimators.inference.glm.glm_inference` receives (released values only) and are
gated again with :data:`~dpstats.estimators.inference.glm.PD_SHARE` set to each value: the
intervals of the fits a looser gate opens (post-processing; no refit). The rule at 0.95 equals
the fits' own intervals (checked: ``pd0.95`` is printed beside the first share).

    nice -n 10 python benchmarks/glm_p10_share.py --cell 4 --reps 200 \\
        --shares 0.10,0.15,0.20,0.30 --pd 0.95,0.8,0.5 --out FILE.csv

(``--cell``: 0 centre, 1 n = 5,000, 4 p = 10; ``--n``, ``--p``, ``--eps`` move the cell, with
its seeds; ``--method objpert`` fits objective perturbation explicitly, for n = 5,000 where
``"auto"`` picks output perturbation.) Writes one
row per fit, setting and coefficient to ``--out``; :func:`table` summarises such a file.
Reads no real data.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

import dpstats as dp  # noqa: E402
from dpstats.estimators import objpert  # noqa: E402
from dpstats.estimators.inference import glm as G  # noqa: E402

Z = 1.959963984540054


def fit(df, cell: dict, seed: int, share: float, method: str, record: list | None):
    """One fit of ``df`` with objective perturbation's ``inference_share`` = ``share``;
    ``record`` collects the inputs of :func:`glm_inference` (released values)."""
    real_est, real_gi = objpert.estimate, G.glm_inference

    def spy_gi(kind, **kw):
        if record is not None:
            record.append(kw)
        return real_gi(kind, **kw)

    objpert.estimate = functools.partial(real_est, inference_share=share)
    G.glm_inference = spy_gi
    try:
        formula = "y ~ " + " + ".join(c for c in df.columns if c != "y")
        return dp.dp_glm(formula, df, eps=cell["eps"], delta=gc.DELTA, method=method,
                         select=None, random_state=seed)
    finally:
        objpert.estimate, G.glm_inference = real_est, real_gi


def regate(kw: dict, pd_share: float) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lo, hi)`` of the error ``params - truth`` from the recorded inputs with the gate at
    ``pd_share`` (None: gated)."""
    old = G.PD_SHARE
    G.PD_SHARE = pd_share
    try:
        inf = G.glm_inference("objpert", **kw)
    finally:
        G.PD_SHARE = old
    se = np.sqrt(np.diag(inf.cov))
    if not np.isfinite(se).all():
        return None
    centre = np.zeros_like(se) if inf.bias is None else np.asarray(inf.bias)
    return centre - Z * se, centre + Z * se


def run(i: int, reps: int, shares: list[float], pds: list[float], method: str,
        baseline_reps: int, offset: int = 0, moved: dict | None = None) -> pd.DataFrame:
    """Cell ``i`` of ``glm_coverage.CELLS`` (``moved``: its n, p or eps replaced; the cell's
    seeds plus ``offset``)."""
    cell, seed = {**gc.CELLS[i], **(moved or {})}, 1000 + 17 * i + offset
    label = str(i) + "".join(f" {k}={v}" for k, v in (moved or {}).items())
    rng = np.random.default_rng(seed)
    rows, base = [], []
    t0 = time.time()
    for r in range(reps):
        df, beta = gc.simulate(cell, "glm-auto", rng)
        if r < baseline_reps:
            base.append(gc.baseline_width("glm-auto", df))
        for k, share in enumerate(shares):
            rec: list = []
            res = fit(df, cell, seed * 1000 + r, share, method, rec if k == 0 else None)
            est = res.params.to_numpy()
            ci = res.conf_int().to_numpy()
            ok = bool(res.released) and np.isfinite(ci).all()
            sets = [(f"share{share:.2f}", ci[:, 0], ci[:, 1], ok)]
            if k == 0:
                for q in pds:
                    lh = regate(rec[-1], q) if rec else None
                    lo, hi = (est - lh[1], est - lh[0]) if lh is not None else (ci[:, 0] * np.nan,
                                                                                ci[:, 1] * np.nan)
                    sets.append((f"pd{q:.2f}", lo, hi, lh is not None))
            for name, lo, hi, rel in sets:
                rows.extend({"cell": label, "n": cell["n"], "p": cell["p"], "eps": cell["eps"],
                             "setting": name, "rep": r, "coef": j, "truth": beta[j],
                             "estimate": est[j], "lo": lo[j], "hi": hi[j], "released": rel,
                             "method": res.method.split(" ")[0]} for j in range(beta.size))
        if (r + 1) % 25 == 0:
            print(f"  cell {i}: {r + 1}/{reps} [{time.time() - t0:.0f}s]", flush=True)
    out = pd.DataFrame(rows)
    bw = np.median(np.array(base), axis=0)
    out["baseline_width"] = bw[out["coef"].to_numpy()]
    return out


def table(d: pd.DataFrame) -> pd.DataFrame:
    """Per cell and setting: intervals share, coverage overall (worst - best), width / Logit,
    RMSE, mean |error|, and RMSE against the cell's first share."""
    d = d.assign(err=d["estimate"] - d["truth"],
                 cover=(d["lo"] <= d["truth"]) & (d["truth"] <= d["hi"]),
                 wr=(d["hi"] - d["lo"]) / d["baseline_width"])
    out = []
    for (cell, setting), g in d.groupby(["cell", "setting"], sort=False):
        rel = g[g["released"]]
        cov = rel.groupby("coef")["cover"].mean()
        out.append({"cell": cell, "n": g["n"].iat[0], "p": g["p"].iat[0], "setting": setting,
                    "fits": g["rep"].nunique(), "intervals": g.groupby("rep")["released"].first()
                    .mean(), "coverage": cov.mean(), "worst": cov.min(), "best": cov.max(),
                    "width_x": rel.groupby("coef")["wr"].median().median(),
                    "rmse": float(np.sqrt((g["err"] ** 2).mean())),
                    "mae": float(g["err"].abs().mean()),
                    "rmse_worst_coef": float(np.sqrt((g["err"] ** 2).groupby(g["coef"]).mean())
                                             .max())})
    t = pd.DataFrame(out)
    first = t[t["setting"].str.startswith("share")].groupby("cell")["rmse"].first()
    t["rmse_vs_first"] = t["rmse"] / t["cell"].map(first)
    t[["slopes_vs_first", "ratio_lo", "ratio_hi"]] = [
        ratio(d[d["cell"] == c], s) for c, s in zip(t["cell"], t["setting"], strict=True)]
    return t


def ratio(d: pd.DataFrame, setting: str, boot: int = 2000) -> tuple[float, float, float]:
    """The slopes' RMSE under ``setting`` over the first share's on the same fits, and a
    paired bootstrap 95% interval (over replications) of the all-coefficient ratio."""
    first = d["setting"].iat[0]
    sq = (d["estimate"] - d["truth"]) ** 2
    per = sq.groupby([d["setting"], d["rep"]]).sum().unstack(0)
    slope = sq[d["coef"] > 0].groupby(d["setting"]).sum()
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(per), size=(boot, len(per)))
    b = np.sqrt(per[setting].to_numpy()[idx].sum(1) / per[first].to_numpy()[idx].sum(1))
    return (float(np.sqrt(slope[setting] / slope[first])), *np.quantile(b, [0.025, 0.975]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", type=int, default=4)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--shares", default="0.10,0.15,0.20,0.30")
    ap.add_argument("--pd", default="0.95,0.8,0.5", help="gates re-applied to the first share")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--baseline-reps", type=int, default=20)
    ap.add_argument("--n", type=int, help="replace the cell's n (and --p, --eps)")
    ap.add_argument("--p", type=int)
    ap.add_argument("--eps", type=float)
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="added to the cell's seed (as coverage.py's): fresh data")
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", nargs="*", help="only summarise these CSV files")
    a = ap.parse_args(argv)
    if a.table:
        print(table(pd.concat(pd.read_csv(f) for f in a.table)).round(4).to_string(index=False))
        return 0
    shares = [float(s) for s in a.shares.split(",")]
    pds = [float(s) for s in a.pd.split(",")] if a.pd else []
    d = run(a.cell, a.reps, shares, pds, a.method, a.baseline_reps, a.seed_offset,
            {k: getattr(a, k) for k in ("n", "p", "eps") if getattr(a, k) is not None})
    d.to_csv(a.out, index=False)
    print(table(d).round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
