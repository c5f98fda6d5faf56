"""Record dp_glm's default fits of ``glm_intercept_design.py``'s design (issue 16): per fit
with intervals the released inference inputs (what
:func:`dpstats.estimators.inference.glm.glm_inference` receives), the released coefficients
and the truth, and the released box's counts past it (``box``), pickled in
``glm_interval_variants.py``'s format (``--save PREFIX`` there), so that
``glm_bias_variants.py`` rebuilds the intervals under each bias rule without refitting.
The same seeds as ``glm_intercept_design.py`` (``design_fit``).

    nice -n 10 python benchmarks/glm_intercept_record.py 1.0 0.5 500 /tmp/rec_int1_eps0.5.pkl
    # START (5th argument) and --diagnose (also the exact unpenalised fit of the clipped rows)
"""

import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glm_intercept_design as g  # noqa: E402
from glm_interval_variants import box_record  # noqa: E402

import dpstats.estimators.inference.glm as G  # noqa: E402
from dpstats.estimators import objpert  # noqa: E402
from dpstats.estimators.outpert import ridge_fit  # noqa: E402


def record(b0: float, eps: float, reps: int, start: int = 0,
           diagnose: bool = False) -> list[dict]:
    """The fits ``start .. start + reps - 1`` with intervals: ``kw``, ``est``, ``beta``; with
    ``diagnose`` also ``t0``, the exact unpenalised fit of the clipped unit-scale rows (as
    ``glm_interval_variants.py --diagnose``)."""
    cap: dict = {}
    real, real_inf, real_ts = G.glm_inference, objpert._inference, G.tail_score

    def spy(kind, **kw):
        cap["kw"] = kw
        return real(kind, **kw)

    def spy_inf(rows, *args):
        if diagnose:
            cap["t0"] = ridge_fit(rows.U, rows.y, 0.0, tol=1e-9)
        return real_inf(rows, *args)

    def spy_ts(*args, **kw):
        cap["box"] = box_record(*args[:3])
        return real_ts(*args, **kw)

    G.glm_inference, objpert._inference, G.tail_score = spy, spy_inf, spy_ts
    out = []
    try:
        for rep in range(start, start + reps):
            cap.clear()
            _, _, beta, fit = g.design_fit(b0, eps, rep)
            if "kw" in cap and np.isfinite(fit.bse.to_numpy()).all():
                out.append({"kw": cap["kw"], "est": fit.params.to_numpy(), "beta": beta,
                            "rep": rep, "centre": fit.params_bias_corrected.to_numpy(),
                            **({"t0": cap["t0"]} if "t0" in cap else {}),
                            **({"box": cap["box"]} if "box" in cap else {})})
    finally:
        G.glm_inference, objpert._inference, G.tail_score = real, real_inf, real_ts
    return out


if __name__ == "__main__":
    b0, eps, reps, path = (float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]),
                           sys.argv[4])
    start = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    t0 = time.time()
    fits = record(b0, eps, reps, start, diagnose="--diagnose" in sys.argv)
    with open(path, "wb") as fh:
        pickle.dump(fits, fh)
    print(f"intercept {b0} eps {eps}: {len(fits)} of {reps} fits with intervals "
          f"({time.time() - t0:.0f}s)")
