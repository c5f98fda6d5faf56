"""dp_lm DP-GD: each fit's error split against the exact fits of its own data (issue 16;
design-notes.md, "dp_lm DP-GD: the clip estimate's error").

Reads fits recorded by ``dpgd_interval_variants.py --method lm-dpgd --save FILE.pkl`` (cells by
``glm_coverage.CELLS`` index; each fit carries its released inference inputs and, for diagnosis
only, the exact Gram matrix ``C`` of its scaled rows and the fixed point ``t_0`` of its descent,
the least-squares fit of the clipped label on the clipped inputs). The data of each fit are
re-simulated from the cell's seed (``FILE:OFFSET``, the recording's ``--seed-offset``) and
matched by its ``rep``, which gives the non-private least-squares fit ``b_ols`` of the raw
rows. On the original scale (``M`` the fit's map), per coefficient, in units of the model's
sampling sd ``s_0 (M C^-1 M')^(1/2)``:

* ``S = b_ols - beta``: sampling error;
* ``R = orig(t_0) - b_ols``: the realised shift of the clipped fit (label and box clips);
* ``P``: the plug-in shift (:func:`~dpstats.estimators.inference.dpgd_label.clip_bias`, mean
  over the plausible curvatures), and ``R - P`` the clip estimate's error;
* ``B``: the descent's exact bias minus its plug-in; ``N``: the propagated gradient noise
  (units of its own sd);

and the correlation of ``S``, ``R``, ``P`` with the released label range and box
(``y_mid``, ``y_half``, each column's ``mid``, ``half``) and with the noise ``N``; the
coverage and se of the library's rule (``clip`` of ``dpgd_lm_variants.py``, rebuilt from the
recorded inputs: the offset-900 fits were recorded before it).

    python benchmarks/dpgd_clip_error.py FILE.pkl:OFFSET [FILE2.pkl:OFFSET ...] [--only 5] \
        [--pool]

(``--pool``: one report per cell over all files.)

Reads no real data.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpgd_lm_diagnose as dg  # noqa: E402
import dpgd_lm_variants as lv  # noqa: E402
import glm_coverage as gc  # noqa: E402

import dpstats.estimators.inference.dpgd as D  # noqa: E402
from dpstats.estimators.inference.dpgd_label import clip_bias  # noqa: E402
from dpstats.estimators.inference.mixture import Z95  # noqa: E402


def design_of(f: dict) -> SimpleNamespace:
    """The recorded design, its histogram where the library reads it (``bounds.hist``)."""
    fields = dict(f["design"])
    hist = fields.pop("hist", None)
    return SimpleNamespace(**fields, bounds=SimpleNamespace(hist=hist))


def raw_ols(i: int, offset: int, reps: set) -> dict:
    """``{rep: b_ols}``: the least-squares fit of each recorded fit's raw rows."""
    cell = gc.CELLS[i]
    rng = np.random.default_rng(1000 + 17 * i + offset)
    out = {}
    for r in range(max(reps) + 1):
        df, _ = gc.simulate(cell, "lm-dpgd", rng)
        if r in reps:
            X = np.c_[np.ones(len(df)), gc.design(df)]
            out[r] = np.linalg.lstsq(X, df["y"].to_numpy(), rcond=None)[0]
    return out


def split(f: dict, b_ols: np.ndarray) -> dict:
    d0 = dg.descent_parts(f)
    Cs, theta, sigma2, kw, M, beta, est = d0.Cs, d0.theta, d0.sigma2, d0.kw, d0.M, d0.beta, d0.est
    C, t0, lam, Q, b_unit, s0 = d0.C, d0.t0, d0.lam, d0.Q, d0.b_unit, d0.s0
    sd = np.sqrt(np.diag(s0 * M @ np.linalg.inv(C) @ M.T))
    bias = D._gd_model(Cs, theta, sigma2, **kw)[0]
    d = design_of(f)
    clip = clip_bias(Cs, theta, bias, sigma2, d, list(d.kept))
    geo = (1.0 - (1.0 - kw["lr"] * lam / kw["n_hat"]) ** (2 * kw["T"])) / (
        1.0 - (1.0 - kw["lr"] * lam / kw["n_hat"]) ** 2)
    priv = (Q * ((kw["lr"] * kw["sigma_g"] / kw["n_hat"]) ** 2 * geo)) @ Q.T
    o_t0 = est - M @ (theta - t0)
    kept = list(d.kept)[:-1]
    lo, hi = lv.interval(f, "clip")         # the library's rule (note 77), rebuilt
    return {"S": (b_ols - beta) / sd, "R": (o_t0 - b_ols) / sd,
            "P": (clip @ M.T).mean(0) / sd, "Psd": (clip @ M.T).std(0) / sd,
            "B": (M @ b_unit - (bias @ M.T).mean(0)) / sd,
            "N": M @ (theta - t0 - b_unit) / np.sqrt(np.diag(M @ priv @ M.T)),
            "Nsd": np.sqrt(np.diag(M @ priv @ M.T)) / sd,
            "ratio": (hi - lo) / (2 * Z95) / np.sqrt(sd ** 2 + np.diag(M @ priv @ M.T)),
            "hit": (lo <= beta) & (beta <= hi),
            "zc": (est - beta - (clip @ M.T).mean(0) - (bias @ M.T).mean(0)) / np.sqrt(
                sd ** 2 + np.diag(M @ priv @ M.T)),
            "box": np.r_[d.y_mid, d.y_half, np.asarray(d.mid)[kept], np.asarray(d.half)[kept]]}


