"""Frank-Wolfe kernels (numba): per-row loss derivatives, sum-loss gradients, vertex scores.

Pure and deterministic (no randomness, no privacy logic). Used by
:mod:`dpstats.estimators.fw` (private Frank-Wolfe, 001 / Talwar et al. 2015) and
:mod:`dpstats.estimators.screening`. Each kernel has a plain-numpy reference
(``*_reference``) that the tests compare against.

Losses are in **sum form** over rows ``r`` with linear predictor ``u_r = x_r . w``:

* ``"squared"``: ``l(u, y) = (u - y)^2 / 2``, derivative ``l'(u, y) = u - y``;
* ``"logistic"``: label ``t`` in {-1, +1}, ``l(u, t) = log(1 + exp(-t u))``, derivative
  ``l'(u, t) = -t / (1 + exp(t u))`` (``= -t * sigmoid(-t u)``, magnitude below 1).

The gradient of ``F(w) = sum_r l(x_r . w, y_r)`` is ``X^T l'(u, y)``. The kernels take the
design **transposed**, ``Xt`` of shape ``(d, n)`` and C-contiguous, so that each column is a
contiguous row of ``Xt`` (the gradient is parallel over columns).

The Frank-Wolfe vertex scores over the L1 ball of radius ``lam`` are the linear-model values
``<v, g>`` at its ``2 d`` vertices ``v = +-lam e_j``, in the order
``[+lam e_0, ..., +lam e_{d-1}, -lam e_0, ..., -lam e_{d-1}]``.

Examples
--------
>>> import numpy as np
>>> Xt = np.array([[1.0, -1.0, 0.5], [0.0, 1.0, 1.0]])     # d = 2 columns, n = 3 rows
>>> g, r = loss_gradient(Xt, np.zeros(3), np.array([1.0, 0.0, -1.0]), "squared")
>>> g.tolist(), r.tolist()
([-0.5, 1.0], [-1.0, 0.0, 1.0])
>>> vertex_scores(g, 2.0).tolist()
[-1.0, 2.0, 1.0, -2.0]
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .runtime import run_chunks, watch_compiles

__all__ = ["LOSSES", "loss_code", "loss_derivative", "loss_gradient", "vertex_scores",
           "sum_loss", "loss_derivative_reference", "loss_gradient_reference",
           "vertex_scores_reference", "sum_loss_reference"]

#: Loss names and their integer codes inside the kernels.
LOSSES = {"squared": 0, "logistic": 1}


def loss_code(loss: str) -> int:
    """Integer code of a loss name (``KeyError`` for an unknown name; validate before)."""
    return LOSSES[loss]


@njit(cache=True)
def _derivatives(u, y, code, out):
    for i in range(u.shape[0]):
        if code == 0:
            out[i] = u[i] - y[i]
        else:
            z = y[i] * u[i]
            # 1 / (1 + exp(z)) without overflow
            if z >= 0.0:
                e = math.exp(-z)
                s = e / (1.0 + e)
            else:
                s = 1.0 / (1.0 + math.exp(z))
            out[i] = -y[i] * s


# Serial, releasing the GIL; :func:`.runtime.run_chunks` runs ranges of columns on threads for
# large designs (one compile instead of a serial and a ``parallel=True`` twin).
#: Rows per block of :func:`_xt_dot`.
BLOCK = 4096


# Blocks of BLOCK rows added with Neumaier's compensation: the error stays within (BLOCK + 5) u
# times the sum of |terms| instead of growing with n (one loop over all n rows: n u), so the
# gradient's sensitivity holds to a relative 2 (BLOCK + 5) u n (Higham's bound for any order
# within a block). Private Frank-Wolfe no longer reads it: its released sums are exact on grids
# (dpstats.estimators.fw_sums); this float gradient serves the non-private rule
# (screening.exact_rule), the benchmarks and the tests.
@njit(cache=True, nogil=True)
def _xt_dot(Xt, r, out, lo, hi):
    n = Xt.shape[1]
    for j in range(lo, hi):
        s = 0.0
        c = 0.0
        for a in range(0, n, BLOCK):
            acc = 0.0
            for i in range(a, min(a + BLOCK, n)):
                acc += Xt[j, i] * r[i]
            t = s + acc
            if abs(s) >= abs(acc):
                c += (s - t) + acc
            else:
                c += (acc - t) + s
            s = t
        out[j] = s + c


@njit(cache=True)
def _vertex_scores(g, lam, out):
    d = g.shape[0]
    for j in range(d):
        out[j] = lam * g[j]
        out[d + j] = -lam * g[j]


@njit(cache=True)
def _sum_loss(u, y, code):
    total = 0.0
    for i in range(u.shape[0]):
        if code == 0:
            total += 0.5 * (u[i] - y[i]) ** 2
        else:
            z = -y[i] * u[i]        # log(1 + exp(z)) without overflow
            if z > 0.0:
                total += z + math.log1p(math.exp(-z))
            else:
                total += math.log1p(math.exp(z))
    return total


def _vec(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def loss_derivative(u, y, loss: str) -> np.ndarray:
    """Per-row derivatives ``l'(u_r, y_r)`` (see the module docstring), shape ``(n,)``."""
    u, y = _vec(u), _vec(y)
    out = np.empty_like(u)
    _derivatives(u, y, loss_code(loss), out)
    return out


