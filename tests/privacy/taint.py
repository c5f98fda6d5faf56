"""Taint harness: run a public entry point with every mechanism replaced by a data-blind stub,
on neighbouring data sets, and list every output that still differs.

A differentially private program may look at the data only through its mechanisms. Replace
each mechanism by a stub whose output does not depend on its data input, and the whole program
must become a function of the public inputs alone: on neighbouring data sets ``D`` and ``D'``
(``D'`` = ``D`` plus one row) every output has to be identical, bit for bit. Whatever still
differs is a data flow that no mechanism paid for.

**The stubs** (:class:`Tape`). A call is first run on ``D`` with the real mechanisms
(``record``): every top-level mechanism call's output is taped, in call order. The runs on
``D`` and on each ``D'`` then *replay* the tape (``replay``): each stub checks that the call is
the next one on the tape (the same function), runs the real mechanism with the real arguments
and a throw-away generator (so the ledger is charged exactly as for real, and the mechanism's
own argument checks run) and returns the taped output instead of its own. Stub outputs are
therefore realistic (they are what the real mechanisms released on ``D``), yet independent of
the data each run passes in. Replaying on ``D`` must reproduce the real run on ``D`` exactly
(``fidelity``), which shows the stubs change nothing but the data flow.

* Releases (:data:`RELEASES`) return the taped value. (Were the restricted Tukey mechanism to
  return ``(point, depth)`` again, its stub would return the taped point and the depth *of
  that point in the models it was given*, so a released depth shows up as a difference.)
* Data-independent draws (:data:`DRAWS`: group labels, row orders, jitter) replay the taped
  draw; rows beyond the recording (``D'`` has one more) get fixed values.
* :data:`NO_DATA` take a generator but no data and run for real; :data:`INTERNAL_MODULES`
  and private helpers are reached only through the stubbed functions (checked by
  :func:`internal_used_outside`). Draws straight from a generator outside the mechanisms are
  the layout test's business (``tests/test_layout.py``).

:func:`unregistered` lists every function of ``dpstats/mechanisms`` that takes ``rng`` (or
draws from ``self._rng``) and is in none of these registries: a new mechanism makes the taint
test fail until it gets a stub.

**What is compared** (:func:`observe`): the exception (type and message), the warnings
(category and message), the sequence of mechanism calls with their public arguments, and for a
result: ``repr``, ``str``, the text and HTML summaries, ``_repr_html_``, ``tidy()``, ``params``
(exact bits), every dataclass field (recursively, exact), ``spent`` and ``ledger``, the CLI's
JSON dict (:func:`dpstats.__main__.result_dict`), predictions on a fixed public frame, and
``pickle.dumps(result)``; for the command line its exit status, stdout and stderr. Separately,
:func:`row_locality` checks that the design of ``D'`` is the design of ``D`` plus one row (a
formula that reduces over rows, e.g. ``I(x * 0 + x.shape[0])``, breaks the privacy unit even
though its values only ever reach mechanisms).

Known leaks (issue 14, being fixed elsewhere) are recognised by :data:`KNOWN_LEAKS`: a report
whose every difference is explained by them raises :class:`KnownLeak`, anything else an
``AssertionError``.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import hashlib
import importlib
import inspect
import pickle
import pkgutil
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats

ROOT = Path(dpstats.__file__).resolve().parent
MECH = "dpstats.mechanisms"

# ------------------------------------------------------------------------------ the registry
#: Mechanisms that release something computed from data: stubbed (taped output). The value is
#: the tuple of arguments that carry data (left out of the public call record).
RELEASES: dict[str, tuple[str, ...]] = {
    f"{MECH}.additive.laplace": ("value",),
    f"{MECH}.additive.gaussian": ("value",),
    f"{MECH}.additive.private_count": ("n",),
    f"{MECH}.choice.exponential": ("scores", "log_base"),
    f"{MECH}.choice.peel_topk": ("scores",),
    f"{MECH}.lipschitz.lipschitz_topk": ("scores",),
    f"{MECH}.bounds.private_quantile": ("values",),
    f"{MECH}.bounds.private_bounds": ("X", "y"),
    f"{MECH}.centre.private_centre_value": ("values",),
    f"{MECH}.model_spread.window_counts": ("deviations",),
    f"{MECH}.design_moments.design_moments": ("X", "sums"),
    f"{MECH}.weighted_moments.weighted_moments": ("X", "weights"),
    f"{MECH}.curvature.release_curvature": ("U", "weights"),
    f"{MECH}.meat.release_meat": ("X", "r"),
    f"{MECH}.ptr.ptr_check": ("logV", "logW"),
    f"{MECH}.tukey_em.restricted_tukey_em": ("S",),
    f"{MECH}.tukey_em.sample_point_with_depth": ("S", "i"),
    f"{MECH}.gdp.GaussianGDP.release": ("value",),
    f"{MECH}.levels.private_levels": ("histograms",),
    f"{MECH}.objective.ObjectivePerturbation.release": ("value",),
}
#: Data arguments whose *shape* is public (the number of columns, candidates or models, not of
#: rows): a replay with another shape than the recording is a difference in itself.
PUBLIC_SHAPES: dict[str, tuple[str, ...]] = {
    f"{MECH}.additive.laplace": ("value",),
    f"{MECH}.additive.gaussian": ("value",),
    f"{MECH}.choice.exponential": ("scores",),
    f"{MECH}.choice.peel_topk": ("scores",),
    f"{MECH}.lipschitz.lipschitz_topk": ("scores",),
    f"{MECH}.model_spread.window_counts": ("deviations",),
    f"{MECH}.ptr.ptr_check": ("logV", "logW"),
    f"{MECH}.tukey_em.restricted_tukey_em": ("S",),
    f"{MECH}.gdp.GaussianGDP.release": ("value",),
    f"{MECH}.objective.ObjectivePerturbation.release": ("value",),
}
#: Data-independent draws (they read only sizes): stubbed too, replayed from the tape.
DRAWS: dict[str, tuple[str, ...]] = {
    f"{MECH}.sampling.random_groups": ("n",),
    f"{MECH}.sampling.random_permutation": ("n",),
    f"{MECH}.sampling.uniform_jitter": (),
}
#: Functions that take a generator but no data: they run for real.
NO_DATA: dict[str, str] = {
    f"{MECH}.gdp.GaussianGDP.__init__": "a plan (eps, delta, counts): charges the ledger and "
                                        "keeps the generator for release()",
    f"{MECH}.sampling.group_seed": "one integer seed for a dask fit's row-numbered group "
                                   "labels (reads no data)",
    f"{MECH}.objective.ObjectivePerturbation.__init__": "draws the objective's linear term "
                                                        "(size, eps, delta only) and charges "
                                                        "the ledger",
}
#: Data-free planning simulations that run real mechanisms on simulated data (a fixed seed)
#: and are cached per process: the mechanisms they call run for real, untaped (as if nested
#: in a stubbed mechanism), so a cold recording and a warm replay make the same taped calls.
PLANNING: dict[str, str] = {
    f"{MECH}.model_spread.tukey_noise_factor": "the Tukey point's noise factor f(m, p, eps): "
                                               "simulated Gaussian clouds, no data",
}


def _planning_wrapper(original):
    # no functools.wraps: ``__wrapped__`` would expose the original's defaults to the
    # reference checks (its bound ``_em`` is deliberately the real mechanism)
    def planning(*args, **kwargs):
        tape = _ACTIVE
        if tape is None:
            return original(*args, **kwargs)
        tape.depth += 1
        try:
            return original(*args, **kwargs)
        finally:
            tape.depth -= 1
    return planning


#: Modules of samplers used by the mechanisms only (never imported outside mechanisms/).
INTERNAL_MODULES: dict[str, str] = {
    "noise": "grid Laplace / Gaussian / Gumbel samplers behind the mechanisms",
    "discrete": "exact discrete samplers behind noise",
}


def stubbed_names() -> list[str]:
    """Every function the harness replaces."""
    return sorted(RELEASES) + sorted(DRAWS)


# ------------------------------------------------------------------ enumerating the mechanisms
def read_sources(root: Path = ROOT) -> dict[str, str]:
    """``{module name: source}`` for every ``.py`` file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text()
    return out


