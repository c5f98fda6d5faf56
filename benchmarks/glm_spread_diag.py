"""Why dp_glm's default intervals over-covered the skewed and eps 0.5 cells (issue 16;
design-notes.md, "the cut tail's fits centred; the bias spread calibrated").

Reads the fits recorded by ``glm_interval_variants.py --diagnose --save PREFIX`` (the released
inference inputs of each fit, the exact non-private fits of its clipped rows, the estimate and
the truth) and prints, per coefficient on the original scale:

* the cut tail's move (fits where it enters): the realised error of its estimate, ``sd(clipped
  fit - truth - estimated move)`` with the sampling sd (``M C^-1 M'`` at the released ``C``)
  taken out, against the median spread of its recorded plausible draws (``glm_tail``, at the
  ``TAIL_SPREAD`` of the code that recorded them: 1 before this change);
* the ridge's bias plug-in (stable fits without a move): the realised error of the bootstrap's
  estimate ``sd(exact shrinkage - estimated bias)`` against the median spread (sd) of the
  plausible plug-ins over the plausible informations, with and without the one-level-down
  calibration (``glm_spread``).

    nice -n 10 python benchmarks/glm_interval_variants.py --cells 7,5 --reps 500 --diagnose \\
        --save /tmp/rec
    python benchmarks/glm_spread_diag.py --load /tmp/rec --cells 7,5

Reads no real data.
"""

from __future__ import annotations

import argparse
import pickle

import numpy as np

from dpstats.estimators.inference import glm as G
from dpstats.estimators.inference import glm_spread, glm_tail


def _inputs(kw):
    seed = G.fit_seed(kw["C_rel"], kw["sigma_c"], kw["theta"], kw["threshold"])
    Cs, ok = G.plausible_curvatures(kw["C_rel"], G.SPREAD * kw["sigma_c"], seed=seed)
    return Cs, ok, seed


def tail_rows(fits):
    err, samp, spread = [], [], []
    for f in fits:
        kw = f["kw"]
        Cs, ok, _ = _inputs(kw)
        if kw["tail"] is None or ok < G.PD_SHARE:
            continue
        M, C0 = kw["M"], (kw["C_rel"] + kw["C_rel"].T) / 2.0
        tb = glm_tail.tail_bias(Cs, kw["tail"]) @ M.T
        err.append(M @ f["t0"] - f["beta"] - tb.mean(0))
        samp.append(np.sqrt(np.diag(M @ np.linalg.inv(C0) @ M.T)))
        spread.append(tb.std(0))
    if not err:
        return None
    err, samp, spread = map(np.array, (err, samp, spread))
    own = np.sqrt(np.maximum(err.var(0) - np.median(samp, 0) ** 2, 0.0))
    return len(err), own, np.median(spread, 0)


def bias_rows(fits):
    err, raw, cal = [], [], []
    for f in fits:
        kw = f["kw"]
        Cs, ok, seed = _inputs(kw)
        if kw["tail"] is not None or ok < G.PD_SHARE or not G.plugin_stable(
                Cs, kw["ridge"], kw["theta"]):
            continue
        M = kw["M"]
        b = G.debias(-kw["ridge"] * np.linalg.solve(Cs, np.broadcast_to(
            kw["theta"], (len(Cs), kw["theta"].size))[..., None])[..., 0],
            -kw["ridge"] * np.linalg.solve(Cs.mean(0), kw["theta"]))
        rho = glm_spread.spread_ratio(kw["C_rel"], Cs, kw["ridge"], kw["theta"],
                                      G.SPREAD * kw["sigma_c"], seed + 1)
        err.append(M @ (f["tr"] - f["t0"]) - M @ b.mean(0))
        raw.append((b @ M.T).std(0))
        cal.append((glm_spread.scale_spread(b, rho) @ M.T).std(0))
    err, raw, cal = map(np.array, (err, raw, cal))
    return len(err), err.std(0), np.median(raw, 0), np.median(cal, 0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", required=True, help="PREFIX of glm_interval_variants' --save")
    ap.add_argument("--cells", default="7,5")
    a = ap.parse_args(argv)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    for i in (int(c) for c in a.cells.split(",")):
        with open(f"{a.load}_cell{i}.pkl", "rb") as fh:
            fits = pickle.load(fh)
        print(f"cell {i}: {len(fits)} fits with intervals")
        t = tail_rows(fits)
        if t:
            print(f"  cut tail's move ({t[0]} fits): estimate's own error sd {t[1]}\n"
                  f"    median spread of the recorded plausible draws {t[2]}"
                  f"\n    ratio {t[1] / t[2]}")
        n, e, r, c = bias_rows(fits)
        print(f"  ridge bias plug-in ({n} fits): realised error sd {e}\n"
              f"    median plausible sd {r} (ratio {r / e})\n"
              f"    calibrated {c} (ratio {c / e})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
