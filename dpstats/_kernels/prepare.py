"""Compile the kernels a request may use before it runs, and say so: the compile notice.

numba caches compiled kernels on disk (``cache=True``); with an empty cache the first call of a
kernel compiles it. A fit announces that, and compiles ahead, from its *public arguments* and
public values and the cache state only, never from the path the data takes.
:func:`request_units` lists the kernel units a request may use from its public arguments
(``method``, ``select``; every method of the kind for a method not listed). The selector of
``select="auto"`` is chosen from a released row count, so its units are prepared when it is
chosen (the selection stage calls :func:`prepare` with the chosen selector), not both ahead.
:func:`prepare` checks whether each unit is in the cache (numba's on-disk index, read without
compiling) and, when one is not, prints :data:`COMPILING` on stderr (with the expected
seconds) before the kernels run, compiles every missing unit on tiny synthetic inputs of the
fit's argument types with one progress line per unit, and ends with a "done" line. The fit
then compiles nothing, so what the notice says and when depends on public arguments, released
values and the cache only. A unit marked ``on_demand`` (the Tukey group OLS, plain numpy on
small designs) is left out of that (:func:`ahead`) and prepared, with the same notice, by its
caller just before the kernel's first call, from public sizes only
(:func:`dpstats._kernels.tukey_ols.group_ols`). ``DPSTATS_QUIET=1`` silences it;
``python -m dpstats warmup`` (:func:`prepare` of every unit) compiles all units at once.

>>> request_units("lm", "tukey", "auto"), request_units("lm", "fw", "kendall")
(('tukey',), ('fw', 'kendall', 'shuffle'))
>>> request_units("glm", "dpgd", None), request_units("select", None, "sublasso")
((), ('sublasso',))
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from dataclasses import dataclass

import numpy as np

from .runtime import quiet

__all__ = ["UNITS", "COMPILING", "request_units", "ahead", "missing_units", "prepare",
           "compile_notice"]

#: First line on stderr when a request's kernels must be compiled ({seconds} filled in).
COMPILING = ("dpstats: compiling numerical kernels once (about {seconds} s); cached for later "
             "runs (`python -m dpstats warmup` does it ahead of time)")


@dataclass(frozen=True)
class Unit:
    """Kernels compiled together: ``module`` (in ``dpstats._kernels``), its entry dispatchers
    ``kernels`` (callees are cached inside them), a label, and the measured cold compile time
    on the two-core test machine (``benchmarks/first_run.py``), for the notice's estimate."""

    label: str
    module: str
    kernels: tuple[str, ...]
    seconds: float
    #: Prepared by the code that calls the kernel, once it knows (from public sizes) that it
    #: will (see :func:`ahead`), not ahead of every request that may use it.
    on_demand: bool = False


#: Every unit of numba kernels a fit can call.
UNITS = {
    "shuffle": Unit("Fisher-Yates shuffle", "shuffle", ("fisher_yates",), 0.4),
    "kendall": Unit("DPKendall ranks", "kendall_ranks", ("_ranks_kernel", "_discordant_kernel"),
                    1.3),
    "sublasso": Unit("SubLasso supports", "lasso", ("_support_kernel",), 4.0),
    "fw": Unit("Frank-Wolfe gradients", "frank_wolfe",
               ("_derivatives", "_xt_dot", "_vertex_scores", "_sum_loss"), 0.6),
    # plain numpy below a public size (m p^2, dpstats._kernels.tukey_ols): prepared there
    "tukey": Unit("Tukey group OLS", "tukey", ("_group_ols_kernel", "_cells_kernel",
                                               "_clip_kernel"), 13.0,
                  on_demand=True),     # and the private centre's cell counts (centre_cells)
    #                                    and the intervals' design moments (moments)
    "tukey_glm": Unit("Tukey group logistic", "logistic", ("group_logistic",), 5.0),
}

#: Units of each selector, and of each method by kind.
_SELECTOR_UNITS = {"kendall": ("kendall", "shuffle"), "sublasso": ("sublasso",), "sis": ()}
# (a method chosen automatically from released values may be added here as "name": () with a
# prepare(request_units(kind, chosen, None)) where it is chosen, as select="auto" does)
_METHOD_UNITS = {
    "lm": {"tukey": ("tukey",), "fw": ("fw",), "adassp": (), "bas": (), "dpgd": (), "ols": (),
           "auto": ()},   # "auto": prepared once chosen from the released row count
    "glm": {"tukey": ("tukey_glm",), "fw": ("fw",), "dpgd": (), "outpert": (), "objpert": (),
            "auto": ()},   # "auto" chooses outpert or objpert (numpy/scipy only)
}


def request_units(kind: str, method: str | None, selector: str | None) -> tuple[str, ...]:
    """Units a request may use, from its public arguments: the method's (every method of
    ``kind`` for one not listed, e.g. a method chosen automatically) and the selector's (none
    yet for ``"auto"``: prepared once chosen from the released row count)."""
    names: list[str] = []
    methods = _METHOD_UNITS.get(kind, {})
    if kind != "select" and method is not None:
        names += methods.get(method, sum(methods.values(), ()))
    if selector is not None and selector != "auto":
        names += _SELECTOR_UNITS.get(selector, sum(_SELECTOR_UNITS.values(), ()))
    return tuple(dict.fromkeys(names))