def _takes_rng(fn: ast.FunctionDef) -> bool:
    a = fn.args
    return any(x.arg == "rng" for x in [*a.posonlyargs, *a.args, *a.kwonlyargs])


def _reads_self_rng(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("rng", "_rng")
               and isinstance(n.value, ast.Name) and n.value.id == "self" for n in ast.walk(fn))


def rng_functions(sources: dict[str, str]) -> list[str]:
    """Qualified names of the module-level functions and methods of ``dpstats.mechanisms``
    that take an ``rng`` argument or draw from ``self._rng``."""
    out = []
    for module, source in sorted(sources.items()):
        if not module.startswith(MECH):
            continue
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and _takes_rng(node):
                out.append(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef):
                out += [f"{module}.{node.name}.{item.name}" for item in node.body
                        if isinstance(item, ast.FunctionDef)
                        and (_takes_rng(item) or _reads_self_rng(item))]
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def classify(name: str) -> str | None:
    """``"release"``, ``"draw"``, ``"no data"``, ``"internal"`` or None (unregistered)."""
    if name in RELEASES:
        return "release"
    if name in DRAWS:
        return "draw"
    if name in NO_DATA:
        return "no data"
    rest = name[len(MECH) + 1:].split(".")
    if rest[0] in INTERNAL_MODULES or any(_private(part) for part in rest[1:]):
        return "internal"
    return None


