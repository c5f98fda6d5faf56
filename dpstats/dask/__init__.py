"""Fits on a dask DataFrame: ``dp_lm``, ``dp_glm`` and ``select`` on data that need not fit in
memory, with the same formula, arguments, releases and result as on a pandas frame.

The design is built on each partition by the in-memory code (:mod:`dpstats.formula`), from
the frame's public schema (its dtypes, with declared ``pd.CategoricalDtype`` levels) and the
levels a mechanism released; only small aggregates come back to the client (row counts, level
counts, log-scale histograms, centre value counts, Gram matrices and cross-products, per group
for the Tukey mechanism). Every release is made once, on the client, by the same mechanisms and
charged to the same ledger as in memory (:mod:`dpstats.dask.run`). Nothing reads the data for
free: no ``categorize()``, ``unique()`` or other metadata scan; categorical columns whose
levels dask does not know are text, discovered privately.

Importing this package does not import dask; :func:`run` sends a dask frame to
:func:`dpstats.dask.run.run_dask` and anything else to :func:`dpstats.pipeline.run.run`. (Once
the submodule ``dpstats.dask.run`` is imported, the package attribute ``run`` is that module;
the module is callable as the function, so ``from dpstats.dask import run`` works either way.)
"""

from __future__ import annotations

from ..formula.frames import is_dask_frame
from ..pipeline.run import Outcome
from ..pipeline.run import run as _in_memory

__all__ = ["run", "is_dask_frame"]


def run(request) -> Outcome:
    """Run a validated request: on the dask workers when ``request.data`` is a dask
    DataFrame, in memory otherwise."""
    if is_dask_frame(request.data):
        return run_dask(request)
    return _in_memory(request)


# Importing the submodule ``dpstats.dask.run`` sets the package's ``run`` to that module; it is
# imported here once (it imports no dask) and ``run`` is then this function for good, so that
# ``from dpstats.dask import run`` in an API module loaded later gets the function.
_RUN = run
from .run import run_dask  # noqa: E402

run = _RUN
