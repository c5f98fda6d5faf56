"""No released value depends on how a dask frame is partitioned (issue 17, item 3): the sums
the mechanisms release are exact sums on fixed-point grids (dpstats._kernels.row_sums), so a
seeded fit gives the same bits on 1, 3 or 7 partitions. The broken variant, float sums merged
across partitions (the code before), does not: checked in process with dask's synchronous
scheduler, where the patch reaches the partition code.

Output and objective perturbation's ridge solver sums its loss, gradient and Hessian to 2^-66
of their bounds (dpstats._kernels.exact_sums: not the released sums' coarse grid, which would
move the minimiser beyond the tolerance its privacy allows), also the same bits on any
partitioning. Not covered: the Tukey and SubLasso per-group sums (floats)."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from test_dask_fit import frame  # noqa: E402

import dpstats as dp  # noqa: E402
import dpstats.dask.passes as passes  # noqa: E402

FITS = {
    "adassp": lambda d: dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, method="adassp",
                                 random_state=3),
    "bas": lambda d: dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, method="bas", T=8,
                              random_state=3),
    "dpgd": lambda d: dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, method="dpgd", epochs=8,
                               random_state=3),
    "fw": lambda d: dp.dp_lm("y ~ x1 + x2 + x3", d, eps=1.0, method="fw", T=25, screen=5,
                             random_state=3),
    "objpert": lambda d: dp.dp_glm("g ~ x1 + x2 + x3", d, eps=2.0, method="objpert",
                                   random_state=4),
    "outpert": lambda d: dp.dp_glm("g ~ x1 + x2 + x3", d, eps=2.0, method="outpert",
                                   random_state=4),
}


def _binary():
    df = frame()
    df["g"] = (df.y > 1.5).astype(float)
    return df.drop(columns="y")


def _released(fit) -> bytes:
    """The fit's coefficients and standard errors, as bits."""
    return np.r_[fit.params.to_numpy(), fit.bse.to_numpy()].tobytes()


@pytest.mark.parametrize("method", list(FITS))
def test_the_same_bits_on_any_partitioning(client, method):
    df = _binary() if method.endswith("pert") else frame()
    bits = {_released(FITS[method](dd.from_pandas(df, npartitions=k))) for k in (1, 3, 7)}
    assert len(bits) == 1


def _float_tdot(A, B, bound_a, bound_b):
    return np.asarray(A, dtype=np.float64).T @ B


def test_float_merges_depend_on_the_partitioning(monkeypatch):
    """The broken variant: float Gram matrices and rounds merged across partitions."""
    import dask
    df, parts = frame(20_000), (1, 2, 3, 5, 7, 11)
    with dask.config.set(scheduler="synchronous"):
        exact = {_released(FITS["bas"](dd.from_pandas(df, npartitions=k))) for k in parts}
        monkeypatch.setattr(passes, "tdot_fixed", _float_tdot)
        broken = {_released(FITS["bas"](dd.from_pandas(df, npartitions=k))) for k in parts}
    assert len(exact) == 1
    assert len(broken) > 1


def test_float_solver_sums_depend_on_the_partitioning(monkeypatch):
    """The broken variant for the ridge solver: its loss, gradient and Hessian summed in floats
    per partition (the code before exact_sums)."""
    import dask

    import dpstats.dask.glm as dask_glm
    df = frame(20_000)
    df["g"] = (df.y > 1.5).astype(float)
    df, parts = df.drop(columns="y"), (1, 2, 3, 5, 7, 11)
    with dask.config.set(scheduler="synchronous"):
        exact = {_released(FITS["objpert"](dd.from_pandas(df, npartitions=k))) for k in parts}
        monkeypatch.setattr(dask_glm, "cross_sum", lambda U, v, b: np.asarray(U).T @ v)
        monkeypatch.setattr(dask_glm, "gram_sum", lambda U, w, b: (np.asarray(U).T * w) @ U)
        broken = {_released(FITS["objpert"](dd.from_pandas(df, npartitions=k))) for k in parts}
    assert len(exact) == 1
    assert len(broken) > 1