def unregistered(sources: dict[str, str]) -> list[str]:
    """Mechanism functions that take a generator and have no stub and no classification."""
    return [name for name in rng_functions(sources) if classify(name) is None]


def _import_target(module: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def internal_used_outside(sources: dict[str, str], packages=None) -> list[str]:
    """Places outside ``dpstats.mechanisms`` that import or name an internal sampler (a
    function of :data:`INTERNAL_MODULES`, a private helper of a mechanism module, or one of
    those modules): such a call would bypass every stub. ``packages``: the module names that
    are packages (default: read from the tree)."""
    if packages is None:
        packages = {m for m in sources
                    if ROOT.parent.joinpath(*m.split("."), "__init__.py").exists()}
    internal = {n.rsplit(".", 1)[-1] for n in rng_functions(sources) if classify(n) == "internal"}
    bad = []
    for module, source in sorted(sources.items()):
        if module.startswith(MECH):
            continue
        is_pkg = module in packages
        for node in ast.walk(ast.parse(source)):
            where = f"{module}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom):
                target = _import_target(module, node, is_pkg)
                if not target.startswith(MECH):
                    continue
                last = target.rsplit(".", 1)[-1]
                for alias in node.names:
                    if (last in INTERNAL_MODULES or _private(alias.name)
                            or (target == MECH and alias.name in INTERNAL_MODULES)
                            or alias.name in internal):
                        bad.append(f"{where}: from {target} import {alias.name}")
            elif isinstance(node, ast.Import):
                bad += [f"{where}: import {a.name}" for a in node.names
                        if a.name.startswith(MECH) and a.name.split(".")[-1] in INTERNAL_MODULES]
            elif isinstance(node, ast.Attribute) and (
                    node.attr in internal or (node.attr in INTERNAL_MODULES
                                              and _dotted(node.value).endswith("mechanisms"))):
                bad.append(f"{where}: {_dotted(node.value)}.{node.attr}")
    return bad


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "(...)"


# ---------------------------------------------------------------------------------- the tape
class TapeMismatch(RuntimeError):
    """A replayed run made a mechanism call the recording did not: its sequence of mechanism
    calls depends on data that no mechanism released."""


@dataclasses.dataclass
class Tape:
    """Outputs of the top-level mechanism calls of one recorded run, and the replay cursor."""

    mode: str = "record"
    outputs: list = dataclasses.field(default_factory=list)
    calls: list = dataclasses.field(default_factory=list)
    pos: int = 0
    depth: int = 0

    def rewind(self, mode: str) -> None:
        self.mode, self.calls, self.pos, self.depth = mode, [], 0, 0


#: The tape of the run in progress (None: every stub calls straight through).
_ACTIVE: Tape | None = None


def _summary(value) -> object:
    """A comparable, compact form of a public argument."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, hashlib.sha1(value.tobytes()).hexdigest())
    if isinstance(value, float | np.floating):
        return float(value).hex()
    return repr(value)


def _public_args(name: str, bound: inspect.BoundArguments) -> tuple:
    skip = {*RELEASES.get(name, ()), *DRAWS.get(name, ()), "rng", "ledger", "self"}
    return (name.rsplit(".", 1)[-1],
            tuple((k, _summary(v)) for k, v in bound.arguments.items() if k not in skip))


def _charge(original, bound: inspect.BoundArguments) -> None:
    """The real mechanism on the real arguments with a throw-away generator: it charges the
    ledger and runs its checks; its output is discarded."""
    throwaway = np.random.default_rng(20240614)
    args = dict(bound.arguments)
    plan = args.get("self")
    if "rng" in args:
        args["rng"] = throwaway
        original(**args)
    elif plan is not None and hasattr(plan, "_rng"):
        kept, plan._rng = plan._rng, throwaway
        try:
            original(**args)
        finally:
            plan._rng = kept


def approx_depth(S: np.ndarray, point: np.ndarray) -> int:
    """Approximate Tukey depth of ``point`` in the sorted models ``S`` (capped at the largest
    depth the mechanism samples): the depth the restricted mechanism returns with it."""
    from dpstats._kernels.depth import max_depth
    below = (S <= point).sum(axis=0)
    above = (S >= point).sum(axis=0)
    return int(min(int(np.minimum(below, above).min()), max_depth(S.shape[0])))


def _replay_tukey_em(out, bound):
    if isinstance(out, tuple) and len(out) == 2 and out[0] is not None:
        point = np.array(out[0], copy=True)
        return point, approx_depth(np.asarray(bound.arguments["S"]), point)
    return copy.deepcopy(out)


def _replay_groups(out, bound):
    n, m = int(bound.arguments["n"]), int(bound.arguments["m"])
    if out.size and int(out.max()) >= m:
        raise TapeMismatch(f"random_groups into {m} groups; the recording drew more")
    if n <= out.size:
        return out[:n].copy()
    return np.concatenate([out, np.arange(out.size, n, dtype=np.int64) % m])


def _replay_permutation(out, bound):
    n = int(bound.arguments["n"])
    if n <= out.size:
        return out[out < n].copy()
    return np.concatenate([out, np.arange(out.size, n, dtype=out.dtype)])


def _replay_jitter(out, bound):
    shape = tuple(np.atleast_1d(bound.arguments["shape"]))
    if out.shape != shape:
        raise TapeMismatch(f"uniform_jitter of shape {shape}; the recording drew {out.shape}")
    return out.copy()


_REPLAY: dict[str, Callable] = {
    f"{MECH}.tukey_em.restricted_tukey_em": _replay_tukey_em,
    f"{MECH}.sampling.random_groups": _replay_groups,
    f"{MECH}.sampling.random_permutation": _replay_permutation,
    f"{MECH}.sampling.uniform_jitter": _replay_jitter,
}


def _shapes(name: str, bound: inspect.BoundArguments) -> tuple:
    return tuple(np.shape(bound.arguments[a]) for a in PUBLIC_SHAPES.get(name, ()))


def _make_stub(name: str, original):
    sig = inspect.signature(original)

    @functools.wraps(original)
    def stub(*args, **kwargs):
        tape = _ACTIVE
        if tape is None or tape.depth:            # nested inside a stubbed mechanism: real
            return original(*args, **kwargs)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        tape.calls.append(_public_args(name, bound))
        tape.depth += 1
        try:
            if tape.mode == "record":
                out = original(*args, **kwargs)
                tape.outputs.append((name, copy.deepcopy(out), _shapes(name, bound)))
                return out
            k, tape.pos = tape.pos, tape.pos + 1
            if k >= len(tape.outputs) or tape.outputs[k][0] != name:
                want = tape.outputs[k][0] if k < len(tape.outputs) else "nothing"
                raise TapeMismatch(f"mechanism call #{k} is {name}; the recording made {want}")
            _, out, shapes = tape.outputs[k]
            if _shapes(name, bound) != shapes:
                raise TapeMismatch(f"mechanism call #{k} ({name}) on data of shape "
                                   f"{_shapes(name, bound)}; the recording had {shapes}")
            if name in RELEASES:
                _charge(original, bound)
            return _REPLAY.get(name, lambda out, _: copy.deepcopy(out))(out, bound)
        finally:
            tape.depth -= 1

    stub.__taint_stub__ = True
    return stub


def _resolve(qualname: str):
    """``(owner, attribute, original)`` for a registered name (a function or a method)."""
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:-1]:
            owner = getattr(owner, attr)
        return owner, parts[-1], getattr(owner, parts[-1])
    raise LookupError(qualname)


def _replace_everywhere(name: str, make, undo: list):
    """Bind ``make(original)`` wherever ``name``'s function is bound (its owner and every
    ``dpstats`` module attribute bound to it), recording each old binding in ``undo``; the
    original."""
    owner, attr, original = _resolve(name)
    new = make(original)
    sites = [(owner, attr)] + [(mod, key) for mod in _modules() if mod is not owner
                               for key, value in list(vars(mod).items()) if value is original]
    for where, key in sites:
        undo.append((where, key, getattr(where, key)))
        setattr(where, key, new)
    return original


def import_everything() -> None:
    """Import every dpstats module (so every use site is bound before the stubs go in) and
    resolve the lazy exports of ``dpstats.mechanisms`` (so its cache holds the originals)."""
    import dpstats.mechanisms as mech
    for info in pkgutil.walk_packages([str(ROOT)], prefix="dpstats."):
        if not info.name.startswith("dpstats.lab"):
            importlib.import_module(info.name)
    for name in mech.__all__:
        getattr(mech, name)


def _modules() -> list:
    import sys
    return [mod for name, mod in list(sys.modules.items())
            if name == "dpstats" or name.startswith("dpstats.")]


def unpatched_references(originals: dict) -> list[str]:
    """References to an original mechanism that the stubs did not replace: in default
    arguments or closures of dpstats functions and methods, or inside module-level containers
    (a registry dict, a tuple of releasers). Call with the stubs installed."""
    ids = {id(f): name for name, f in originals.items()}
    found = []

    def look(where: str, value, depth: int = 0) -> None:
        if id(value) in ids:
            found.append(f"{where} -> {ids[id(value)]}")
        elif depth < 3 and isinstance(value, dict):
            for k, v in value.items():
                look(f"{where}[{k!r}]", v, depth + 1)
        elif depth < 3 and isinstance(value, list | tuple | set | frozenset):
            for v in value:
                look(f"{where}[...]", v, depth + 1)

    def function(where: str, fn) -> None:
        fn = inspect.unwrap(fn) if not getattr(fn, "__taint_stub__", False) else fn
        code = getattr(fn, "__code__", None)
        if code is None or getattr(fn, "__taint_stub__", False):
            return
        for i, v in enumerate(fn.__defaults__ or ()):
            look(f"{where} default {i}", v)
        for k, v in (fn.__kwdefaults__ or {}).items():
            look(f"{where} default {k}", v)
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
            with contextlib.suppress(ValueError):
                look(f"{where} closure {name}", cell.cell_contents)

    for mod in _modules():
        for key, value in list(vars(mod).items()):
            where = f"{mod.__name__}.{key}"
            if inspect.isfunction(value):
                function(where, value)
            elif inspect.isclass(value) and value.__module__.startswith("dpstats"):
                for attr, member in list(vars(value).items()):
                    if inspect.isfunction(member):
                        function(f"{where}.{attr}", member)
            elif not inspect.ismodule(value):
                look(where, value)
    return found


@contextlib.contextmanager
def stubs_installed():
    """Replace every registered mechanism by its stub at its definition and at every use site
    (each ``dpstats`` module attribute bound to it); restored on exit."""
    import_everything()
    undo, originals = [], {}
    try:
        for name in stubbed_names():
            original = _replace_everywhere(name, lambda f, n=name: _make_stub(n, f), undo)
            assert not getattr(original, "__taint_stub__", False), f"{name} is stubbed twice"
            originals[name] = original
        for name in PLANNING:
            _replace_everywhere(name, _planning_wrapper, undo)
        yield originals
    finally:
        for where, key, value in reversed(undo):
            setattr(where, key, value)


@contextlib.contextmanager
def taping(tape: Tape, mode: str):
    global _ACTIVE
    tape.rewind(mode)
    _ACTIVE = tape
    try:
        yield tape
    finally:
        _ACTIVE = None


# ------------------------------------------------------------------------------- observation
def canon(obj) -> object:
    """An exact, comparable form: floats by their bits, frames and series with index and
    dtype, dataclasses field by field, other objects by their pickle."""
    if obj is None or isinstance(obj, bool | int | str | bytes):
        return obj
    if isinstance(obj, float | np.floating):
        return ("float", float(obj).hex())
    if isinstance(obj, np.integer | np.bool_):
        return ("np", obj.dtype.str, obj.item())
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "O":
            return ("array", obj.shape, tuple(canon(v) for v in obj.ravel()))
        return ("array", obj.shape, obj.dtype.str, obj.tobytes())
    if isinstance(obj, pd.Series):
        return ("series", obj.name, str(obj.dtype), canon(obj.index), canon(obj.to_numpy()))
    if isinstance(obj, pd.Index):
        return ("index", str(obj.dtype), canon(obj.to_numpy()))
    if isinstance(obj, pd.DataFrame):
        return ("frame", canon(obj.columns), canon(obj.index),
                tuple((str(c), str(obj[c].dtype), canon(obj[c].to_numpy())) for c in obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__, tuple((f.name, canon(getattr(obj, f.name)))
                                          for f in dataclasses.fields(obj)))
    if isinstance(obj, dict):
        return ("dict", tuple((repr(k), canon(v)) for k, v in obj.items()))
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(canon(v) for v in obj))
    try:
        return ("pickle", type(obj).__name__, pickle.dumps(obj))
    except Exception:   # (anything unpicklable is compared by its repr)
        return ("repr", repr(obj))


@dataclasses.dataclass
class CliRun:
    """What ``python -m dpstats ...`` produced (run in-process)."""

    status: int | str
    stdout: str
    stderr: str


def _attempt(make: Callable) -> object:
    """``make()``, or the exception it raised (type and message): both are outputs."""
    try:
        return make()
    except Exception as exc:   # (a method that fails on one data set only is a difference)
        return ("raised", type(exc).__name__, str(exc))


def render(result, newdata: pd.DataFrame | None = None) -> dict[str, object]:
    """Every output of a result (see the module docstring)."""
    if isinstance(result, CliRun):
        return {"cli status": result.status, "cli stdout": result.stdout,
                "cli stderr": result.stderr}
    from dpstats.__main__ import result_dict
    summary = result.summary()
    out = {"repr": repr(result), "str": str(result), "summary": summary.as_text(),
           "summary html": summary.as_html(), "_repr_html_": result._repr_html_(),
           "spent": canon(result.spent), "ledger": canon(result.ledger)}
    for f in dataclasses.fields(result):
        out[f"field {f.name}"] = canon(getattr(result, f.name))
    if hasattr(result, "tidy"):
        tidy = result.tidy()
        out["tidy"], out["tidy text"] = canon(tidy), tidy.to_string()
    if hasattr(result, "params"):
        out["params"] = canon(result.params)
        out["json"] = canon(result_dict(result))
    if newdata is not None and hasattr(result, "predict"):
        out["predict"] = _attempt(lambda: canon(result.predict(newdata)))
        if hasattr(result, "family"):
            out["predict link"] = _attempt(lambda: canon(result.predict(newdata, type="link")))
    out["pickle"] = pickle.dumps(result)
    return out


def observe(run: Callable, data: pd.DataFrame, tape: Tape, mode: str,
            newdata: pd.DataFrame | None = None) -> dict[str, object]:
    """Run ``run(data)`` with the tape in ``mode``; everything it produced, comparable."""
    result = exc = None
    with warnings.catch_warnings(record=True) as caught, taping(tape, mode):
        warnings.simplefilter("always")
        try:
            result = run(data)
        except Exception as err:   # (an exception is an output like any other)
            exc = err
    obs = {"exception": None if exc is None else (type(exc).__name__, str(exc)),
           "warnings": tuple((w.category.__name__, str(w.message)) for w in caught),
           "mechanism calls": tuple(tape.calls)}
    if result is not None:
        obs.update(render(result, newdata))
        if getattr(result, "depth", None) is not None:      # leak 4, masked (see KNOWN_LEAKS)
            obs["masked depth"] = render(dataclasses.replace(result, depth=None), newdata)
    return obs


def _short(value, limit: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _first_difference(a, b) -> str:
    if isinstance(a, str) and isinstance(b, str):
        la, lb = a.splitlines(), b.splitlines()
        for i, (x, y) in enumerate(zip(la, lb, strict=False)):
            if x != y:
                return f"line {i + 1}: {_short(x, 160)!r} vs {_short(y, 160)!r}"
        return f"{len(la)} vs {len(lb)} lines"
    if isinstance(a, bytes) and isinstance(b, bytes):
        return f"{len(a)} vs {len(b)} bytes"
    if isinstance(a, tuple) and isinstance(b, tuple) and a and b and a[0] == b[0] == "tuple":
        a, b = a[1], b[1]       # canon of a tuple: ("tuple", items)
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) > 1 and len(b) > 1:
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"item {i}: {_short(x, 150)} vs {_short(y, 150)}"
        return f"{len(a)} vs {len(b)} items"
    return f"{_short(a)} vs {_short(b)}"


def compare(base: dict, other: dict, skip: tuple[str, ...] = ("masked depth",)) -> dict[str, str]:
    """``{output: first difference}`` for every output that differs."""
    out = {}
    for key in dict.fromkeys([*base, *other]):
        if key in skip:
            continue
        a, b = base.get(key, "<absent>"), other.get(key, "<absent>")
        if a != b:
            out[key] = _first_difference(a, b)
    return out


# -------------------------------------------------------------------------------- row locality
def row_locality(design_of: Callable, base: pd.DataFrame, other: pd.DataFrame) -> dict[str, str]:
    """The design of ``other`` (``base`` with rows added or removed at the end) must be the
    design of ``base`` with those rows: the same columns, and every common row unchanged."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a, b = design_of(base), design_of(other)
        except Exception:   # (errors are compared by observe)
            return {}
    if list(a.columns) != list(b.columns):
        return {"design columns": f"{a.columns} vs {b.columns}"}
    n = min(a.X.shape[0], b.X.shape[0])
    changed = [c for j, c in enumerate(a.columns)
               if canon(a.X[:n, j].copy()) != canon(b.X[:n, j].copy())]
    if canon(a.y[:n].copy()) != canon(b.y[:n].copy()):
        changed.append(f"response {a.label}")
    return {"design rows": f"rows of D changed in {changed}"} if changed else {}


