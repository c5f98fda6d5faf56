"""dp_glm's output and objective perturbation (:mod:`dpstats.estimators.outpert`,
:mod:`dpstats.estimators.objpert`, and so ``method="auto"``) on a dask frame.

Both estimators read the rows through three statistics (their ``rows`` object,
:class:`dpstats.estimators.outpert.Rows` in memory); :class:`DaskRows` computes the same ones
on the workers, from the rows mapped into the released box and scaled to norm <= 1 exactly as
in memory (:meth:`~dpstats.dask.passes.GramPass.mapped`, the kept columns, divided by ``s``):

* ``ridge_fit(lam, tol, linear)``: the minimiser of the ridge-logistic sum objective by the
  in-memory solver (:func:`~dpstats.estimators.outpert.ridge_fit`: damped Newton with the same
  Armijo backtracking and the same stopping rule ``||grad|| <= tol``, on which the release's
  sensitivity rests). Every point the solver evaluates costs one pass
  (:class:`LogisticPass`: the data's part of the objective, gradient and Hessian at that
  point, ``p' + p'^2 + 1`` numbers): one pass at 0, then one per Newton step whose full step
  is accepted (usually all of them: about 6-10 passes in all), one more per halving of a step.
* ``correct(theta, candidates)``: for each candidate threshold, the rows classified correctly
  (one pass, 33 counts): the utility of the exponential mechanism that picks the threshold;
* ``class_counts()``: the number of rows of each class, for the intercept-only model's
  Laplace counts (taken from the same pass as ``correct``, so no extra pass);
* ``fisher(theta)``: the exact ``sum_i w_i u_i u_i'`` (``w = mu (1 - mu)``) that objective
  perturbation's standard errors release with noise
  (:func:`dpstats.mechanisms.curvature.release_curvature`), at the released point: taken from
  the threshold's pass (the same point), so no extra pass.

The releases (Gaussian output noise or objective perturbation, the exponential mechanism, the
Laplace counts) are made on the client by the estimator's own code, in the same order; a
seeded dask fit equals the pandas fit up to summation rounding. Passes: the first pass (row
count, bounds histograms) + the solver's (typically 6-10) + 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._kernels.exact_sums import cross_sum, gram_sum
from ..estimators.outpert import GRAD_TOL
from ..mechanisms.curvature import curvature_sum_fixed
from .passes import GramPass, reduce_frame

__all__ = ["LogisticPass", "DaskRows"]


@dataclass(frozen=True)
class LogisticPass:
    """On one partition: with ``theta``, the logistic loss sum, gradient and Hessian of the
    data part at ``theta``; with ``cands`` (and ``theta``), the correct-classification count
    of each threshold candidate (predict 1 when the score is ``>= t``), the class counts and
    the curvature sum at ``theta`` (:func:`~dpstats.mechanisms.curvature.curvature_sum`, exact:
    the client adds the noise)."""

    rows: GramPass
    kept: tuple[int, ...]
    s: float
    theta: np.ndarray
    cands: np.ndarray | None = None

    def __call__(self, pdf, part: int) -> dict:
        Xs, y = self.rows.mapped(pdf)
        U = np.ascontiguousarray(Xs[:, list(self.kept)]) / self.s
        e = U @ self.theta
        if self.cands is not None:
            pos = y == 1.0
            s1, s0 = np.sort(e[pos]), np.sort(e[~pos])
            correct = (s1.size - np.searchsorted(s1, self.cands, side="left")) \
                + np.searchsorted(s0, self.cands, side="left")
            mu = 0.5 * (1.0 + np.tanh(0.5 * e))
            return {"correct": correct.astype(np.float64),
                    "classes": np.array([s0.size, s1.size], dtype=np.float64),
                    "fisher": curvature_sum_fixed(U, mu * (1.0 - mu), 0.25)}
        mu = 0.5 * (1.0 + np.tanh(0.5 * e))
        # the solver's sums to 2^-66 of their bounds (exact_sums): the same bits for any
        # partitioning, and far inside the tolerance its privacy allows (a released sum's
        # coarse grid, row_sums, would move the minimiser). Rows have norm <= 1, so
        # |e| <= ||theta||, each loss is in [0, |e| + log 2], |u_j (mu - y)| <= 1 and
        # |w u_j u_l| <= 1/4.
        loss = np.logaddexp(0.0, e) - y * e
        top = float(np.sqrt(self.theta @ self.theta)) + 1.0
        return {"f": cross_sum(loss[:, None], np.ones(loss.size), top),
                "g": cross_sum(U, mu - y, 1.0), "H": gram_sum(U, mu * (1.0 - mu), 0.25)}


class DaskRows:
    """The rows' statistics of output and objective perturbation on a dask frame (module
    docstring). ``passes`` counts the passes made."""

    def __init__(self, ddf, rows: GramPass, kept, s: float):
        self.ddf, self.s = ddf, float(s)
        self._base = LogisticPass(rows, tuple(int(j) for j in kept), self.s, np.zeros(len(kept)))
        self._classes = None
        self._fisher = None             # (theta, exact curvature sum) of the threshold's pass
        self.passes = 0

    def _at(self, theta, cands=None) -> dict:
        self.passes += 1
        return reduce_frame(self.ddf, replace(self._base, theta=np.array(theta, dtype=float),
                                              cands=cands))

    def ridge_fit(self, lam: float, tol: float = GRAD_TOL, linear=None,
                  max_iter: int = 500) -> np.ndarray:
        """:func:`dpstats.estimators.outpert.ridge_fit` with every evaluation on the workers."""
        p = len(self._base.kept)
        t = np.zeros(p)
        b = np.zeros(p) if linear is None else np.asarray(linear, dtype=np.float64)

        def objective(v, st):
            return float(st["f"][0] + 0.5 * lam * (v @ v) + b @ v)

        st = self._at(t)
        f = objective(t, st)
        for _ in range(max_iter):
            g = st["g"] + lam * t + b
            if math.sqrt(float(g @ g)) <= tol:
                break
            step = np.linalg.solve(st["H"] + lam * np.eye(p), g)
            dec = float(g @ step)
            if dec < 1e-8:          # near the minimum: pure Newton, as in memory
                t = t - step
                st = self._at(t)
                f = objective(t, st)
                continue
            s = 1.0
            while True:
                cand = t - s * step
                sc = self._at(cand)
                fc = objective(cand, sc)
                if fc <= f - 0.25 * s * dec or s < 1e-14:
                    break
                s *= 0.5
            t, f, st = cand, fc, sc
        return t

    def correct(self, theta, cands) -> np.ndarray:
        """Rows classified correctly by each threshold candidate (one pass)."""
        out = self._at(theta, np.asarray(cands, dtype=np.float64))
        self._classes = out["classes"]
        self._fisher = (np.array(theta, dtype=float), out["fisher"])
        return out["correct"].astype(np.int64)

    def fisher(self, theta) -> np.ndarray:
        """The exact curvature sum at ``theta`` (module docstring): from the threshold's pass
        when it was at ``theta``, else one pass of its own."""
        theta = np.array(theta, dtype=float)
        if self._fisher is None or not np.array_equal(self._fisher[0], theta):
            self.correct(theta, np.zeros(1))
        return self._fisher[1]

    def class_counts(self) -> np.ndarray:
        """``[#y = 0, #y = 1]`` (from the threshold's pass, or one pass of its own)."""
        if self._classes is None:
            self.correct(np.zeros(len(self._base.kept)), np.zeros(1))
        return self._classes