def loss_gradient(Xt, u, y, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """Sum-loss gradient ``g = X^T l'(u, y)`` and the per-row derivatives ``r = l'(u, y)``.

    ``Xt`` is the transposed design, shape ``(d, n)``; ``u = X w`` the linear predictor.
    """
    Xt = np.ascontiguousarray(Xt, dtype=np.float64)
    r = loss_derivative(u, y, loss)
    g = np.empty(Xt.shape[0])
    run_chunks(_xt_dot, Xt.shape[0], Xt.size, Xt, r, g)
    return g, r


def vertex_scores(g, lam: float) -> np.ndarray:
    """``<v, g>`` for the ``2 d`` vertices ``+-lam e_j`` of the L1 ball (order: all +, all -)."""
    g = _vec(g)
    out = np.empty(2 * g.shape[0])
    _vertex_scores(g, float(lam), out)
    return out


def sum_loss(u, y, loss: str) -> float:
    """``sum_r l(u_r, y_r)``, the objective Frank-Wolfe minimises."""
    return float(_sum_loss(_vec(u), _vec(y), loss_code(loss)))


# -- plain numpy references (for the tests) ------------------------------------------------

def loss_derivative_reference(u, y, loss: str) -> np.ndarray:
    """Numpy reference of :func:`loss_derivative`."""
    u, y = np.asarray(u, float), np.asarray(y, float)
    if loss == "squared":
        return u - y
    return -y * np.exp(-np.logaddexp(0.0, y * u))       # -t / (1 + exp(t u))


def loss_gradient_reference(X, u, y, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`loss_gradient`; takes the design ``X`` of shape (n, d)."""
    r = loss_derivative_reference(u, y, loss)
    return np.asarray(X, float).T @ r, r


def vertex_scores_reference(g, lam: float) -> np.ndarray:
    """Numpy reference of :func:`vertex_scores`: ``V @ g`` for the explicit vertex matrix."""
    d = len(g)
    V = np.vstack([lam * np.eye(d), -lam * np.eye(d)])
    return V @ np.asarray(g, float)


def sum_loss_reference(u, y, loss: str) -> float:
    """Numpy reference of :func:`sum_loss`."""
    u, y = np.asarray(u, float), np.asarray(y, float)
    if loss == "squared":
        return float(0.5 * np.sum((u - y) ** 2))
    return float(np.sum(np.logaddexp(0.0, -y * u)))


watch_compiles()   # counts real compiles (runtime.compile_stats; the notice is prepare.py)