# ---------------------------------------------------------------------------------- the check
def _mask_depth(obs: dict) -> dict:
    """Leak 4: the result rendered with ``depth=None``; CLI text without the depth line."""
    out = {**obs, **obs.get("masked depth", {})}
    if isinstance(out.get("cli stdout"), str):
        out["cli stdout"] = "\n".join(line for line in out["cli stdout"].splitlines()
                                      if "Tukey depth" not in line)
    return out


def _mask_levels(obs: dict) -> dict:
    """Leak 2: a run that read category levels from the data differs everywhere."""
    said = any(cat == "PrivacyLeakWarning" and "category levels" in msg
               for cat, msg in obs.get("warnings", ())) or \
        "category levels" in str(obs.get("cli stderr", ""))
    return {"levels read from the data": True} if said else obs


def _mask_numpy_warnings(obs: dict) -> dict:
    """Numpy's floating-point warnings (``invalid value encountered in log``) dropped."""
    out = dict(obs)
    out["warnings"] = tuple(w for w in obs.get("warnings", ())
                            if not (w[0] == "RuntimeWarning" and "encountered in" in w[1]))
    if isinstance(obs.get("cli stderr"), str):
        out["cli stderr"] = "\n".join(line for line in obs["cli stderr"].splitlines()
                                      if "encountered in" not in line)
    return out


