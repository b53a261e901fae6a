"""No import circles among sdnperf's modules: each module can be read (and changed) after
the ones it imports. Module-level imports only (a function-level import runs later, when
every module exists); the graph is built with ast, without importing anything."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]


def modules() -> dict[str, tuple[Path, bool]]:
    """dotted name -> (file, is a package's __init__)."""
    found = {}
    for path in (ROOT / "sdnperf").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported(node: ast.stmt, module: str, is_package: bool, known) -> set[str]:
    """The sdnperf modules one module-level statement imports. `from pkg import sub` counts
    as importing pkg.sub when that is a module (as import tools read it), else pkg."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [
            f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names
        ]
    else:
        return set()
    return {n for n in names if n in known and n != module}


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    for name, (path, is_package) in known.items():
        graph.add_node(name)
        for node in ast.parse(path.read_text(), str(path)).body:
            for target in imported(node, name, is_package, known):
                graph.add_edge(name, target)
    return graph


def test_no_import_circles():
    circles = sorted(" -> ".join(c + [c[0]]) for c in nx.simple_cycles(import_graph()))
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_the_check_sees_a_circle():
    """The checker itself: the graph has the edges a reader expects, so a circle would show."""
    graph = import_graph()
    assert graph.has_edge("sdnperf.runner", "sdnperf.arch")
    assert graph.has_edge("sdnperf.workloads.video", "sdnperf.workloads.playout")  # from . import
    assert graph.has_edge("sdnperf.workloads.config", "sdnperf.workloads.traffic_config")
    graph.add_edge("sdnperf.arch", "sdnperf.runner")
    assert list(nx.simple_cycles(graph))
