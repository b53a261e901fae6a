"""The report's registry of figure and table kinds: the ids a study's figure map names.

Every figure the report draws is saved as a PNG whose name (stem) follows a template, e.g.
`throughput_{workload}` or `ctlbench_outstanding_per_switch_{rate}`; every table it prints
has a kind too. Each drawing module registers its kinds here when imported (next to the
function that draws them), so a figure map (sdnperf/studies/figure_map.py, which imports
every drawing module: `report_kinds`) can name a kind by id, a unit test can check that the id exists, and a report can tell whether that
figure was really drawn from its stored runs (the stem is filled in and looked for).
Kept free of plotting imports so the CLI can read it cheaply.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal

Kind = Literal["plot", "table"]


@dataclass(frozen=True)
class ReportKind:
    id: str
    kind: Kind
    stem: str  # PNG stem template (plots) or table name template, fields in {braces}
    what: str  # one line: what it shows, on which axes

    @property
    def fields(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.stem) if f]

    def name(self, args: dict[str, str]) -> str:
        """The stem of the figure drawn for `args`, spelt as the report saves it."""
        missing = set(self.fields) - set(args)
        extra = set(args) - set(self.fields)
        if missing or extra:
            raise ValueError(
                f"{self.id}: arguments {sorted(args)} do not match its fields {self.fields}"
            )
        return safe_stem(self.stem.format(**args))


REGISTRY: dict[str, ReportKind] = {}


def safe_stem(stem: str) -> str:
    """A figure's file stem as the plot modules save it (other characters become _)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)


def register(id: str, kind: Kind, stem: str, what: str) -> ReportKind:
    """Declare a figure or table the report can produce (idempotent for the same id)."""
    entry = ReportKind(id, kind, stem, what)
    old = REGISTRY.get(id)
    if old is not None and old != entry:
        raise ValueError(f"report kind {id!r} registered twice with different templates")
    REGISTRY[id] = entry
    return entry
