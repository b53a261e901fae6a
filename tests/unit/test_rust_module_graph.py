"""No module circles inside each Rust crate (rust/*/src): as for the Python package
(test_import_graph.py), each module can be read and changed after the ones it uses.

A module uses another when its text names it by path: `crate::a::b`, `super::x`, or, in a
folder module (`x/mod.rs`), a child declared beside it (`child::`). Unit-test blocks
(`#[cfg(test)] mod ...` to the end of the file) are left out: a test may use anything.
The crate roots (lib.rs, main.rs, bin/) declare the modules and are not nodes."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
CRATES = sorted(p.parent for p in (ROOT / "rust").glob("*/src") if p.is_dir())

PATH_RE = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)")
CHILD_RE = re.compile(r"\b([a-z_][a-z0-9_]*)::")
TEST_BLOCK_RE = re.compile(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\(crate\))?\s+)?mod\s", re.M)
COMMENT_RE = re.compile(r"//[^\n]*")


def module_files(crate: Path) -> dict[str, Path]:
    """module path ("xdpfast::compile") -> file, for every module file of the crate."""
    src = crate / "src"
    found = {}
    for path in src.rglob("*.rs"):
        rel = path.relative_to(src)
        if rel.parts[0] == "bin" or rel.as_posix() in ("lib.rs", "main.rs"):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "mod":
            parts.pop()
        found["::".join(parts)] = path
    return found


def product_text(path: Path) -> str:
    """The file without comments and without its unit-test block."""
    text = COMMENT_RE.sub("", path.read_text())
    cut = TEST_BLOCK_RE.search(text)
    return text[: cut.start()] if cut else text


def resolve(parts: list[str], known: dict[str, Path]) -> str | None:
    """The longest leading part of a path that is a module."""
    for n in range(len(parts), 0, -1):
        name = "::".join(parts[:n])
        if name in known:
            return name
    return None


def used(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    text = product_text(path)
    is_folder = path.name == "mod.rs"
    here = module.split("::")
    # `super` of x/mod.rs is x's parent; of x/y.rs it is x
    parent = here[:-1]
    targets = set()
    for root, rest in PATH_RE.findall(text):
        parts = rest.strip(":").split("::")
        base = [] if root == "crate" else parent
        target = resolve(base + parts, known)
        if target:
            targets.add(target)
    folder = here if is_folder else None
    if folder:
        for child in CHILD_RE.findall(text):
            name = "::".join(folder + [child])
            if name in known:
                targets.add(name)
    targets.discard(module)
    return targets


def module_graph(crate: Path) -> nx.DiGraph:
    known = module_files(crate)
    graph = nx.DiGraph()
    for name, path in known.items():
        graph.add_node(name)
        for target in used(name, path, known):
            graph.add_edge(name, target)
    return graph


def test_no_module_circles_in_any_crate():
    circles = []
    for crate in CRATES:
        for cycle in nx.simple_cycles(module_graph(crate)):
            circles.append(f"{crate.name}: " + " -> ".join(cycle + [cycle[0]]))
    assert not circles, "module circles:\n" + "\n".join(sorted(circles))


def test_the_check_sees_a_circle():
    """The checker itself: it finds the edges a reader expects, so a circle would show."""
    switch = module_graph(ROOT / "rust" / "switch")
    assert switch.has_edge("tables", "pipeline")  # use crate::pipeline::{..}
    assert switch.has_edge("xdpfast::compile", "xdpfast::asm")  # use super::asm::*
    assert switch.has_edge("xdpfast", "xdpfast::compile")  # a folder module's child
    assert not switch.has_edge("pipeline", "tables")
    switch.add_edge("pipeline", "tables")
    assert list(nx.simple_cycles(switch))