#: Expressions that reduce over rows: one row then changes the column for every row.
_REDUCERS = (".shape", "len(", ".sum(", ".mean(", ".max(", ".min(", ".std(", ".median(")

#: Known leaks of issue 14, fixed on other branches: id -> (description, mask of an
#: observation). A difference is explained when it disappears under the masks.
KNOWN_LEAKS: dict[str, tuple[str, Callable]] = {
    "leak 4": ("the sampled Tukey depth is released", _mask_depth),
    "leak 2": ("category levels are read from the data", _mask_levels),
    "numpy warnings": ("numpy warnings of formula transforms", _mask_numpy_warnings),
    "reducer": ("formula expressions that reduce over rows", lambda obs: obs),
}


def explain(base: dict, other: dict, diffs: dict[str, str]) -> list[str]:
    """The known leaks that together explain every difference (empty: not all explained)."""
    why = []
    rest = {k: v for k, v in diffs.items() if k != "design rows"}
    if "design rows" in diffs:
        if not any(r in diffs["design rows"] for r in _REDUCERS):
            return []
        why.append("reducer")
    if rest:
        a, b = base, other
        for leak, (_, mask) in KNOWN_LEAKS.items():
            ma, mb = mask(a), mask(b)
            if len(compare(ma, mb)) < len(compare(a, b)):
                why.append(leak)
                a, b = ma, mb
        if compare(a, b):
            return []
    return why


