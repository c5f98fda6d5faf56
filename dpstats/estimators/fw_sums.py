"""The sums private Frank-Wolfe's releases read, exact on grids of public bounds.

Frank-Wolfe (:mod:`dpstats.estimators.fw`) releases a vertex chosen from the sum-loss
gradient ``g = X' l'(u, y)`` at every iteration and, at a screening iteration, the rule's
components ``B = u' l'(u, y)``, ``||u||^2`` and (first screening only) the column squared norms
(:mod:`dpstats.estimators.screening`). Each is a sum over rows of one record's term, with
public bounds on the term's factors:

* a row's entries: ``|x_j| <= 1`` (the data are mapped into the released box);
* the linear predictor: ``|u| <= radius`` (``w`` stays in the L1 ball of that radius);
* the derivative: ``|l'(u, y)| <= M``
  (:func:`~dpstats.estimators.screening.derivative_bound`: ``radius + 1`` squared,
  ``sigmoid(radius)`` logistic; the callers pass it).

They are summed exactly on grids of those bounds (:mod:`dpstats._kernels.row_sums`): each
factor quantised with its bound, the integers added exactly, so one row moves each sum by at
most its term's bound (the sensitivities :func:`~dpstats.estimators.fw.score_sensitivity` and
:func:`~dpstats.estimators.screening.component_sensitivity` state) and the sums are the same
bits for any order or split of the rows. The in-memory loop and the dask passes
(:mod:`dpstats.dask.fw`) call the same functions. Deterministic; draws nothing.

>>> X = np.array([[1.0, -0.5], [0.25, 1.0], [-1.0, 0.0]])
>>> r = np.array([0.5, -1.0, 2.0])
>>> g = gradient_sum(X, r, 2.0).value
>>> bool(np.allclose(g, X.T @ r, atol=1e-5))
True
>>> bool(np.array_equal(gradient_sum(GridMatrix(X, 1.0), r, 2.0).value, g))
True
"""

from __future__ import annotations

import numpy as np

from .._kernels.row_sums import FixedSum, GridMatrix, row_sum_fixed, tdot_fixed

__all__ = ["GridMatrix", "gradient_sum", "screen_sums", "norm_sums"]


def gradient_sum(X, r: np.ndarray, M: float) -> FixedSum:
    """``X' r`` exactly: ``X`` (n, d) rows in the unit box, or their :class:`GridMatrix`
    (quantised once, for the in-memory loop's repeated gradients: the same bits);
    ``r`` the per-row derivatives, ``|r| <= M``."""
    if isinstance(X, GridMatrix):
        return X.tdot_fixed(r, M)
    return tdot_fixed(X, r, 1.0, M)


def screen_sums(u: np.ndarray, r: np.ndarray, radius: float, M: float) -> dict:
    """``{"B": sum u l', "uu": sum u^2}`` exactly (bounds ``radius M`` and ``radius^2``)."""
    u = np.asarray(u, dtype=np.float64)
    return {"B": row_sum_fixed((u * r)[:, None], radius * M),
            "uu": row_sum_fixed((u * u)[:, None], radius * radius)}


def norm_sums(X) -> FixedSum:
    """The column squared norms ``sum_i x_ij^2`` exactly (each term at most 1): ``X`` (n, d)
    or its :class:`GridMatrix` (the squares of the quantised entries, the same bits)."""
    grid = X if isinstance(X, GridMatrix) else GridMatrix(X, 1.0)
    return grid.square_sums()
