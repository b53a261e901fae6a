"""`sdnperf run --only EXPR`: which runs of the plan to run, by a small grammar (never eval).

    EXPR  := TERM ("," TERM)*                 every term must hold (AND)
    TERM  := NAME "=" VALUE ("|" VALUE)*      any of the values (OR)
    NAME  := topology | arch | architecture | workload | rep | <a swept parameter path>

Values are compared as text, written as in run keys (`64`, `1.5`, `true`, `10M`).
A run that does not have a swept parameter (another architecture's, say) does not match a
term on it. Example: `arch=p4,workload.udp.length=64|1400`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sdnperf.samples import format_value

NAMES = {
    "topology": "topology",
    "topo": "topology",
    "arch": "architecture",
    "architecture": "architecture",
    "workload": "workload",
    "rep": "repetition",
    "repetition": "repetition",
}
_TERM = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*=\s*([^=]+?)\s*$")


class SelectionError(ValueError):
    pass


class Selection:
    """A parsed --only expression: {name: allowed values as text}."""

    def __init__(self, terms: dict[str, set[str]]):
        self.terms = terms

    def matches(self, run) -> bool:
        fields = {
            "topology": run.topology,
            "architecture": run.architecture.name,
            "workload": run.workload.name,
            "repetition": str(run.repetition),
        }
        params = {path: format_value(value) for path, value in run.point}
        for name, allowed in self.terms.items():
            value = fields[name] if name in fields else params.get(name)
            if value not in allowed:
                return False
        return True

    def __str__(self) -> str:
        return ",".join(f"{n}={'|'.join(sorted(v))}" for n, v in self.terms.items())


def parse_selection(expr: str, swept: Iterable[str]) -> Selection:
    """Parse EXPR; unknown names and malformed terms are errors that list what is valid."""
    swept = list(swept)
    terms: dict[str, set[str]] = {}
    for raw in expr.split(","):
        m = _TERM.match(raw)
        if not m:
            raise SelectionError(
                f"--only: {raw.strip()!r} is not NAME=VALUE (terms are "
                "separated by ',', alternative values by '|')"
            )
        name, values = m.group(1), m.group(2)
        key = NAMES.get(name, name if name in swept else None)
        if key is None:
            valid = ", ".join([*sorted(set(NAMES) - {"topo", "repetition"}), *swept])
            raise SelectionError(f"--only: unknown name {name!r}; valid names: {valid}")
        allowed = {v.strip() for v in values.split("|")}
        if "" in allowed:
            raise SelectionError(f"--only: {raw.strip()!r} has an empty value")
        terms[key] = terms[key] & allowed if key in terms else allowed
    return Selection(terms)
