"""How a box that clips Gaussian covariates moves a logistic fit's slopes, and how well
:func:`dpstats.estimators.inference.glm_box.box_bias`'s normal model (Stein's factor on the
information-weighted clipped moments) recovers the unclipped fit (issue 16; design-notes.md,
"dp_glm's correction calibrated; the box's cut").

Per design (``glm_intercept_design.py``'s slopes at intercept +1, ``glm_coverage.py``'s
coefficients at intercept -0.5; the box at ``c`` sd, as the released boxes at 20,000 rows end
at about 2.2-2.8 sd): one large simulated data set (no privacy), the exact logistic fits of
the unclipped and the clipped covariates, and the slopes the model recovers from the clipped
fit with the moments of the clipped columns weighted by the fit's ``s (1 - s)`` (what the
released Fisher information holds) or unweighted (for comparison). Non-private: it checks a
derivation, it tunes nothing.

    nice -n 10 python benchmarks/glm_box_slope.py            # 1,000,000 rows a design

Reads no real data.
"""

from __future__ import annotations

import sys

import numpy as np
import statsmodels.api as sm

from dpstats.estimators.inference.dpgd_label import unclipped_normal


def designs():
    """``(label, intercept, slopes, c)``."""
    j = np.arange(5)
    cov = (-1.0) ** j * (1 - j / 10)
    yield "int +1, box 2.5 sd", 1.0, np.array([1, -1 / 2, 1 / 3, -1 / 4, 1 / 5]), 2.5
    yield "int +1, box 2.2 sd", 1.0, np.array([1, -1 / 2, 1 / 3, -1 / 4, 1 / 5]), 2.2
    yield "int -0.5, box 2.5 sd", -0.5, 1.2 * cov / np.linalg.norm(cov), 2.5


def recovered(Xc: np.ndarray, fit: np.ndarray, c: float, weighted: bool) -> np.ndarray:
    """The slopes the normal model gives from the clipped fit ``fit`` (intercept first)."""
    U = Xc / c
    if weighted:
        s = 1.0 / (1.0 + np.exp(-(fit[0] + Xc @ fit[1:])))
        w = s * (1.0 - s)
    else:
        w = np.ones(len(U))
    m = w @ U / w.sum()
    v = w @ (U * U) / w.sum() - m * m
    _, sd, pi = unclipped_normal(m, v, 30)
    return fit[1:] / (sd * sd * (1.0 - pi) / v)


def main(n: int = 1_000_000, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    print(f"{'design':22s} {'fit':28s} slopes (minus the unclipped fit's, x1000)")
    for label, b0, slopes, c in designs():
        X = rng.normal(size=(n, slopes.size))
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(b0 + X @ slopes)))).astype(float)
        Xc = np.clip(X, -c, c)
        full = sm.Logit(y, sm.add_constant(X)).fit(disp=0).params
        clip = sm.Logit(y, sm.add_constant(Xc)).fit(disp=0).params
        rows = [("clipped fit", clip[1:]),
                ("model, weighted moments", recovered(Xc, clip, c, True)),
                ("model, unweighted", recovered(Xc, clip, c, False))]
        print(f"{label:22s} {'unclipped fit':28s} {np.round(full[1:], 4).tolist()}")
        for name, s in rows:
            print(f"{'':22s} {name:28s} {np.round(1000 * (s - full[1:]), 1).tolist()}")
        print(f"{'':22s} {'intercept clipped - unclipped':28s} {1000 * (clip[0] - full[0]):.1f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
