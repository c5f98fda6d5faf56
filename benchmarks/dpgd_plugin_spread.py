"""Is the logistic DP-GD's bias plug-in spread over the plausible curvatures as large as its
real error from the curvature's noise? (issue 16; a diagnosis, nothing shipped reads it).

Per fit of the glm centre cell (benchmarks/glm_coverage.py, n = 20,000, p = 5, eps 1), on the
unit scale (features first, intercept last): ``b(C)`` is the linearised unfinished-descent bias
at curvature ``C`` (``inference.dpgd._descent_bias`` at the released coefficients). Printed
per coefficient over the fits: the variance of the real plug-in error ``b(C_rel) - b(C)``
(``C`` the exact curvature, ``C_rel`` the released one), the mean variance of ``b`` over the
interval's plausible curvatures ``C_rel - E_k`` (what the interval assumes), the spread of
``b(C + E)`` at the exact curvature with fresh noise of the released scale, and a double
bootstrap's correction ``sd1^2 / sd2`` (``sd2`` the spread at 20 second-level centres).

    nice -n 10 python benchmarks/dpgd_plugin_spread.py --reps 60
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

import dpstats.estimators.dpgd as est_dpgd  # noqa: E402
import dpstats.estimators.inference.dpgd as inf_dpgd  # noqa: E402
from dpstats.estimators.inference.glm import logistic_weights  # noqa: E402


def _spies(cap: dict):
    plausible, infer = inf_dpgd.plausible_curvatures, est_dpgd.dpgd_inference

    def spy_pc(C_rel, sigma, *a, **k):
        cap["C_rel"], cap["sigma_c"] = C_rel, sigma
        return plausible(C_rel, sigma, *a, **k)

    def spy(loss, plan, U, y, theta, design, s, **kw):
        cap.update(U=U, design=design, theta=np.asarray(theta), **kw)
        return infer(loss, plan, U, y, theta, design, s, **kw)

    inf_dpgd.plausible_curvatures, est_dpgd.dpgd_inference = spy_pc, spy
    return plausible


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args(argv)
    cap: dict = {}
    plausible = _spies(cap)
    rng, fresh = np.random.default_rng(a.seed), np.random.default_rng(a.seed + 4)
    real, spread, at_exact, corrected = [], [], [], []
    for r in range(a.reps):
        cap.clear()
        df, _ = gc.simulate(gc.CENTRE, "glm-dpgd", rng)
        gc.fit("glm-dpgd", df, gc.CENTRE, 777 + r)
        if "C_rel" not in cap:
            continue
        kept = list(cap["design"].kept)
        Uk, tk = cap["U"][:, kept], cap["theta"][kept]
        C = (Uk * logistic_weights(Uk, tk)[:, None]).T @ Uk
        p, sc = C.shape[0], cap["sigma_c"]

        def b(Cs, tk=tk):
            return inf_dpgd._descent_bias(Cs, tk, lr=cap["lr"], T=cap["T"],
                                          n_hat=cap["n_hat"])[0]
        iu = np.triu_indices(p)
        E = np.zeros((400, p, p))
        E[:, iu[0], iu[1]] = fresh.normal(size=(400, iu[0].size)) * sc
        E = E + np.triu(E, 1).transpose(0, 2, 1)
        Cs = plausible(cap["C_rel"], sc)[0]
        sd1 = b(Cs).std(axis=0)
        sd2 = np.mean([b(plausible(Ck, sc)[0]).std(axis=0) for Ck in Cs[:20]], axis=0)
        real.append(b(cap["C_rel"][None])[0] - b(C[None])[0])
        spread.append(sd1 ** 2)
        at_exact.append(b(C[None] + E).std(axis=0) ** 2)
        corrected.append(sd1 ** 4 / sd2 ** 2)
    print(f"glm-dpgd centre, {len(real)} fits, seed {a.seed}; per unit-scale coefficient "
          "(x0..x4, intercept)")
    for name, v in (("var of the real plug-in error b(C_rel) - b(C)", np.var(real, axis=0)),
                    ("mean plausible-curvature variance (assumed)", np.mean(spread, axis=0)),
                    ("mean variance of b(C + E) at the exact C", np.mean(at_exact, axis=0)),
                    ("double-bootstrap corrected variance", np.mean(corrected, axis=0))):
        print(f"  {name:48s} " + " ".join(f"{x:.5f}" for x in v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
