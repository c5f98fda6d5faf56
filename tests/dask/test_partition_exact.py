"""No released value depends on how a dask frame is partitioned (issue 17, item 3): the sums
the mechanisms release are exact sums on fixed-point grids (dpstats._kernels.row_sums), so a
seeded fit gives the same bits on 1, 3 or 7 partitions. The broken variant, float sums merged
across partitions (the code before), does not: checked in process with dask's synchronous
scheduler, where the patch reaches the partition code.

Not covered: output and objective perturbation's ridge solver sums its loss, gradient and
Hessian in floats (its privacy rests on an exact minimiser up to the tolerance its output noise
covers, which a grid's error would move), so their minimiser depends on the partitioning in
the last bits; their released curvature (standard errors) is an exact sum."""

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
}


def _released(fit) -> bytes:
    """The fit's coefficients and standard errors, as bits."""
    return np.r_[fit.params.to_numpy(), fit.bse.to_numpy()].tobytes()


@pytest.mark.parametrize("method", list(FITS))
def test_the_same_bits_on_any_partitioning(client, method):
    df = frame()
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
