"""The logistic DP-GD's unfinished-descent bias against its plug-ins (issue 16; design-notes.md,
"DP-GD's bias along the path").

Per fit of ``glm_coverage.py``'s cells (``glm-dpgd``, the convergence gate opened so every
fit's inputs are seen), on the unit scale of the descent, per coefficient:

* ``true``: the noise-free descent's bias, ``T`` exact gradient steps from 0 on the fit's own
  rows minus the sum loss's minimiser ``t_0`` (Newton);
* ``lin``: the linearised bias ``-A^T t_0`` at the exact curvature ``C(t_0)``;
* ``path``: :func:`dpstats.estimators.inference.dpgd_path.path_bias` at the noise-free end
  point ``t`` and the exact curvature there (the model's own error, no privacy noise);
* ``real``: the released ``t_T - t_0`` (noise included);
* ``plug_old``: the code's plug-in before (0.92 x the bootstrap-corrected linear one, mean
  over the plausible curvatures of the released one); ``plug_path``: the path model's,
  bootstrap-corrected the same way.

It prints per cell the ratios ``mean(true) / mean(lin)``, ``mean(path) / mean(true)``,
``mean(real) / mean(plug_old)`` and ``mean(real) / mean(plug_path)`` per coefficient, with
the cell's public quantities (``n_hat eps``, ``max a^T``, the released mean weight).

    nice -n 10 python benchmarks/dpgd_path_bias.py --cells 0,6 --reps 40

(``--cells``: indices into ``glm_coverage.CELLS``.) Reads no real data.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_coverage as gc  # noqa: E402

import dpstats.estimators.dpgd as est_dpgd  # noqa: E402
import dpstats.estimators.inference.dpgd as D  # noqa: E402
from dpstats.estimators.inference.dpgd_path import path_bias  # noqa: E402
from dpstats.estimators.inference.glm import debias  # noqa: E402


def _minimiser(U, y):
    t = np.zeros(U.shape[1])
    for _ in range(50):
        s = 1.0 / (1.0 + np.exp(-U @ t))
        step = np.linalg.solve((U * (s * (1 - s))[:, None]).T @ U, U.T @ (s - y))
        t -= step
        if np.abs(step).max() < 1e-12:
            break
    s = 1.0 / (1.0 + np.exp(-U @ t))
    return t, (U * (s * (1 - s))[:, None]).T @ U


def _plugins(Cs, theta, kw, icol):
    lin, _ = D._descent_bias(Cs, theta, lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"])
    at = D._descent_bias(Cs.mean(0)[None], theta, lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"])
    old = D.BIAS_SCALE["logistic"] * debias(lin, at[0][0]).mean(0)
    pb = path_bias(Cs, theta, lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"], icol=icol)
    pm = path_bias(Cs.mean(0)[None], theta, lr=kw["lr"], T=kw["T"], n_hat=kw["n_hat"],
                   icol=icol)
    return old, debias(pb, pm[0]).mean(0)


def run_cell(i: int, reps: int, offset: int) -> list[dict]:
    cell, seed = gc.CELLS[i], 1000 + 17 * i + offset
    cap: dict = {}
    real_infer, real_model = est_dpgd.dpgd_inference, D._gd_model

    def spy(loss, plan, U, y, theta, design, s, **kw):
        cap.update(U=U, y=y, theta=np.array(theta), design=design, kw=kw)
        return real_infer(loss, plan, U, y, theta, design, s, **kw)

    def spy_model(Cs, theta, sigma2, **kw):
        cap.setdefault("Cs", Cs)
        return real_model(Cs, theta, sigma2, **kw)

    est_dpgd.dpgd_inference, D._gd_model = spy, spy_model
    D.MAX_LEFT = {"logistic": 9.0, "squared": 9.0}
    rng, rows = np.random.default_rng(seed), []
    try:
        for r in range(reps):
            df, _ = gc.simulate(cell, "glm-dpgd", rng)
            cap.clear()
            gc.fit("glm-dpgd", df, cell, seed * 1000 + r)
            if "Cs" not in cap:
                continue
            kept = list(cap["design"].kept)
            U, y, kw = cap["U"][:, kept], cap["y"], cap["kw"]
            icol = len(kept) - 1 if cap["design"].intercept_col is not None else None
            t0, C0 = _minimiser(U, y)
            t = np.zeros_like(t0)
            for _ in range(kw["T"]):
                t -= kw["lr"] * U.T @ (1.0 / (1.0 + np.exp(-U @ t)) - y) / kw["n_hat"]
            A = np.eye(len(t0)) - kw["lr"] * C0 / kw["n_hat"]
            lin = -np.linalg.matrix_power(A, kw["T"]) @ t0
            w = 1.0 / (1.0 + np.exp(-U @ t))
            Ct = (U * (w * (1 - w))[:, None]).T @ U
            old, new = _plugins(cap["Cs"], cap["theta"][kept], kw, icol)
            rows.append({"true": t - t0, "lin": lin,
                         "aT": float(np.linalg.eigvalsh(A).max() ** kw["T"]),
                         "path": path_bias(Ct[None], t, lr=kw["lr"], T=kw["T"],
                                           n_hat=kw["n_hat"], icol=icol)[0],
                         "real": cap["theta"][kept] - t0, "plug_old": old, "plug_path": new,
                         "wbar": C0[icol, icol] * len(kept) / kw["n_hat"] if icol is not None
                         else np.nan, "neps": kw["n_hat"] * kw["eps"]})
    finally:
        est_dpgd.dpgd_inference, D._gd_model = real_infer, real_model
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="0")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--seed-offset", type=int, default=60)
    a = ap.parse_args(argv)
    t00 = time.time()
    for i in (int(c) for c in a.cells.split(",")):
        rows = run_cell(i, a.reps, a.seed_offset)
        M = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        m = {k: v.mean(0) for k, v in M.items()}
        c = gc.CELLS[i]
        print(f"[{time.time() - t00:5.0f}s] cell {i} {c}: {len(rows)} fits, n*eps "
              f"{m['neps']:.0f}, max a^T {m['aT']:.3f}, mean weight {m['wbar']:.3f}")
        for name, num, den in (("true / lin", "true", "lin"), ("path / true", "path", "true"),
                               ("real / true", "real", "true"),
                               ("real / plug_old", "real", "plug_old"),
                               ("real / plug_path", "real", "plug_path")):
            print(f"  {name:17s} {np.round(m[num] / m[den], 3).tolist()}")
        print(f"  mean true bias     {np.round(m['true'], 4).tolist()}")
        print(f"  sd of real - plug_path {np.round((M['real'] - M['plug_path']).std(0), 4)}"
              f"  of real - plug_old {np.round((M['real'] - M['plug_old']).std(0), 4)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
