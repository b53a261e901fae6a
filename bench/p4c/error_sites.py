"""Count the places the compiler's lowering (rust/p4c/src/lower/) constructs a
diagnostic, by the family of what it checks (issue 23: lowering should refuse only
what BMv2, or this compiler, cannot run; names, types and directions belong to sema/).

A site is one call of `.err(`, `Error::new(`, `.internal(`, `.not_location(` or
`.unbound(` (the helpers' own definitions excluded); its family comes from its message text, first matching rule
below. `internal` sites are broken invariants (bugs), not user diagnostics; `forward`
ones pass on a message made elsewhere (the bodies of the helpers `err`/`internal`);
`after inlining` ones check what becomes known only when a function is inlined.

    .venv/bin/python bench/p4c/error_sites.py [--dir rust/p4c/src/lower] [--list]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

SITE = re.compile(r"(\.err\(|Error::new\(|\.internal\(|\.not_location\(|\.unbound\()")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')

# (family, pattern on the message), first match wins
RULES: list[tuple[str, str]] = [
    ("internal", r"^internal compiler error"),
    # a constant stack index known only once a function is inlined (`get(h, 5)` indexing
    # `h.s[i]`): sema types the index as written, so only lowering sees it (p4c refuses it too)
    ("after inlining", r"is out of bounds for a (header union )?stack of size"),
    # this compiler's or BMv2's limits: lowering's to refuse
    (
        "unsupported",
        r"not supported|unsupported|BMv2|too many|too deep|too complex|recursion|"
        r"more than 100000|at most one lpm|needs at least one 'selector'|"
        r"already attached|must be the first thing|run-time (stack )?index|"
        r"compile-time constants|conditional emits|field list elements|"
        r"cannot be inlined|prefix mask|exact keys need a value|select range|"
        r"only .*calls are supported|only variables and instances|only lookahead|"
        r"can only be used as `t.apply|constants in a field list|is applied more than once|"
        r"not needed|is not a location here",
    ),
    # where something may appear (p4c refuses these too)
    (
        "placement",
        r"only allowed|not allowed|can only be used in|cannot be applied inside|"
        r"can only be applied in|cannot return a value|more than one default|"
        r"needs a body|is not a value|cannot be used in the|cannot be called as a statement",
    ),
    ("direction", r"as a location|expected a location|directional parameter"),
    (
        "name",
        r"undeclared|unknown (error|header|function|method|digest type|hash algorithm|"
        r"extern|key kind)|(has|have) no (field|member|method|'start')|no field|"
        r"is not an action|switch labels|is not a table|not in the actions list|"
        r"is not an action_profile|is not a \{\}|expected a direct_counter|"
        r"cannot be used as a value|must name an instance|expected a table application|"
        r"expected a (call|field)|unsupported call",
    ),
]


def family(msg: str) -> str:
    for fam, pat in RULES:
        if re.search(pat, msg):
            return fam
    return "type"


def call_arguments(src: str, start: int) -> str:
    """The text of a call's arguments, from just after its `(` to the matching `)`
    (parentheses inside string literals are rare in messages and not special-cased)."""
    depth = 1
    i = start
    while i < len(src) and depth:
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        i += 1
    return src[start : i - 1]


def sites(folder: Path) -> list[tuple[str, int, str, str]]:
    found = []
    for path in sorted(folder.glob("*.rs")):
        src = path.read_text()
        for m in SITE.finditer(src):
            if "fn" in src[max(0, m.start() - 8) : m.start()]:
                continue  # the helper's definition
            line = src.count("\n", 0, m.start()) + 1
            if m.group(1) == ".unbound(":
                # a name sema::bodies found declared that lowering binds no value to
                # (a top-level block's constructor parameter): this compiler's limit
                found.append((path.name, line, "unsupported", "(a name lowering does not bind)"))
                continue
            lit = STRING.search(call_arguments(src, m.end()))
            if lit is None:  # forwards a message made elsewhere (the helpers' bodies)
                found.append((path.name, line, "forward", "(message passed in)"))
                continue
            msg = lit.group(1)
            if m.group(1) == ".internal(":
                msg = "internal compiler error: " + msg
            fam = family(msg)
            if m.group(1) == ".not_location(":
                # a bug where a location is written (sema::directions checked it); where
                # a header or struct value is read, this compiler takes it only from a
                # location: its own limit
                fam = "unsupported"
            found.append((path.name, line, fam, msg))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=Path("rust/p4c/src/lower"))
    ap.add_argument("--list", action="store_true", help="print every site")
    args = ap.parse_args(argv)
    found = sites(args.dir)
    if args.list:
        for name, line, fam, msg in found:
            print(f"{name}:{line}\t{fam}\t{msg}")
    counts = Counter(f for _, _, f, _ in found)
    families = ("direction", "name", "type", "after inlining", "placement", "unsupported")
    for fam in (*families, "internal", "forward"):
        print(f"{fam:14} {counts.get(fam, 0)}")
    print(f"{'total':14} {len(found)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
