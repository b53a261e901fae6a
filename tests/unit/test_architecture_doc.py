"""docs/architecture.md's maps match the tree: every folder and module of sdnperf/ has a
row in the folder map and every row exists; the same for the Rust crates' table."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "sdnperf"
CODE = ("*.py", "*.p4")


def table_after(heading: str) -> list[str]:
    """First-column names (`...` stripped) of the first table after `heading`."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    names, in_table = [], False
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            in_table = True
            cell = line.split("|")[1].strip()
            m = re.fullmatch(r"`([^`]+)`", cell)
            if m:
                names.append(m.group(1))
        elif in_table:
            break
    return names


def package_entries() -> set[str]:
    """Folders (with code, at any depth below them) and modules directly in sdnperf/."""
    out = set()
    for path in PACKAGE.iterdir():
        if path.is_dir() and any(next(path.rglob(glob), None) for glob in CODE):
            out.add(path.name + "/")
        elif path.suffix == ".py" and path.name != "__init__.py":
            out.add(path.name)
    return out


def test_every_folder_and_module_has_a_row_and_every_row_exists():
    rows = table_after("## Folder map")
    assert len(rows) == len(set(rows)), "a row appears twice"
    missing = package_entries() - set(rows)
    assert not missing, (
        f"sdnperf/ has {sorted(missing)} but docs/architecture.md's folder map does not"
    )
    gone = {r for r in rows if not (PACKAGE / r).exists()}
    assert not gone, f"docs/architecture.md's folder map lists {sorted(gone)}, which sdnperf/ lacks"


def test_every_crate_has_a_row_and_every_row_is_a_crate():
    rows = set(table_after("Rust tools live in the cargo workspace"))
    crates = {p.parent.name for p in (REPO / "rust").glob("*/Cargo.toml")}
    assert rows == crates, f"rows {sorted(rows)} vs crates {sorted(crates)}"


def test_the_map_reader_sees_the_table():
    # guards the two tests above against a reader that silently finds nothing
    rows = table_after("## Folder map")
    assert {"runner.py", "arch/", "workloads/"} <= set(rows)
