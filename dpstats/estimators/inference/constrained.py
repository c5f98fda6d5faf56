"""Why Frank-Wolfe releases no intervals (a statement, not a computation).

Frank-Wolfe (:mod:`dpstats.estimators.fw`) estimates the minimiser of the loss over an L1 ball
of a public radius on the [-1, 1] scale. Whenever the ball binds (the unconstrained solution
lies outside it) that minimiser is not the model's coefficients, and how far it is depends on
the unknown coefficients; the distribution of the constrained minimiser is not normal at the
boundary (some coefficients sit at 0 with positive probability); and the private vertex choices
(exponential mechanism, a data-dependent discrete distribution over ``2p`` vertices at each of
``T`` steps) are not a noise of a known, data-free law that a bootstrap could redraw from
released values. An interval for the model's coefficients would therefore rest on a bias that
cannot be estimated from released values, so none is released (NaN) and the summary says why.
"""

from __future__ import annotations

import numpy as np

from ..outcome import Inference
from .gate import GATED

__all__ = ["FW_REASON", "fw_inference"]

FW_REASON = (
    "Frank-Wolfe estimates the minimiser of the loss over an L1 ball of a public radius, a "
    "constrained and therefore biased estimator whenever the ball binds; the bias depends on "
    "the unknown coefficients (how far the unconstrained solution lies outside the ball), the "
    "constrained solution is not normally distributed at the ball's boundary, and the private "
    "vertex choices are not noise of a known distribution that could be re-drawn from released "
    "values, so no interval built from released values would cover the model's coefficients "
    "(method='bas' or 'dpgd' for dp_lm, the default or 'dpgd' for dp_glm give intervals)")


def fw_inference(p: int) -> Inference:
    """No intervals for a Frank-Wolfe fit of ``p`` coefficients, with :data:`FW_REASON`.

    >>> fw_inference(2).method.endswith("give intervals)")
    True
    """
    return Inference(cov=np.full((p, p), np.nan), method=GATED + FW_REASON, reference="",
                     share=0.0, covers="")
