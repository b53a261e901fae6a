"""Find the line of a field in a TOML study file, so errors can say `file:line: field`.

tomllib gives values without positions; this scanner walks the text once, tracking the
current [table] / [[array-of-tables]] header, and maps field paths such as
("workload", 1, "count") to the line where that key is written (or its table's header).
"""

from __future__ import annotations

import re

HEADER = re.compile(r"^\s*(\[\[|\[)\s*([A-Za-z0-9_.\-\" ]+?)\s*(\]\]|\])\s*(#.*)?$")
KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"]+)\s*=")


def _index(text: str) -> dict[tuple, int]:
    """Map every header and key path to its 1-based line number."""
    where: dict[tuple, int] = {}
    counts: dict[tuple, int] = {}
    table: tuple = ()
    for lineno, line in enumerate(text.splitlines(), start=1):
        header = HEADER.match(line)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(2).split("."))
            if header.group(1) == "[[":
                i = counts.get(parts, 0)
                counts[parts] = i + 1
                table = (*parts[:-1], parts[-1], i) if len(parts) == 1 else (*parts, i)
                # [[a]] -> ("a", i); nested arrays are rare in study files
            else:
                # [workload.x] after [[workload]] belongs to the latest workload entry
                base = parts[0]
                if (base,) in counts:
                    table = (base, counts[(base,)] - 1, *parts[1:])
                else:
                    table = parts
            where.setdefault(table, lineno)
            continue
        key = KEY.match(line)
        if key:
            where.setdefault((*table, key.group(1).strip('"')), lineno)
    return where


def line_of(text: str, path: tuple) -> int | None:
    """Line of the deepest known prefix of `path` (the field, else its table)."""
    where = _index(text)
    path = tuple(path)
    while path:
        if path in where:
            return where[path]
        path = path[:-1]
    return None


def format_path(path: tuple) -> str:
    """("workload", 1, "count") -> "workload[1].count"."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
