"""The Frank-Wolfe iterations of :mod:`dpstats.estimators.fw` on unit-scale data.

The loop only: the vertex choice and the screening rule are passed in (``choose``,
``screener``), so it holds no privacy logic itself. Every gradient it hands to ``choose`` is an
exact sum on a grid of public bounds (:mod:`dpstats.estimators.fw_sums`), so a private
``choose`` reads a sum that one row moves by at most its bound, and the same bits for any order
of the rows.

>>> X = np.column_stack([np.ones(500), np.sin(np.arange(1000.0)).reshape(500, 2)])  # fixed
>>> y = np.clip(0.5 * X[:, 1], -1, 1)
>>> w, _ = frank_wolfe(np.ascontiguousarray(X.T), y, loss="squared", radius=1.0, T=200,
...                    choose=np.argmin)
>>> bool(abs(w[1] - 0.5) < 0.05)
True
"""

from __future__ import annotations

import numpy as np

from .._kernels.frank_wolfe import loss_derivative, vertex_scores
from .fw_sums import GridMatrix, gradient_sum
from .screening import derivative_bound

__all__ = ["frank_wolfe"]


def frank_wolfe(Xt, y, *, loss: str, radius: float, T: int, choose, screen_at=(),
                screener=None, protect=None, grid=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Frank-Wolfe iterations on unit-scale data; ``choose(scores) -> index`` picks the vertex.

    ``Xt`` is the transposed design (d, n), ``scores`` are the ``<v, grad F>`` of
    :func:`dpstats._kernels.frank_wolfe.vertex_scores` (smaller is better), so a non-private
    ``choose`` is ``np.argmin``. After the step at each iteration in ``screen_at``,
    ``screener(u, g, r)`` returns the rule statistic and features with a negative value (except
    ``protect``) are set to 0. Returns ``(w, mask)`` with ``mask`` the features flagged at the
    last screening (None without screening). No privacy logic here: it lives in ``choose``
    and ``screener``. The gradients are exact sums on a grid of the public bounds
    (:func:`dpstats.estimators.fw_sums.gradient_sum`; the rows quantised once, or ``grid``,
    their :class:`~dpstats.estimators.fw_sums.GridMatrix`, shared with the screener).
    """
    M = derivative_bound(loss, radius)
    d, n = Xt.shape
    grid = GridMatrix(Xt.T, 1.0) if grid is None else grid
    w, u = np.zeros(d), np.zeros(n)
    screening = frozenset(screen_at)
    g = r = mask = None

    def gradient(u):
        r = loss_derivative(u, y, loss)
        return gradient_sum(grid, r, M).value, r
    for t in range(1, T + 1):
        if g is None:
            g, r = gradient(u)
        k = int(choose(vertex_scores(g, radius)))
        j, step = k % d, (radius if k < d else -radius)
        mu = 2.0 / (t + 1)
        w *= 1.0 - mu
        w[j] += mu * step
        u *= 1.0 - mu
        u += (mu * step) * Xt[j]
        g = None
        if t in screening:
            g, r = gradient(u)
            mask = np.asarray(screener(u, g, r)) < 0
            if protect is not None:
                mask[protect] = False
            if mask.any():
                w[mask] = 0.0
                u = w @ Xt
                g = None
    return w, mask
