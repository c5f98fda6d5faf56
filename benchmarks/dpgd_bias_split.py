"""Where dp_lm(method="dpgd")'s interval misses come from (issue 16): per coefficient, the
error of the released fit split into the box's clipping bias (the least-squares fit of the
clipped label on the inputs clipped to the released box, minus the model's coefficient; it
includes the sampling error), the unfinished descent's bias (a noise-free run of the same
steps from 0 minus that fit) and the privacy noise (released minus noise-free run), with the
coverage of the released intervals of the model's coefficient (``cov``), of the box fit
(``cov_star``) and of the noise-free descent's end point (``cov_nf``), and the bootstrap's own
mean error (``Dm``). The convergence gate is opened (``MAX_LEFT`` 9) and, with ``--no-tail-gate``,
the skewed-tail gate too, so every fit releases (a diagnosis, not the shipped rule).

Data-independent simulation: the cells of benchmarks/glm_coverage.py (``lm-dpgd``), its own
seed (``--seed``, not the coverage benchmark's).

    nice -n 10 python benchmarks/dpgd_bias_split.py --reps 200 --no-tail-gate cov=skewed
    nice -n 10 python benchmarks/dpgd_bias_split.py --reps 100 n=100000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

import dpstats.estimators.dpgd as est_dpgd  # noqa: E402
import dpstats.estimators.inference.dpgd as inf_dpgd  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--no-tail-gate", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("cell", nargs="*", help="changes to glm_coverage's centre, e.g. cov=skewed")
    a = ap.parse_args(argv)
    inf_dpgd.MAX_LEFT = {"logistic": 9.0, "squared": 9.0}
    if a.no_tail_gate:
        inf_dpgd.TAIL_GATE = {"far": np.inf, "ratio": np.inf, "near": 0.0}
    cap: dict = {}
    draws, infer = inf_dpgd.error_draws, est_dpgd.dpgd_inference

    def spy_draws(*args, **kw):
        D = draws(*args, **kw)
        cap["Dm"] = D.mean(axis=0)
        return D

    def spy(loss, plan, U, y, theta, design, s, **kw):
        cap.update(U=U, y=y, design=design, **kw)
        return infer(loss, plan, U, y, theta, design, s, **kw)

    inf_dpgd.error_draws, est_dpgd.dpgd_inference = spy_draws, spy
    cell = dict(gc.CENTRE)
    for kv in a.cell:
        k, v = kv.split("=")
        cell[k] = v if k == "cov" else type(gc.CENTRE[k])(v)
    rng = np.random.default_rng(a.seed)
    rows = []
    for r in range(a.reps):
        df, beta = gc.simulate(cell, "lm-dpgd", rng)
        res = gc.fit("lm-dpgd", df, cell, 5000 + r)
        d, kept = cap["design"], list(cap["design"].kept)
        Uk, y = cap["U"][:, kept], cap["y"]

        def full(tk, d=d, kept=kept):
            t = np.zeros(d.mid.size)
            t[kept] = tk
            return cap["to_original"](t)

        star = full(np.linalg.lstsq(Uk, y, rcond=None)[0])
        t = np.zeros(len(kept))
        for _ in range(cap["T"]):
            t -= cap["lr"] * est_dpgd._gradient_sum(Uk, y, t, "squared", 1.0) / cap["n_hat"]
        nf = full(t)
        est, bse = res.params.to_numpy(), res.bse.to_numpy()
        rows += [{"rep": r, "j": j, "beta": beta[j], "est": est[j], "bse": bse[j],
                  "star": star[j], "nf": nf[j], "Dm": cap.get("Dm", np.full(len(beta),
                                                                            np.nan))[j]}
                 for j in range(len(beta))]
    d = pd.DataFrame(rows)
    d["clip_bias"], d["descent_bias"], d["noise"] = d.star - d.beta, d.nf - d.star, d.est - d.nf
    d["err"] = d.est - d.beta
    half = 1.959963984540054 * d.bse
    d["cov"] = (d.err.abs() <= half)
    d["cov_star"] = ((d.est - d.star).abs() <= half)
    d["cov_nf"] = ((d.est - d.nf).abs() <= half)
    g = d.groupby("j")
    print(cell, f"reps {a.reps}, seed {a.seed}")
    with pd.option_context("display.width", 200):
        print(pd.concat([g[["beta", "err", "Dm", "clip_bias", "descent_bias", "noise",
                            "bse", "cov", "cov_star", "cov_nf"]].mean(),
                         g.err.std().rename("sd_err"), g.bse.std().rename("sd_bse")],
                        axis=1).round(4).to_string())
    if a.out:
        d.to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
