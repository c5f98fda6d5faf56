"""dp_glm's Tukey mechanism on a dask frame: the rows shuffled by their random group label.

The logistic group fits (:func:`dpstats._kernels.logistic.group_logistic`, Newton's method with
a line search per group) have no fixed-size sufficient statistics, so the groups are brought
together instead:

1. each partition builds its design rows (kept columns and the 0/1 label) and draws every
   row's group label from one client seed and the row's global number
   (:func:`~dpstats.dask.passes.seeded_labels`, as for the linear Tukey fits: every label is
   iid uniform on ``{0..m-1}``, independent of the data, and the same on any partitioning);
2. the labelled design rows (``p' + 2`` numbers a row) are shuffled by label
   (``DataFrame.set_index`` on the label with public divisions, equal-width label ranges:
   dask's disk- or peer-to-peer shuffle, which does not need the data in memory; no quantile
   is computed), so every group's rows end in one partition;
3. each shuffled partition fits the logistic model of every group it holds, with the
   in-memory kernel and ridge; only the ``(group, model)`` pairs come back and are assembled
   into the ``(m, p')`` models on a worker (a group with no rows gets zeros, as in memory).

Each model is the in-memory fit of the same group (rows in another order: rounding only), so
the Tukey mechanism's privacy statement (one row changes one model) and its releases (centre,
PTR, exponential mechanism, all on the client) are the in-memory ones. Cost: the first pass, one
pass that writes the labelled design into the shuffle, and one that reads it back to fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .design import PartitionDesign
from .numbering import start_of

__all__ = ["LabelledRows", "GroupLogistic", "shuffled_models"]


@dataclass(frozen=True)
class LabelledRows:
    """One partition's kept design columns, label ``y`` and random group label ``g``."""

    design: PartitionDesign
    keep: tuple[int, ...]
    m: int
    seed: int
    source: object
    starts: tuple[int, ...] = ()

    def columns(self) -> list[str]:
        return [f"x{j}" for j in range(len(self.keep))] + ["y", "g"]

    def meta(self) -> pd.DataFrame:
        cols = {c: pd.Series(dtype="float64") for c in self.columns()[:-1]}
        return pd.DataFrame({**cols, "g": pd.Series(dtype="int64")})

    def __call__(self, pdf, part: int) -> pd.DataFrame:
        X, y = self.design(pdf)
        X = X[:, list(self.keep)]
        start = start_of(self.starts, part)
        labels = np.asarray(self.source(start, pdf.index, X.shape[0], self.m, self.seed),
                            dtype=np.int64)
        out = pd.DataFrame(X, columns=self.columns()[:-2])
        out["y"] = np.asarray(y, dtype=np.float64)
        out["g"] = labels
        return out


@dataclass(frozen=True)
class GroupLogistic:
    """The logistic fits of the groups in one shuffled partition: ``{"ids", "models"}``."""

    p: int
    ridge: float
    median: bool = False

    def __call__(self, pdf: pd.DataFrame) -> dict:
        from .._kernels.logistic import group_logistic
        from ..estimators.tukey.glm_bias import median_bias_reduce
        g = np.asarray(pdf.index, dtype=np.int64)
        ids, local = np.unique(g, return_inverse=True)
        X = np.ascontiguousarray(pdf.iloc[:, :self.p].to_numpy(dtype=np.float64))
        y = np.ascontiguousarray(pdf["y"].to_numpy(dtype=np.float64))
        models = group_logistic(X, y, local.astype(np.int64), int(ids.size), self.ridge) \
            if ids.size else np.zeros((0, self.p))
        if self.median and ids.size:      # each group's rows only: still one row, one model
            models = median_bias_reduce(X, y, local.astype(np.int64), int(ids.size), models)
        return {"ids": ids, "models": np.asarray(models)}


def _assemble(m: int, p: int, *parts: dict) -> np.ndarray:
    out = np.zeros((m, p))
    for part in parts:
        out[part["ids"]] = part["models"]
    return out


def shuffled_models(ddf, rows: LabelledRows, ridge: float, median: bool = False) -> np.ndarray:
    """The ``(m, p')`` group models of the module docstring (computed on the workers)."""
    import dask
    import dask.dataframe as dd
    meta = rows.meta()
    parts = [dask.delayed(rows)(part, i) for i, part in enumerate(ddf.to_delayed())]
    labelled = dd.from_delayed(parts, meta=meta, verify_meta=False)
    # the labels are uniform on {0..m-1}: public, equal-width label ranges as divisions, so
    # no quantile of anything is computed; rows move to the partition of their label's range
    k = max(1, min(int(ddf.npartitions), int(rows.m)))
    bounds = sorted(set(np.linspace(0, rows.m - 1, k + 1).round().astype(int).tolist()))
    bounds = bounds if len(bounds) > 1 else [0, int(rows.m) - 1]
    grouped = labelled.set_index("g", divisions=bounds, sort=True)
    p = len(rows.keep)
    fits = [dask.delayed(GroupLogistic(p, float(ridge), bool(median)))(part)
            for part in grouped.to_delayed()]
    return dask.compute(dask.delayed(_assemble)(int(rows.m), p, *fits))[0]
