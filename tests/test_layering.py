# SPDX-License-Identifier: BSD-3-Clause
"""The package layering of ``docs/architecture.md``, checked on the source's imports.

cli → pipeline → compat → io → evaluate / report / datasets → selftest → metrics /
verdict → neighbors → schema / stats / results → the foundation modules (``synthrisk._*``,
``exceptions``, ``settings``); see ``docs/architecture.md``. A package imports only packages of lower layers (so there
is no import cycle between packages), and never another package's private module.
Imports inside ``if TYPE_CHECKING:`` are for annotations only and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "synthrisk"

#: lower number = lower layer; a package may import only strictly lower layers
LAYERS: dict[str, int] = {
    "_typing": 0,
    "_version": 0,
    "exceptions": 0,
    "_atomic": 1,
    "_format": 1,
    "_optional": 1,
    "_progress": 1,
    "_rng": 1,
    "_spill": 1,
    "_validation": 1,
    # numba's start-up beside the tables' preparation (evaluate); imports only numba
    "_warmup": 1,
    "settings": 1,
    # the release context of an anonymisation record: results store it, evaluate checks it
    "context": 1,
    "results": 2,
    "schema": 2,
    "stats": 2,
    # worker processes of a run: above settings; the search and the metrics use its
    # guards of numba's threading layer, evaluate its processes
    "_workers": 2,
    "neighbors": 3,
    "metrics": 4,
    "verdict": 4,
    "selftest": 5,
    # the holdout check: above the schema and the AUC's interval (stats); evaluate runs it
    "holdout_check": 5,
    "audit": 6,
    "datasets": 6,
    "evaluate": 6,
    "report": 6,
    "io": 7,
    # filter_copies: evaluates twice (above evaluate), reads no files
    "filtering": 7,
    "compat": 8,
    "cluster": 8,
    # above io (it reads folders of tables with io.read_table) and evaluate
    "relational": 8,
    "pipeline": 9,
    "cli": 10,
    # python -m synthrisk: runs the command line
    "__main__": 11,
}


def _package(module: str) -> str:
    """``synthrisk.metrics.attacks._queries`` -> ``metrics``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, imported module)`` of every runtime import, however deep."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from synthrisk.metrics import dcr` imports the module synthrisk.metrics.dcr
            folder = SRC.parent / node.module.replace(".", "/")
            modules = [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if (folder / alias.name).is_dir()
                or (folder / f"{alias.name}.py").is_file()
            ]
            if len(modules) < len(node.names):
                # a name defined by the module itself (its package's __init__)
                found.append((node.lineno, node.module))
            found.extend((node.lineno, m) for m in modules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(line, name) for line, name in found if name.startswith("synthrisk.")]


def _edges() -> list[tuple[str, int, str]]:
    edges = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if module == "synthrisk":
            continue  # the top-level package re-exports the public surface
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges.extend((module, line, target) for line, target in _imports(tree))
    return edges


def test_every_package_has_a_layer() -> None:
    packages = {
        _module_name(path).split(".")[1]
        for path in SRC.rglob("*.py")
        if path != SRC / "__init__.py"
    }
    assert packages <= set(LAYERS), sorted(packages - set(LAYERS))


def test_packages_import_only_lower_layers() -> None:
    bad = []
    for module, line, target in _edges():
        source, dest = _package(module), _package(target)
        if dest and source != dest and LAYERS[dest] >= LAYERS[source]:
            bad.append(f"{module}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_no_package_imports_another_packages_private_module() -> None:
    bad = []
    for module, line, target in _edges():
        source, dest = _package(module), _package(target)
        private = any(part.startswith("_") for part in target.split(".")[2:])
        if source != dest and private:
            bad.append(f"{module}:{line} imports {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_package_layer_is_known(package: str) -> None:
    assert (SRC / package).is_dir() or (SRC / f"{package}.py").is_file()


def _family(module: str) -> str | None:
    """The metric family of a module of ``synthrisk.metrics`` (None outside metric code).

    A family is a subpackage (``metrics.membership``) or a public module directly under
    ``metrics`` (``metrics.dcr``); the private modules directly under ``metrics``
    (``_base``, ``_params``, ...) are the shared core every family builds on.
    """
    parts = module.split(".")
    if parts[:2] != ["synthrisk", "metrics"] or len(parts) < 3:
        return None
    return None if parts[2].startswith("_") else parts[2]


def test_no_family_imports_another_familys_private_module() -> None:
    bad = []
    for module, line, target in _edges():
        source, dest = _family(module), _family(target)
        private = any(part.startswith("_") for part in target.split(".")[3:])
        if source is not None and dest is not None and source != dest and private:
            bad.append(f"{module}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_metrics_never_import_a_search_backend() -> None:
    # the neighbour search has one door, `synthrisk.neighbors`: in memory or partitioned
    bad = [
        f"{module}:{line} imports {target}"
        for module, line, target in _edges()
        if _package(module) == "metrics"
        and target.startswith("synthrisk.neighbors.")
        and target.split(".")[2].endswith("_backend")
    ]
    assert not bad, "\n".join(bad)


def _module_graph() -> dict[str, set[str]]:
    """Module -> the synthrisk modules it imports at run time (function bodies included)."""
    modules = {_module_name(path) for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, _, target in _edges():
        # `from synthrisk.metrics._base import X`: the module itself, not each name
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]
        if target in modules and target != module:
            graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_no_import_cycle_between_modules() -> None:
    # imports inside functions count: a deferred import hides a cycle, it does not remove it
    cycles = _cycles(_module_graph())
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
