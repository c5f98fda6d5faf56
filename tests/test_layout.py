"""The layout of the dpstats package: import direction, no cycles, size limits, and the privacy
boundary. Every module is parsed with :mod:`ast` (imports inside functions included, relative
imports resolved); nothing is imported.

Layers, top to bottom. A module may import from its own group and from any lower layer, never
from a higher one:

====  ================================================  =======================================
rank  groups                                            what
====  ================================================  =======================================
0     ``__main__``                                      the command line
1     ``lab``                                           experiments and their plots
2     ``api`` (and the facade ``dpstats``, as target)   entry points: dp_lm, dp_glm, select
      ``sklearn`` (``dpstats/sklearn.py``)             re-exports the scikit-learn estimators
3     ``datasets``                                      shipped data (for api, lab, __main__)
      ``dask``                                          the pipeline on a dask frame's workers
4     ``pipeline``                                      orchestration of one fit
5     ``formula`` ``selection`` ``estimators``          one layer, partially ordered (below)
      ``results``
6     ``mechanisms``                                    the privacy boundary
7     ``_kernels``                                      numba kernels
8     ``validation`` ``withheld``                       argument checks; withheld-reason codes
9     ``errors``                                        exceptions and warnings
====  ================================================  =======================================

* The facade ``dpstats/__init__.py`` re-exports the API lazily and may import anything. As an
  import *target* it ranks with ``api``: ``__main__`` and ``lab`` may ``import dpstats``,
  nothing below may.
* Rank 5 is a partial order: ``results -> formula`` is allowed (``predict`` and ``score``
  rebuild the design of new data from the fitted formula spec). Nothing else crosses within
  the layer: ``estimators -> results`` is not allowed (estimators return an ``Estimate``; the
  pipeline assembles the result), and ``formula``, ``selection`` and ``estimators`` are
  independent of each other.

Further rules: (c) at most :data:`MAX_TOP_MODULES` modules directly in ``dpstats/``; (d) no file
over :data:`MAX_FILE_LINES` lines; (e) at most :data:`MAX_LONG_FUNCTIONS` functions over
:data:`MAX_FUNCTION_LINES` lines (def to end, docstring included; the numba hot loops); (f) only
``dpstats/mechanisms`` draws noise, touches a generator or charges a ledger: no call of
``.charge(`` or of a generator method (:data:`RNG_METHODS`) outside it. Exceptions to (f):

* ``dpstats.lab``: the experiments' train/test splits and seeds are not releases.
* ``dpstats.estimators.tukey.choose_m``: a planning simulation with its own fixed-seed
  generator. It reads no data and never touches the caller's generator; its result is a
  deterministic public function of (p, eps, delta), the same on every run, so it is not the
  randomness of any release.

Each check is a function of a graph or of ``{module: source}``, and is also run on synthetic
broken input to show that it reports what it should.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "dpstats"

#: Layer rank of each group (smaller is higher); see the module docstring.
RANK = {"main": 0, "lab": 1, "api": 2, "facade": 2, "sklearn": 2, "datasets": 3, "dask": 3,
        "pipeline": 4,
        "formula": 5, "selection": 5, "estimators": 5, "results": 5, "mechanisms": 6,
        "_kernels": 7, "validation": 8, "withheld": 8, "errors": 9}
#: Imports allowed between different groups of the same rank (importer, imported).
SAME_RANK_ALLOWED = {("results", "formula"), ("sklearn", "api")}
#: Groups whose modules may import anything.
UNRESTRICTED = {"facade"}

MAX_TOP_MODULES = 8
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 3

#: Generator methods that draw randomness, and generator constructors.
RNG_METHODS = frozenset({"laplace", "normal", "gumbel", "exponential", "integers", "uniform",
                         "permutation", "standard_normal", "random", "choice", "shuffle",
                         "default_rng"})
#: Where noise, generators and ledger charges may appear (module-name prefixes).
BOUNDARY = ("dpstats.mechanisms",)
#: Documented exceptions to the boundary (see the module docstring).
BOUNDARY_EXCEPTIONS = ("dpstats.lab", "dpstats.estimators.tukey.choose_m")


# ---- reading the package ----------------------------------------------------------------------

def read_package(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """``{module name: (source, is_package)}`` for every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path.read_text(), is_pkg)
    return out


def _targets(module: str, is_pkg: bool, node: ast.AST, known) -> list[str]:
    """dpstats modules named by one import statement (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "dpstats"]
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "dpstats":
        return []
    # ``from pkg import sub`` imports the submodule when there is one, else a name of pkg
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target
            for a in node.names]


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> dpstats modules it imports anywhere (module level or inside functions)."""
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for module, (source, is_pkg) in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(module, is_pkg, node, sources):
                    while target not in sources and "." in target:
                        target = target.rsplit(".", 1)[0]     # a name inside a module
                    if target != module:
                        graph[module].add(target)
    return graph