def ahead(names) -> tuple[str, ...]:
    """The units of ``names`` to prepare before a request runs: all but the ``on_demand`` ones
    (the Tukey group OLS runs in plain numpy on small designs; its caller prepares the kernel
    when the public number of groups and columns call for it).

    >>> ahead(("tukey", "kendall"))
    ('kendall',)
    """
    return tuple(n for n in names if not UNITS[n].on_demand)


def _module(unit: Unit):
    return importlib.import_module(f"dpstats._kernels.{unit.module}")


def _cached(dispatcher) -> bool:
    """Whether ``dispatcher`` is compiled in this process or has an entry for this machine in
    numba's on-disk cache index (read without loading or compiling anything)."""
    if not hasattr(dispatcher, "signatures"):   # not (or no longer) a numba kernel
        return True
    if dispatcher.signatures:
        return True
    try:
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
    except Exception:   # no cache (a NullCache, an unwritable location): not cached
        return False
    return any(key[1] == magic for key in index)


def missing_units(names) -> tuple[str, ...]:
    """The units among ``names`` with a kernel neither compiled nor in the cache."""
    out = []
    for name in names:
        unit = UNITS[name]
        module = _module(unit)
        if not all(_cached(getattr(module, k, None)) for k in unit.kernels):
            out.append(name)
    return tuple(out)


def _say(line: str, end: str = "\n") -> None:
    if not quiet():
        print(line, end=end, file=sys.stderr, flush=True)


def prepare(names, say=_say) -> tuple[str, ...]:
    """Compile every unit of ``names`` missing from the cache, saying so through ``say``
    (:data:`COMPILING`, one line per unit, a final line); returns the units compiled.

    >>> prepare(())
    ()
    """
    missing = missing_units(names)
    if not missing:
        return ()
    seconds = sum(UNITS[n].seconds for n in missing)
    say(COMPILING.format(seconds=f"{seconds:.0f}" if seconds >= 1 else "1"))
    start = time.perf_counter()
    for i, name in enumerate(missing, 1):
        say(f"dpstats:   [{i}/{len(missing)}] {UNITS[name].label} ...", end=" ")
        t0 = time.perf_counter()
        try:
            _WARM[name]()
        except Exception as err:  # noqa: BLE001  (a changed kernel API must not fail the fit:
            # it then compiles on first use; tests/kernels/test_compile_notice.py catches this)
            say(f"skipped ({type(err).__name__})")
            continue
        say(f"{time.perf_counter() - t0:.1f} s")
    say(f"dpstats: done compiling in {time.perf_counter() - start:.1f} s (cached for next time)")
    return missing


@contextlib.contextmanager
def compile_notice(kind: str, method: str | None, selector: str | None):
    """Context manager around a fit: before it runs, compile (and announce) the units
    :func:`request_units` lists that the cache lacks.

    >>> with compile_notice("lm", "adassp", None):
    ...     pass
    """
    prepare(ahead(request_units(kind, method, selector)))
    yield


# -- compiling each unit on tiny inputs of the argument types a fit passes ---------------------

def _design(n: int = 60, p: int = 4) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.float64)[:, None]
    X = np.sin(i * np.sqrt(np.arange(2, p + 2, dtype=np.float64)) + np.arange(p))
    X[:, 0] = 1.0
    return X, X[:, 1] - 0.5 * X[:, 2] + np.cos(i[:, 0] * 7.1)


def _warm_shuffle() -> None:
    from .shuffle import fisher_yates
    fisher_yates(np.zeros(3, dtype=np.int64))


def _warm_kendall() -> None:
    from .kendall_ranks import discordant_ranked, permuted_ranks
    X, y = _design()
    R = permuted_ranks(X)
    discordant_ranked(R, permuted_ranks(y[:, None])[0])


def _warm_sublasso() -> None:
    from .lasso import lasso_topk_support
    X, y = _design()
    lasso_topk_support(X, y, np.arange(60, dtype=np.int64) % 3, 3, 2, 0)


def _warm_fw() -> None:
    from .frank_wolfe import loss_gradient, sum_loss, vertex_scores
    X, y = _design()
    for loss in ("squared", "logistic"):
        g, _ = loss_gradient(np.ascontiguousarray(X.T), np.zeros(60), np.sign(y), loss)
        sum_loss(np.zeros(60), np.sign(y), loss)
    vertex_scores(g, 1.0)


def _warm_tukey() -> None:
    from .centre_cells import cell_count_buffer, column_cells
    from .tukey import group_ols
    X, y = _design()
    group_ols(X, y, np.arange(60, dtype=np.int64) % 3, 3)
    lo, hi = (int(np.float64(v).view(np.int64)) for v in (2.0**-64, 2.0**64))
    keys = (lo, hi, 42, ((hi - lo) >> 42) * 2)      # mechanisms.centre.CELL_KEYS
    column_cells(X[:, 1], cell_count_buffer(keys[3]), keys)
    from .moments import clip_block
    clip_block(X, 0, 8, np.arange(1, 4, dtype=np.intp), np.zeros(3), np.ones(3), 3.0,
               np.empty((8, 3), order="F"))


def _warm_tukey_glm() -> None:
    from .logistic import group_logistic
    X, y = _design()
    group_logistic(X, (y > 0).astype(np.float64), np.arange(60, dtype=np.int64) % 3, 3, 1e-6)


_WARM = {"shuffle": _warm_shuffle, "kendall": _warm_kendall, "sublasso": _warm_sublasso,
         "fw": _warm_fw, "tukey": _warm_tukey, "tukey_glm": _warm_tukey_glm}
