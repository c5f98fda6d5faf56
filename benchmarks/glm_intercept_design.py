"""dp_glm's default intervals against the intercept of the design (issue 16): the logistic
cell of ``benchmarks/interval_coverage.py`` (n = 20,000, p = 5, eps = 1, Gaussian covariates,
slopes 1, -1/2, 1/3, -1/4, 1/5) with the intercept moved (-0.5, +0.5, +1), through dp_glm's
default call (``select=None``).

Per intercept and coefficient it prints the coverage of the released intervals
(``conf_int``, centred at ``params - bias``), the mean and sd of ``z = (centre - truth) /
se``, and the same for the interval ``params +- 1.96 se`` (the centre without the released
bias: what ``interval_coverage.py``'s ``one_rep`` scored before note 73), the mean released
bias in standard errors, and ``z_vs_mle``: the centre's distance from the non-private maximum
likelihood fit on the same data (statsmodels Logit), in standard errors (the part of z that is
the private fit's, not sampling). ``--eps`` moves the cell's eps.

    nice -n 10 python benchmarks/glm_intercept_design.py --reps 100 --intercepts=-0.5,0.5,1 \\
        --eps 1 --out benchmarks/results/glm_intercept_design.csv
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

import dpstats as dp

N, P, EPS, DELTA = 20_000, 5, 1.0, 1e-5


def slopes(p: int) -> np.ndarray:
    """``interval_coverage.truth``'s slopes: 1, -1/2, 1/3, ..."""
    return np.array([(-1) ** j / (j + 1) for j in range(p)])


def design_fit(b0: float, eps: float, rep: int):
    """Fit ``rep`` of the design at intercept ``b0`` with dp_glm's default: ``(X, y, beta,
    fit)`` (the design's own seeds)."""
    rng = np.random.default_rng([rep, int(round(b0 * 100)) % 1000, 16])
    X = rng.normal(size=(N, P))
    beta = np.r_[b0, slopes(P)]
    y = (rng.random(N) < 1 / (1 + np.exp(-(b0 + X @ beta[1:])))).astype(float)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(P)])
    df["y"] = y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dp.dp_glm("y ~ .", df, eps=eps, delta=DELTA, select=None,
                        random_state=int(rng.integers(2**31)))
    return X, y, beta, fit


def one_fit(b0: float, rep: int, eps: float = EPS) -> dict | None:
    X, y, beta, fit = design_fit(b0, eps, rep)
    se = fit.bse.to_numpy()
    if not (fit.released and np.isfinite(se).all()):
        return None
    ci = fit.conf_int().to_numpy()
    params = fit.params.to_numpy()
    centre = fit.params_bias_corrected.to_numpy()
    mle = np.asarray(sm.Logit(y, sm.add_constant(X)).fit(disp=0).params)
    return {"z_vs_mle": (centre - mle) / se, "cover": (ci[:, 0] <= beta) & (beta <= ci[:, 1]),
            "z": (centre - beta) / se, "z_params": (params - beta) / se,
            "bias_se": (params - centre) / se, "method": fit.method}


def run(b0: float, reps: int, eps: float = EPS) -> pd.DataFrame:
    rows = [r for r in (one_fit(b0, i, eps) for i in range(reps)) if r is not None]
    cover = np.array([r["cover"] for r in rows], dtype=float)
    z = np.array([r["z"] for r in rows])
    zp = np.array([r["z_params"] for r in rows])
    bs = np.array([r["bias_se"] for r in rows])
    names = ["Intercept"] + [f"x{j + 1}" for j in range(P)]
    return pd.DataFrame({
        "intercept": b0, "eps": eps, "coef": names, "fits": len(rows), "coverage": cover.mean(0),
        "z_mean": z.mean(0), "z_sd": z.std(0, ddof=1),
        "coverage_params": (np.abs(zp) <= 1.959964).mean(0),
        "z_params_mean": zp.mean(0), "bias_in_se": bs.mean(0),
        "z_vs_mle": np.array([r["z_vs_mle"] for r in rows]).mean(0)})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--intercepts", default="-0.5,0.5,1")
    ap.add_argument("--eps", type=float, default=EPS)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    out = []
    for b0 in (float(v) for v in a.intercepts.split(",")):
        t = run(b0, a.reps, a.eps)
        print(t.to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
        out.append(t)
    if a.out:
        pd.concat(out).to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