# ---- the checks -------------------------------------------------------------------------------

def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def group_of(module: str) -> str:
    """The layer group of a module: its subpackage, or facade / main / errors / validation."""
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    return "main" if parts[1] == "__main__" else parts[1]


def allowed(importer: str, imported: str) -> bool:
    """Whether a module of group ``importer`` may import one of group ``imported``."""
    if importer == imported or importer in UNRESTRICTED:
        return True
    if RANK[importer] == RANK[imported]:
        return (importer, imported) in SAME_RANK_ALLOWED
    return RANK[importer] < RANK[imported]


def wrong_way_imports(graph: dict[str, set[str]]) -> list[str]:
    """``"a -> b"`` for every import against the layer order (or from an unknown group)."""
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            g, h = group_of(module), group_of(target)
            if g not in RANK or h not in RANK or not allowed(g, h):
                bad.append(f"{module} ({g}) -> {target} ({h})")
    return bad


def top_level_modules(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Module files directly in ``dpstats/`` (``__init__`` included; subpackages are not)."""
    return sorted(m for m, (_, is_pkg) in sources.items()
                  if m == "dpstats" or (m.count(".") == 1 and not is_pkg))


def long_files(sources: dict[str, tuple[str, bool]], limit: int = MAX_FILE_LINES) -> list[str]:
    return [f"{m}: {len(src.splitlines())} lines" for m, (src, _) in sorted(sources.items())
            if len(src.splitlines()) > limit]


def long_functions(sources: dict[str, tuple[str, bool]],
                   limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``"module.function: N lines"`` for every function (methods, nested ones) over ``limit``."""
    out = []
    for module, (source, _) in sorted(sources.items()):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append(f"{module}.{node.name}: {n} lines")
    return out


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "(...)"


def boundary_violations(sources: dict[str, tuple[str, bool]],
                        boundary=BOUNDARY, exceptions=BOUNDARY_EXCEPTIONS) -> list[str]:
    """Calls of ``.charge(`` or of a generator method outside the privacy boundary.

    A call counts when it is ``<receiver>.<method>(...)`` with ``method`` in
    :data:`RNG_METHODS` or ``charge``, unless the receiver is the mechanisms package itself
    (``mechanisms.laplace(...)`` calls a mechanism). Doctest examples are strings, not calls.
    """
    out: list[tuple[str, int, str]] = []
    for module, (source, _) in sorted(sources.items()):
        if module.startswith(tuple(boundary)) or module.startswith(tuple(exceptions)):
            continue
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name, receiver = node.func.attr, _dotted(node.func.value)
            if (name in RNG_METHODS or name == "charge") and "mechanisms" not in receiver:
                out.append((module, node.lineno, f"{receiver}.{name}(...)"))
    return [f"{m}:{line}: {call}" for m, line, call in sorted(out)]


# ---- the package as it is ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def package():
    return read_package()


@pytest.fixture(scope="module")
def graph(package):
    return import_graph(package)


def test_no_import_cycles(graph):
    assert find_cycles(graph) == []


def test_imports_follow_the_layers(graph):
    assert wrong_way_imports(graph) == []


def test_every_group_has_a_layer(package):
    assert {group_of(m) for m in package} <= set(RANK)


def test_few_modules_directly_in_dpstats(package):
    top = top_level_modules(package)
    assert len(top) <= MAX_TOP_MODULES, top


def test_no_file_over_the_line_limit(package):
    assert long_files(package) == []


def test_few_long_functions(package):
    found = long_functions(package)
    assert len(found) <= MAX_LONG_FUNCTIONS, "functions over 80 lines:\n" + "\n".join(found)


def test_noise_rng_and_charges_only_in_mechanisms(package):
    assert boundary_violations(package) == []


def test_the_graph_sees_relative_and_function_level_imports(graph):
    # kendall: ``from ..mechanisms.sampling import ...`` and, inside select,
    # ``from .._kernels.kendall_ranks import ...``
    assert {"dpstats.mechanisms.sampling", "dpstats._kernels.kendall_ranks",
            "dpstats.selection"} <= graph["dpstats.selection.kendall"]
    # results.lm imports the formula layer inside predict
    assert "dpstats.formula.design" in graph["dpstats.results.lm"]


# ---- the checks catch broken layouts ----------------------------------------------------------

def _fake(modules: dict[str, str]) -> dict[str, tuple[str, bool]]:
    """Synthetic plain modules ``{name: (source, False)}``."""
    return {name: (src, False) for name, src in modules.items()}


def test_a_fake_cycle_is_reported():
    graph = {"dpstats.selection.a": {"dpstats.selection.b"},
             "dpstats.selection.b": {"dpstats.selection.c"},
             "dpstats.selection.c": {"dpstats.selection.a"},
             "dpstats.selection.d": {"dpstats.selection.a"}}
    assert find_cycles(graph) == [["dpstats.selection.a", "dpstats.selection.b",
                                   "dpstats.selection.c"]]


def test_a_cycle_through_function_level_relative_imports_is_reported():
    sources = _fake({"dpstats.formula.x": "from .y import f\n",
                     "dpstats.formula.y": "def f():\n    from . import x\n    return x\n"})
    sources["dpstats.formula"] = ("", True)
    assert find_cycles(import_graph(sources)) == [["dpstats.formula.x", "dpstats.formula.y"]]


@pytest.mark.parametrize(("importer", "imported"), [
    ("dpstats.mechanisms.noise", "dpstats.pipeline.select"),      # upward
    ("dpstats._kernels.lasso", "dpstats.mechanisms.choice"),      # upward
    ("dpstats.estimators.ols", "dpstats.results.lm"),             # within rank 5, not allowed
    ("dpstats.formula.design", "dpstats.selection.sis"),          # within rank 5, not allowed
    ("dpstats.pipeline.select", "dpstats.datasets"),              # data only for api and up
    ("dpstats.api.lm", "dpstats"),                                # the facade ranks with api
    ("dpstats.errors", "dpstats.validation"),
    ("dpstats.lab.experiments", "dpstats.__main__"),
    ("dpstats.pipeline.run", "dpstats.sklearn"),                  # the re-export ranks with api
    ("dpstats.api.lm", "dpstats.sklearn"),
])
def test_an_upward_import_is_reported(importer, imported):
    bad = wrong_way_imports({importer: {imported}})
    assert len(bad) == 1 and importer in bad[0] and imported in bad[0]


@pytest.mark.parametrize(("importer", "imported"), [
    ("dpstats.results.lm", "dpstats.formula.design"),
    ("dpstats.api.lm", "dpstats.mechanisms.rng"),
    ("dpstats.__main__", "dpstats"),
    ("dpstats.lab.experiments", "dpstats.datasets"),
    ("dpstats", "dpstats.lab"),
    ("dpstats.mechanisms.bounds", "dpstats.validation"),
    ("dpstats.sklearn", "dpstats.api.sklearn"),
])
def test_a_downward_import_is_allowed(importer, imported):
    assert wrong_way_imports({importer: {imported}}) == []


def test_an_upward_import_is_found_in_source():
    sources = _fake({"dpstats.mechanisms.fake": "def f():\n    from ..pipeline import select\n"})
    sources["dpstats.pipeline.select"] = ("", False)
    assert wrong_way_imports(import_graph(sources)) == [
        "dpstats.mechanisms.fake (mechanisms) -> dpstats.pipeline.select (pipeline)"]


def test_an_rng_call_outside_mechanisms_is_reported():
    body = ('def f(X, rng, ledger):\n    """>>> rng.permutation(3)"""\n'
            '    ledger.charge("laplace", eps=1.0)\n    return X[rng.permutation(len(X))]\n')
    sources = _fake({"dpstats.selection.fake": body, "dpstats.mechanisms.fake": body,
                     "dpstats.lab.fake": body,
                     "dpstats.estimators.fake": "import numpy as np\n"
                                                "u = np.random.default_rng(0).uniform()\n"
                                                "from .. import mechanisms\n"
                                                "v = mechanisms.laplace(1.0)\n"})
    assert boundary_violations(sources) == [
        "dpstats.estimators.fake:2: (...).uniform(...)",
        "dpstats.estimators.fake:2: np.random.default_rng(...)",
        "dpstats.selection.fake:3: ledger.charge(...)",
        "dpstats.selection.fake:4: rng.permutation(...)"]


def test_long_functions_and_files_are_reported():
    long_def = "def f():\n" + "    x = 1\n" * 80 + "    return x\n"
    sources = _fake({"dpstats.results.fake": long_def,
                     "dpstats.results.short": "def g():\n    return 1\n"})
    assert long_functions(sources) == ["dpstats.results.fake.f: 82 lines"]
    assert long_files(sources, limit=81) == ["dpstats.results.fake: 82 lines"]


def test_too_many_top_level_modules_are_counted():
    names = ["dpstats.__main__", "dpstats.errors", "dpstats.validation", "dpstats.api.lm",
             *(f"dpstats.m{i}" for i in range(5))]
    sources = {"dpstats": ("", True), "dpstats.api": ("", True)} | _fake(dict.fromkeys(names, ""))
    top = top_level_modules(sources)
    assert len(top) == 9 > MAX_TOP_MODULES and "dpstats.api" not in top
    assert "dpstats.api.lm" not in top
