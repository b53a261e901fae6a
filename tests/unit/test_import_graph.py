"""sdnperf's modules import each other in one direction: no import circles, and no import
that runs back up the layers of docs/architecture.md ("Layers"). Every import counts: those
at module level, those inside functions (lazy imports run later, but they tie the modules
together all the same) and those made by name (`importlib.import_module`, `__import__`).
The graph is built with ast, without importing anything."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module
    line: int
    lazy: bool  # inside a function (or any block below module level)
    by_name: bool  # importlib.import_module / __import__


def modules(root: Path, package: str = "sdnperf") -> dict[str, tuple[Path, bool]]:
    """dotted name -> (file, is a package's __init__)."""
    found = {}
    for path in (root / package).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _known(name: str, known) -> str | None:
    """`name` or the closest module it is inside (`pkg.mod.Class` -> `pkg.mod`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _statement_targets(node: ast.stmt, module: str, is_package: bool, known) -> set[str]:
    """The modules an import statement imports. `from pkg import sub` counts as importing
    pkg.sub when that is a module (as import tools read it), else pkg."""
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
    return {found for n in names if (found := _known(n, known))}


def _imports_by_name(tree: ast.Module, known) -> list[tuple[ast.Call, set[str]]]:
    """`import_module(X)` / `__import__(X)` calls and the modules they can load: X when it
    is a literal; else every module this file names in a string (a table of module names
    such as arch/__init__.py's) or the modules under an f-string's literal start
    (f"sdnperf.studies.answers.{name}")."""
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
        )
    ]
    if not calls:
        return []
    named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in known}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and str(first.value).endswith("."):
                named |= {m for m in known if m.startswith(str(first.value))}
    out = []
    for call in calls:
        arg = call.args[0] if call.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found = _known(arg.value, known)
            out.append((call, {found} if found else set()))
        else:
            out.append((call, named))
    return out


def imports(root: Path, package: str = "sdnperf") -> list[Import]:
    """Every import of one package module by another, wherever it stands in the file."""
    known = modules(root, package)
    found: list[Import] = []
    for name, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            for target in _statement_targets(node, name, is_package, known):
                if target != name:
                    found.append(Import(name, target, node.lineno, id(node) not in top, False))
        for call, targets in _imports_by_name(tree, known):
            found += [Import(name, t, call.lineno, True, True) for t in targets if t != name]
    return found


def import_graph(root: Path = ROOT, package: str = "sdnperf") -> nx.DiGraph:
    """module -> module, each edge with the imports behind it (`imports` attribute)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(modules(root, package))
    for imp in imports(root, package):
        if not graph.has_edge(imp.source, imp.target):
            graph.add_edge(imp.source, imp.target, imports=[])
        graph.edges[imp.source, imp.target]["imports"].append(imp)
    return graph


def circles(graph: nx.DiGraph) -> list[str]:
    """Each import circle as `a -> b -> a`, naming the file lines that close it."""
    out = []
    for cycle in nx.simple_cycles(graph):
        first = cycle.index(min(cycle))  # each circle read from the same module every time
        cycle = cycle[first:] + cycle[:first]
        steps = []
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            imp = graph.edges[a, b]["imports"][0]
            steps.append(f"{a} (line {imp.line}{', lazy' if imp.lazy else ''})")
        out.append(" -> ".join(steps + [cycle[0]]))
    return sorted(out)


def entry(module: str) -> str:
    """The architecture doc's name for where a module lives: `folder/` or `module.py`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    path = ROOT.joinpath(*parts)
    return parts[1] + ("/" if len(parts) > 2 or path.is_dir() else ".py")


def doc_layers() -> list[list[str]]:
    """docs/architecture.md's layers, bottom first: the numbered lines under "## Layers",
    each naming its entries in `backticks`."""
    lines = DOC.read_text().splitlines()
    start = lines.index("## Layers")
    layers = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if re.match(r"\d+\. ", line):
            layers.append(re.findall(r"`([^`]+)`", line.split(":", 1)[0]))
    return layers


def upward_imports(graph: nx.DiGraph, layers: list[list[str]]) -> list[str]:
    """Imports from one entry to another of the same or a higher layer."""
    layer_of = {name: i for i, names in enumerate(layers) for name in names}
    out = []
    for a, b, data in graph.edges(data=True):
        ea, eb = entry(a), entry(b)
        if ea != eb and layer_of[ea] <= layer_of[eb]:
            imp = data["imports"][0]
            out.append(
                f"{a}:{imp.line} ({ea}, layer {layer_of[ea] + 1}) imports {b} (layer {layer_of[eb] + 1})"
            )
    return sorted(out)


def test_no_import_circles_lazy_imports_included():
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(found)


def test_every_entry_has_one_layer():
    layers = doc_layers()
    named = [name for layer in layers for name in layer]
    assert len(named) == len(set(named)), "an entry stands in two layers"
    entries = {entry(m) for m in modules(ROOT)}
    assert entries == set(named), (
        f"not in a layer: {sorted(entries - set(named))}; no such entry: "
        f"{sorted(set(named) - entries)}"
    )


def test_no_import_runs_back_up_the_layers():
    found = upward_imports(import_graph(), doc_layers())
    assert not found, "imports against docs/architecture.md's layers:\n" + "\n".join(found)


def silent_lazy_imports(root: Path = ROOT, package: str = "sdnperf") -> list[str]:
    """Lazy imports with no comment on their line or the line above saying why they are lazy
    (e.g. "# lazy: pulls in matplotlib, wanted only here"), as `module:line`."""
    known = modules(root, package)
    texts: dict[str, list[str]] = {}
    silent = set()
    for imp in imports(root, package):
        if not imp.lazy or imp.by_name:
            continue
        if imp.source not in texts:
            texts[imp.source] = known[imp.source][0].read_text().splitlines()
        lines = texts[imp.source]
        above = lines[imp.line - 2].strip() if imp.line >= 2 else ""
        if "#" not in lines[imp.line - 1] and not above.startswith("#"):
            silent.add(f"{imp.source}:{imp.line}")
    return sorted(silent)


def test_lazy_imports_say_why():
    """Every lazy import says why it is not at the top (or it moves to the top)."""
    silent = silent_lazy_imports()
    assert not silent, f"{len(silent)} lazy imports without a comment saying why: {silent}"


def test_the_guard_sees_a_lazy_import_that_does_not_say_why(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "X = 1\n",
            "said.py": "def f():\n    from pkg import low  # lazy: a reason\n    return low\n",
            "above.py": "def f():\n    # lazy: a reason\n    from pkg import low\n    return low\n",
            "mute.py": "def f():\n    from pkg.low import X\n    return X\n",
        },
    )
    assert silent_lazy_imports(root, "pkg") == ["pkg.mute:2"]


def test_the_graph_has_the_edges_a_reader_expects():
    graph = import_graph()
    assert graph.has_edge("sdnperf.runner", "sdnperf.arch")
    assert graph.has_edge("sdnperf.workloads.video", "sdnperf.workloads.playout")  # from . import
    assert graph.has_edge("sdnperf.workloads.config", "sdnperf.workloads.traffic_config")
    assert graph.has_edge("sdnperf.arch", "sdnperf.arch.p4")  # by name, from a table
    assert graph.has_edge("sdnperf.studies.answers", "sdnperf.studies.answers.campus")  # f-string
    lazy = graph.edges["sdnperf.cli", "sdnperf.runner"]["imports"]
    assert all(imp.lazy for imp in lazy)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_guard_sees_a_lazy_circle(tmp_path):
    """A circle closed by an import inside a function is a circle."""
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "def f():\n    from pkg import high  # lazy, on purpose\n    return high\n",
            "high.py": "from pkg.low import f\n",
            "apart.py": "import json\n",
        },
    )
    found = circles(import_graph(root, "pkg"))
    assert found == ["pkg.high (line 1) -> pkg.low (line 2, lazy) -> pkg.high"]


def test_the_guard_sees_a_circle_made_by_name(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import importlib\n\ndef g():\n    return importlib.import_module('pkg.b')\n",
            "b.py": "from . import a\n",
            "c.py": "from importlib import import_module\nKINDS = {'x': 'pkg.a'}\n"
            "def h(k):\n    return import_module(KINDS[k])\n",
        },
    )
    graph = import_graph(root, "pkg")
    assert graph.has_edge("pkg.c", "pkg.a")
    assert circles(graph) == ["pkg.a (line 4, lazy) -> pkg.b (line 1) -> pkg.a"]


def test_the_guard_sees_an_import_against_the_layers():
    graph = import_graph()
    graph.add_edge(
        "sdnperf.store.sqlite",
        "sdnperf.runner",
        imports=[Import("sdnperf.store.sqlite", "sdnperf.runner", 1, True, False)],
    )
    found = upward_imports(graph, doc_layers())
    assert found and "sdnperf.store.sqlite:1 (store/" in found[0]