def report(rows: list[dict]) -> None:
    g = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    r2 = lambda v: np.round(v, 2).tolist()      # noqa: E731
    print(f"  fits {len(rows)} (coefficients Int, x0 ..; units: the model's sampling sd)")
    for k in ("S", "R", "P"):
        print(f"  {k:8s} mean {r2(g[k].mean(0))} sd {r2(g[k].std(0))}")
    for name, v in (("R - P", g["R"] - g["P"]), ("S + R", g["S"] + g["R"]),
                    ("S+R-P", g["S"] + g["R"] - g["P"]), ("B", g["B"]), ("N / own", g["N"])):
        print(f"  {name:8s} mean {r2(v.mean(0))} sd {r2(v.std(0))}")
    print(f"  P's sd over the plausible curvatures (median) {r2(np.median(g['Psd'], 0))}; "
          f"gradient noise sd / sampling sd (median) {r2(np.median(g['Nsd'], 0))}")
    print(f"  released se / exact total sd: median {r2(np.median(g['ratio'], 0))} sd "
          f"{r2(g['ratio'].std(0))}; (error - plug-ins) / exact total sd: mean "
          f"{r2(g['zc'].mean(0))} sd {r2(g['zc'].std(0))}; coverage {r2(g['hit'].mean(0))}")
    q = np.quantile(g["ratio"][:, 0], [0.2, 0.4, 0.6, 0.8])
    b = np.searchsorted(q, g["ratio"][:, 0])
    print("  intercept's coverage by quintile of its se ratio: " + ", ".join(
        f"{g['ratio'][b == k, 0].mean():.2f}: {g['hit'][b == k, 0].mean():.3f}" for k in range(5)))
    c = lambda a, b: np.array([np.corrcoef(a[:, j], b[:, j])[0, 1]        # noqa: E731
                               for j in range(a.shape[1])])
    print(f"  corr(S, R) {r2(c(g['S'], g['R']))}  corr(R, P) {r2(c(g['R'], g['P']))}  "
          f"corr(S, P) {r2(c(g['S'], g['P']))}  corr(N, P) {r2(c(g['N'], g['P']))}")
    names = ["y_mid", "y_half"] + [f"mid{j}" for j in range((g["box"].shape[1] - 2) // 2)] \
        + [f"half{j}" for j in range((g["box"].shape[1] - 2) // 2)]
    for k in ("S", "R", "P"):
        cors = [np.corrcoef(g[k][:, 0], g["box"][:, m])[0, 1] for m in range(len(names))]
        print(f"  intercept's {k} against the released range and box: "
              + ", ".join(f"{n} {v:+.2f}" for n, v in zip(names, cors, strict=True)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="+", help="FILE.pkl:OFFSET")
    ap.add_argument("--only", default=None)
    ap.add_argument("--pool", action="store_true", help="one report per cell over the files")
    a = ap.parse_args(argv)
    pooled: dict = {}
    for spec in a.src:
        path, offset = spec.rsplit(":", 1)
        for i, fits in pickle.load(open(path, "rb")).items():
            if a.only is not None and str(i) not in a.only.split(","):
                continue
            fits = [f for f in fits if f.get("exact") and f.get("design")]
            ols = raw_ols(int(i), int(offset), {f["rep"] for f in fits})
            rows = [split(f, ols[f["rep"]]) for f in fits]
            pooled.setdefault(int(i), []).extend(rows)
            if not a.pool:
                print(f"{Path(path).name} cell {i} (offset {offset}): {len(fits)} fits")
                report(rows)
    for i, rows in pooled.items() if a.pool else ():
        print(f"cell {i}, {len(a.src)} files pooled")
        report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
