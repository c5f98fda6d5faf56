"""Private inference for released fits: standard errors and what the intervals cover.

* :mod:`~dpstats.estimators.inference.ssp`: AdaSSP and Boosted AdaSSP (a charged release of the
  clipped residual sum of squares, then a parametric bootstrap of the released sufficient
  statistics, Ferrando, Wang & Sheldon 2022).
* :mod:`~dpstats.estimators.inference.simulate`: the batched simulations of those estimators.
* :mod:`~dpstats.estimators.inference.tukey`: the Tukey-depth mechanism (a private spread of
  the group models near the released point, and the mechanism's noise by simulation).
* :mod:`~dpstats.estimators.inference.tukey_glm`: the logistic Tukey mechanism (the same
  spread, windows from private weighted design moments, a noise-aware critical value).

Methods without an inference procedure release none: their standard errors are NaN and the
result says why (:data:`NO_INFERENCE`).
"""

from __future__ import annotations

__all__ = ["NO_INFERENCE"]

#: Why a method has no standard errors (public: depends on the method only).
NO_INFERENCE = {
    "tukey": "the Tukey-depth mechanism released no standard errors for this fit "
             "(estimators/inference/tukey.py and tukey_glm.py)",
    "fw": "Frank-Wolfe releases no standard errors yet (no honest private spread of its "
          "L1-constrained path is implemented)",
    "dpgd": "DP-GD releases no standard errors yet (no honest private spread of its "
            "clipped-gradient path is implemented)",
    "paper": "the 'paper' variant of Boosted AdaSSP fits unscaled rows clipped to norm 1 and "
             "releases no standard errors",
}
