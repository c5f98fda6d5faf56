"""Where the bias of Boosted AdaSSP's intervals comes from: x-winsorizing at the released box,
the label's released range, and the residual clip of the boosting rounds (issue 16).

For each cell (the covariate/error designs of interval_coverage.py, at several n and eps) and
each of ``--reps`` data sets: release the bounds exactly as BAS does (the same GDP plan and
histogram release), then compute the **noise-free** fixed point of the boosting on a large
sample of the same population (``--pop`` rows) under each clipping separately and together:

* ``x``: columns winsorized at the released box (rows mapped, y not clipped, no residual clip);
* ``y``: the label clipped to its released range;
* ``r``: residuals clipped at 1 on the mapped scale (a Huber fixed point);
* ``xyr``: all three (what BAS targeted before issue 16);
* ``xr``: x winsorized and residual clip, label not clipped;
* ``box=K``: BAS with ``residuals="unclipped"`` (the default since issue 16): the released
  gradient's rows are clipped to the box, the residuals are computed on the rows and label
  clipped to K half-widths of the box about its centre (``bas.RESID_BOX``).

``--method adassp``: the bounds are released as AdaSSP releases them (its own share of eps and
delta), the standard error is AdaSSP's, and the targets are least squares (AdaSSP has no
residual clip): ``x``, ``y`` and ``xy`` (both: what AdaSSP's intervals are centred on), and
``wide=K``: x and the label clipped at K half-widths about the box's centre (a wider box),
``ywide=K``: x at the box, only the label's range K times wider.

Bias is reported in units of the coefficient's BAS standard error in that cell (the median
bootstrap SE of ``--se-fits`` real fits, before the inflation), per coefficient: the worst
(largest |bias/SE|) coefficient is shown. Prints a table with progress; writes
benchmarks/results/bas_clipping_bias.csv.

    nice python benchmarks/bas_clipping_bias.py [--reps 5] [--pop 400000]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interval_coverage import CENTRE, simulate  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "bas_clipping_bias.csv"


def released_design(df: pd.DataFrame, eps: float, seed: int, method: str = "bas"):
    """The bounded design BAS (or AdaSSP) would use (its own bounds release; nothing else
    released)."""
    from dpstats.estimators import adassp, bas
    from dpstats.estimators.bounded import budgeted_design, plan_bounds
    from dpstats.estimators.inference.ssp import inference_budget
    from dpstats.validation import validate_options
    X = np.c_[np.ones(len(df)), df.drop(columns="y").to_numpy()]
    y = df["y"].to_numpy()
    opt = validate_options((adassp if method == "adassp" else bas).OPTIONS, {})
    inf = inference_budget(eps, 1e-5, opt)
    plan = plan_bounds(X, "auto", intercept_col=0)
    if method == "adassp":
        design, _, _ = budgeted_design(
            X, y, plan, method=opt["bounds_method"], share=opt["bounds_share"],
            eps=eps - inf["eps"], delta=1e-5 - inf["delta"], q=opt["q"],
            rng=np.random.default_rng(seed), ledger=None, stage="regression")
        return design
    design, _, _ = bas._design_and_plan(X, y, plan, opt, eps - inf["eps"], 1e-5 - inf["delta"],
                                        np.random.default_rng(seed), None, "regression")
    return design


def fixed_point(X, y, rclip: float | None, iters: int = 200, Z=None) -> np.ndarray:
    """Noise-free boosting to convergence: theta += G^-1 Z'clip(y - X theta), G = Z'Z
    (Z = X unless given: the rows the released gradient multiplies)."""
    Z = X if Z is None else Z
    G = np.linalg.inv(Z.T @ Z)
    theta = G @ (Z.T @ y) if rclip is None else np.zeros(X.shape[1])
    if rclip is None:
        return theta
    for _ in range(iters):
        step = G @ (Z.T @ np.clip(y - X @ theta, -rclip, rclip))
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta


def decompose(design, pop: pd.DataFrame, boxes=(2.0 ** 20,), method: str = "bas") -> dict:
    """Original-scale coefficients of each clipped target on the population sample."""
    from dpstats.mechanisms.bounds import to_unit
    X = np.c_[np.ones(len(pop)), pop.drop(columns="y").to_numpy()]
    y = pop["y"].to_numpy()
    half, mid = design.half, design.mid
    Xlin = (X - mid) / half                  # mapped, not clipped
    Xlin[:, 0] = 1.0
    Xclip = Xlin.copy()
    Xclip[:, 1:] = to_unit(X[:, 1:], design.clip_lo[1:], design.clip_hi[1:])
    ylin = (y - design.y_mid) / design.y_half
    yclip = np.clip(ylin, -1.0, 1.0)
    out = {}
    if method == "adassp":          # least squares: no residual clip
        for key, (A, b) in {"x": (Xclip, ylin), "y": (Xlin, yclip), "xy": (Xclip, yclip),
                            "none": (Xlin, ylin)}.items():
            out[key] = design.to_original(fixed_point(A, b, None))
        for K in boxes:
            out[f"wide={K:g}"] = design.to_original(fixed_point(
                np.clip(Xlin, -K, K), np.clip(ylin, -K, K), None))
            out[f"ywide={K:g}"] = design.to_original(fixed_point(Xclip, np.clip(ylin, -K, K),
                                                                 None))
        return out
    for key, (A, b, r) in {"x": (Xclip, ylin, None), "y": (Xlin, yclip, None),
                           "r": (Xlin, ylin, 1.0), "xr": (Xclip, ylin, 1.0),
                           "xyr": (Xclip, yclip, 1.0), "none": (Xlin, ylin, None)}.items():
        out[key] = design.to_original(fixed_point(A, b, r))
    # residuals="unclipped" (issue 16): gradient rows clipped, residuals on the rows clipped
    # to K half-widths of the box (bas.RESID_BOX)
    for K in boxes:
        XK = np.clip(Xlin, -K, K)
        out[f"box={K:g}"] = design.to_original(fixed_point(XK, np.clip(ylin, -K, K), 1.0, Z=Xclip))
    return out


def bas_se(cell: dict, fits: int, method: str = "bas") -> np.ndarray:
    """Median standard error of ``fits`` real fits, before the method's inflation."""
    import dpstats as dp
    from dpstats.estimators.inference.gate import INFLATION
    ses = []
    for s in range(fits):
        df = simulate(cell, np.random.default_rng([99, s]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dp.dp_lm("y ~ .", df, eps=cell["eps"], delta=1e-5, method=method,
                           select=None, random_state=s)
        ses.append(fit.bse.to_numpy() / INFLATION[method])
    return np.nanmedian(np.array(ses), axis=0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pop", type=int, default=400_000)
    ap.add_argument("--se-fits", type=int, default=5)
    ap.add_argument("--cells", default="skewed,hetero,t3,centre")
    ap.add_argument("--ns", default="20000,200000")
    ap.add_argument("--eps", default="1,4")
    ap.add_argument("--boxes", default="2,3,1048576",
                    help="values of bas.RESID_BOX for the 'box=K' targets")
    ap.add_argument("--method", default="bas", choices=["bas", "adassp"])
    ap.add_argument("--out", default=None, help=f"default {OUT} (bas), ..._adassp.csv")
    a = ap.parse_args(argv)
    if a.out is None:
        a.out = str(OUT if a.method == "bas" else OUT.with_name("adassp_clipping_bias.csv"))
    designs = {"centre": {}, "skewed": {"covariates": "skewed"}, "hetero": {"errors": "hetero"},
               "t3": {"errors": "t3"}, "binary": {"covariates": "binary"}}
    rows = []
    print(f"{'cell':8s} {'n':>7s} {'eps':>4s}  worst bias/SE per target (coef)", flush=True)
    for name in a.cells.split(","):
        for n in [int(float(v)) for v in a.ns.split(",")]:
            for eps in [float(v) for v in a.eps.split(",")]:
                cell = {**CENTRE, **designs[name], "n": n, "eps": eps}
                t0 = time.perf_counter()
                se = bas_se(cell, a.se_fits, a.method)
                pop = simulate({**cell, "n": a.pop}, np.random.default_rng([7, n]))
                ols = decompose_ols(pop)
                acc = {}
                for rep in range(a.reps):
                    df = simulate(cell, np.random.default_rng([rep, n, int(eps * 10)]))
                    d = released_design(df, eps, rep, a.method)
                    boxes = [float(b) for b in a.boxes.split(",")]
                    for k, v in decompose(d, pop, boxes, a.method).items():
                        acc.setdefault(k, []).append(v)
                    acc.setdefault("xhi", []).append(d.clip_hi[1:])
                    acc.setdefault("yhalf", []).append([d.y_half])
                z = {k: (np.mean(v, axis=0) - ols) / se for k, v in acc.items()
                     if k not in ("xhi", "yhalf")}
                row = {"cell": name, "n": n, "eps": eps,
                       "y_half": float(np.mean(acc["yhalf"])),
                       "x1_hi": float(np.mean(acc["xhi"], axis=0)[0]),
                       "se_x1": float(se[1]), "sec": time.perf_counter() - t0}
                for k, v in z.items():
                    j = int(np.nanargmax(np.abs(v)))
                    row[f"{k}_worst"] = float(v[j])
                    row[f"{k}_coef"] = j
                    row[f"{k}_x1"] = float(v[1])
                rows.append(row)
                print(f"{name:8s} {n:7d} {eps:4g}  " + "  ".join(
                    f"{k}:{row[k + '_worst']:+.2f}({row[k + '_coef']})" for k in z)
                    + f"  y_half {row['y_half']:.2f} x1_hi {row['x1_hi']:.2f}"
                    f"  [{time.perf_counter() - t0:.0f}s]", flush=True)
                pd.DataFrame(rows).to_csv(a.out, index=False)
    print(f"wrote {a.out}")


def decompose_ols(pop: pd.DataFrame) -> np.ndarray:
    X = np.c_[np.ones(len(pop)), pop.drop(columns="y").to_numpy()]
    return np.linalg.lstsq(X, pop["y"].to_numpy(), rcond=None)[0]


if __name__ == "__main__":
    main()
