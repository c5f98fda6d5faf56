"""How dp_glm's default moves the ridge's bias plug-in between the released information and
the released bias (issue 16, design note 73), on ``glm_intercept_design.py``'s design, over
the fits with intervals, in released standard errors (means; their se):

* ``plain_plug``: ``M (-r C_rel^-1 theta)``, the plug-in at the released information;
* ``debiased_vs_plain``: the bootstrap's correction ``2 b(C_bar) - mean_k b(C_k)``
  (:func:`dpstats.estimators.inference.glm.debias`) minus the plain plug-in;
* ``released_vs_debiased``: the released bias (``params - centre`` less the threshold's shift)
  minus the debiased mean (the spread's calibration and the mixture's quantile midpoint);
* ``released_vs_plain``: the two together.

Reads the inference's inputs by wrapping ``glm.glm_inference`` (a diagnostic).

    nice -n 10 python benchmarks/glm_debias_share.py 1.0 0.5 200   # intercept, eps, fits
"""

import sys

import glm_intercept_decompose as g
import numpy as np

import dpstats.estimators.inference.glm as glm

b0, eps, reps = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
cap = {}
real = glm.glm_inference


def spy(kind, **kw):
    cap.update(kw)
    return real(kind, **kw)


glm.glm_inference = spy
out: dict = {k: [] for k in ["plain_plug", "debiased_vs_plain", "released_vs_debiased",
                             "released_vs_plain"]}
for rep in range(reps):
    _, y, beta, fit = g.design_fit(b0, eps, rep)
    se = fit.bse.to_numpy()
    if not np.isfinite(se).all():
        continue
    C, sc, th, r, M = cap["C_rel"], cap["sigma_c"], cap["theta"], cap["ridge"], cap["M"]
    t = cap["threshold"]
    C = (C + C.T) / 2
    Cs = glm.plausible_curvatures(C, glm.SPREAD * sc, seed=glm.fit_seed(C, sc, th, t))[0]
    bk = -r * np.linalg.solve(Cs, np.broadcast_to(th, (len(Cs), th.size))[..., None])[..., 0]
    deb = glm.debias(bk, -r * np.linalg.solve(Cs.mean(0), th)).mean(0)
    plain = -r * np.linalg.solve(C, th)
    shift = np.zeros(M.shape[0])
    if cap["icol"] is not None:
        shift[cap["icol"]] = -t
    rel = fit.params.to_numpy() - fit.params_bias_corrected.to_numpy() - shift
    out["debiased_vs_plain"].append(M @ (deb - plain) / se)
    out["released_vs_debiased"].append((rel - M @ deb) / se)
    out["released_vs_plain"].append((rel - M @ plain) / se)
    out["plain_plug"].append(M @ plain / se)
for k, v in out.items():
    if v:
        v = np.array(v)
        print(k, len(v), np.round(v.mean(0), 3), "se",
              np.round(v.std(0) / np.sqrt(len(v)), 3))
