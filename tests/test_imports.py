"""Imports point one way: no cycle of modules, none of packages, and the library never imports Dagster's side.

The graph is read from the source with `ast`, so nothing is imported and no Spark is needed. Every import
counts, those inside functions too (a lazy import is still an edge of the design). A package is the first
sub-package under `cdc_pipelines` (`cdc_pipelines.decode.runner` is in `decode`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = "cdc_pipelines"
# Dagster and the project's Dagster side (assets, and the resources they take) stand above the library
ABOVE_THE_LIBRARY = ("assets", "resources", "dagster")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Each module of the library by dotted name: its file and whether it is a package's `__init__`."""
    out = {}
    for path in sorted((ROOT / LIBRARY).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


MODULES = _modules()


def _imported(name: str, path: Path, package: bool) -> list[tuple[str, int]]:
    """(what is imported, its line) for every import of the module, relative ones made absolute."""
    here = name.split(".") if package else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""]) if node.level else node.module
            base = base.rstrip(".")
            # `from a.b import c` imports the module a.b.c where there is one, else a name of a.b
            found += [(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base, node.lineno)
                      for alias in node.names]  # fmt: skip
    return found


def _module_of(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


IMPORTS = {name: _imported(name, path, package) for name, (path, package) in MODULES.items()}
# module -> {imported module of the library: the lines that import it}
GRAPH: dict[str, dict[str, list[int]]] = {}
for _name, _found in IMPORTS.items():
    GRAPH[_name] = {}
    for _target, _line in _found:
        _module = _module_of(_target) if _target.split(".")[0] == LIBRARY else None
        if _module and _module != _name:
            GRAPH[_name].setdefault(_module, []).append(_line)


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's, without recursion), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_is_read():
    # the known edges are there, a lazy import inside a function among them, so an empty graph cannot pass
    assert len(GRAPH) > 100
    assert "cdc_pipelines.extract.files" in GRAPH["cdc_pipelines.decode.runner"]
    assert "cdc_pipelines.model.canonical" in GRAPH["cdc_pipelines.formats.debezium"]
    assert "cdc_pipelines.decode.kafka_day" in GRAPH["cdc_pipelines.decode.days"]  # inside `_kafka_days`


def _ties(found: list[list[str]], graph: dict[str, set[str]], why: dict[tuple[str, str], list[str]]) -> str:
    """Each import that runs inside a cycle, and what makes it."""
    return "\n".join(
        f"{a} -> {b}: {', '.join(why[a, b])}" for cycle in found for a in cycle for b in sorted(graph[a] & set(cycle))
    )


def test_no_cycle_of_modules():
    graph = {name: set(targets) for name, targets in GRAPH.items()}
    why = {(a, b): [f"line {line}" for line in lines] for a, targets in GRAPH.items() for b, lines in targets.items()}
    found = cycles(graph)
    assert not found, "modules that import each other:\n" + _ties(found, graph, why)


def test_no_cycle_of_packages():
    packages: dict[str, set[str]] = {}
    why: dict[tuple[str, str], list[str]] = {}
    for name, targets in GRAPH.items():
        for target in targets:
            a, b = package_of(name), package_of(target)
            packages.setdefault(a, set())
            if a != b:
                packages[a].add(b)
                why.setdefault((a, b), []).append(f"{name} -> {target}")
    found = cycles(packages)
    assert not found, "packages that import each other:\n" + _ties(found, packages, why)


@pytest.mark.parametrize("above", ABOVE_THE_LIBRARY)
def test_the_library_imports_nothing_above_it(above):
    found = [
        f"{name} imports {target} (line {line})"
        for name, imports in IMPORTS.items()
        for target, line in imports
        if target.split(".")[0] == above or target.split(".")[0].startswith(f"{above}_")
    ]
    assert not found, "\n".join(found)