class KnownLeak(Exception):
    """Every difference the taint check found is explained by a known leak of issue 14."""


@dataclasses.dataclass
class TaintReport:
    """Differences per neighbour, the known leaks that explain them, and the fidelity check."""

    label: str
    differences: dict[str, dict[str, str]]
    explained: dict[str, str]
    fidelity: dict[str, str]

    @property
    def unexplained(self) -> dict[str, dict[str, str]]:
        return {k: v for k, v in self.differences.items() if k not in self.explained}

    def describe(self) -> str:
        lines = [f"taint check {self.label}:"]
        for nb, diffs in self.differences.items():
            why = self.explained.get(nb)
            lines.append(f"  D' = D, {nb}: {len(diffs)} outputs differ"
                         + (f" (explained by {why})" if why else " (UNEXPLAINED)"))
            keys = list(diffs)
            if "exception" in diffs:   # one run raised: its other outputs are simply absent
                keys = [k for k in keys if k in ("exception", "warnings", "mechanism calls")]
            lines += [f"    {key}: {diffs[key]}" for key in keys]
            if len(keys) < len(diffs):
                lines.append(f"    ... and {len(diffs) - len(keys)} result outputs present in "
                             "one run only")
        return "\n".join(lines)

    def check(self) -> None:
        """Pass when nothing differs; KnownLeak when only known leaks do; else fail."""
        assert not self.fidelity, "stubs are not faithful (harness bug): " + repr(self.fidelity)
        if self.unexplained:
            raise AssertionError(self.describe())
        if self.differences:
            raise KnownLeak(self.describe())


def taint_check(label: str, run: Callable, data: pd.DataFrame,
                neighbours: dict[str, pd.DataFrame], *, design_of: Callable | None = None,
                newdata: pd.DataFrame | None = None) -> TaintReport:
    """Record ``run`` on ``data`` with the real mechanisms, replay it on ``data`` and on each
    neighbour with the stubs, and compare."""
    tape = Tape()
    with stubs_installed():
        real = observe(run, data, tape, "record", newdata)
        base = observe(run, data, tape, "replay", newdata)
        others = {nb: observe(run, d2, tape, "replay", newdata) for nb, d2 in neighbours.items()}
    fidelity = compare(real, base)
    differences, explained = {}, {}
    for nb, obs in others.items():
        diffs = compare(base, obs)
        if design_of is not None:
            diffs.update(row_locality(design_of, data, neighbours[nb]))
        if diffs:
            differences[nb] = diffs
            why = explain(base, obs, diffs)
            if why:
                explained[nb] = ", ".join(why)
    return TaintReport(label, differences, explained, fidelity)
