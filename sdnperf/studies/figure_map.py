"""A built-in study's figure map: every result table and figure of its seed paper, with the
figure or table of our report that reproduces it, or why it cannot be.

One declarative file per study, `builtin/NAME/figures.toml`:

    [paper]
    seed = "001"                      # /work/shared/seeds/001_*.txt
    title = "..."

    [[item]]
    number = "Table 3"                # as the paper numbers it
    caption = "Latency"               # as the paper captions it
    status = "reproduced"             # reproduced | approximate | missing | outside
    plot = "sweep"                    # an id of the report's registry (report/plot_kinds.py)
    args = { param = "...", workload = "ping", metric = "rtt_ms" }
    part = "openflow-switches"        # a study of several files: the part that draws it
    note = "..."                      # how ours differs (approximate), what is missing
                                      # (missing), the reason outside sdnperf (outside)

    [[item.reference]]                # a number the paper publishes, typed from it
    what = "routing, Linux kernel space, 500-byte frames"
    paper = 42                        # as printed
    unit = "µs"
    source = "Table 3, §4 a)"
    scale = 0.001                     # paper × scale = our metric's unit (µs -> ms)
    ours = { metric = "rtt_ms", workload = "ping", architecture = "kernel-ipv4", point = {...} }
    over = "ovs-ipv4"                 # optional: compare ratios (architecture / over),
    paper_over = 83                   #   the paper's value of `over` — testbeds differ
    part = "openflow-switches"        # optional: the part whose runs are ours (else the item's)

`reproduced` claims that our report draws the item on the paper's axes at paper scale;
everything else is counted as not reproduced. Adding a plot for an item later is a change
of `status` and `plot` (and `args`). `tests/unit/test_figure_map.py` checks that every file
loads, counts the items the issue counts, and that every plot id exists in the registry.
"""

from __future__ import annotations

import math
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sdnperf.report.plot_kinds import REGISTRY, ReportKind
from sdnperf.report.sections import register_section
from sdnperf.studies.builtin import STUDIES, BuiltinStudy


def report_kinds() -> dict[str, ReportKind]:
    """Every figure and table kind the report can produce: each drawing module registers
    its own when imported. Imported here, when a figure map is read, not at the top of this
    module: they pull in matplotlib, which `sdnperf study list` never needs."""
    import sdnperf.ctlbench.plots  # noqa: F401
    import sdnperf.report.panel_plots  # noqa: F401
    import sdnperf.report.plots  # noqa: F401
    import sdnperf.report.recirc_plots  # noqa: F401
    import sdnperf.report.sweep_plots  # noqa: F401
    import sdnperf.report.table  # noqa: F401

    return REGISTRY


Status = Literal["reproduced", "approximate", "missing", "outside"]
STATUS_WORDS = {
    "reproduced": "reproduced",
    "approximate": "approximate (other axes or metric)",
    "missing": "not yet produced",
    "outside": "cannot be reproduced",
}
FILE = "figures.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Selector(_Strict):
    """Which stored numbers are "ours": the mean over ok runs of a summary metric."""

    metric: str
    architecture: str
    workload: str | None = None
    topology: str | None = None
    point: dict[str, str | int | float] = Field(default_factory=dict)


class Reference(_Strict):
    what: str
    paper: float
    unit: str
    source: str  # table/figure and page or section of the paper
    scale: float = 1.0  # paper × scale is in our metric's unit
    ours: Selector | None = None  # None: the paper's number, nothing of ours to set beside it
    over: str | None = None  # compare ratios architecture / over
    paper_over: float | None = None
    part: str | None = None  # a study of several files: the part whose runs are "ours"
    # (default: the item's)

    @model_validator(mode="after")
    def _ratio_pairs(self) -> Reference:
        if (self.over is None) != (self.paper_over is None):
            raise ValueError("`over` and `paper_over` go together (a ratio needs both)")
        if self.over is not None and self.ours is None:
            raise ValueError("a ratio (`over`) needs `ours`")
        return self


class Figure(_Strict):
    """One more figure of ours that draws part of an item (e.g. its jitter panels)."""

    plot: str
    args: dict[str, str] = Field(default_factory=dict)


class Item(_Strict):
    number: str
    caption: str
    status: Status
    plot: str | None = None
    table: str | None = None
    args: dict[str, str] = Field(default_factory=dict)
    part: str | None = None
    note: str = ""
    reference: list[Reference] = Field(default_factory=list)
    # the paper's figure drawn by several of ours (000 Fig. 10: members' throughput, UDP
    # jitter, CDN jitter): the rest of them, each drawn for `reproduced` to hold
    also: list[Figure] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Item:
        if self.plot and self.table:
            raise ValueError("an item names one plot or one table, not both")
        if self.status in ("reproduced", "approximate") and not (self.plot or self.table):
            raise ValueError(f"status {self.status!r} needs the `plot` or `table` that draws it")
        if self.status != "reproduced" and not self.note:
            raise ValueError(f"status {self.status!r} needs a `note` saying why")
        if self.also and not self.plot:
            raise ValueError("`also` adds figures to an item's `plot`, and this item has none")
        return self

    def figures(self) -> list[tuple[str, dict[str, str]]]:
        """Every plot of ours that draws the item: (id, args)."""
        if not self.plot:
            return []
        return [(self.plot, self.args)] + [(f.plot, f.args) for f in self.also]

    @property
    def kind_id(self) -> str | None:
        return self.plot or self.table


class Paper(_Strict):
    seed: str
    title: str


class FigureMap(_Strict):
    paper: Paper
    item: list[Item]

    def reproduced(self) -> int:
        return sum(1 for i in self.item if i.status == "reproduced")


class FigureMapError(ValueError):
    pass


def path_of(study: BuiltinStudy) -> Path:
    return study.folder / FILE


def load(study: BuiltinStudy) -> FigureMap:
    """The study's map; a bad file is an error naming the file and the field."""
    path = path_of(study)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return FigureMap.model_validate(data)
    except FileNotFoundError:
        raise FigureMapError(f"{path}: no figure map for {study.name}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FigureMapError(f"{path}: {exc}") from None
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise FigureMapError(f"{path}: {where}") from None


def unknown_ids(fmap: FigureMap) -> list[str]:
    """Items whose plot/table id is not in the report's registry, or whose args do not fit."""
    registry = report_kinds()
    bad = []
    for item in fmap.item:
        kid = item.kind_id
        if kid is None:
            continue
        wanted = item.figures() if item.plot else [(kid, item.args)]
        for fid, args in wanted:
            kind = registry.get(fid)
            if kind is None or kind.kind != ("plot" if item.plot else "table"):
                bad.append(f"{item.number}: no {'plot' if item.plot else 'table'} {fid!r}")
                continue
            try:
                kind.name(args)
            except ValueError as exc:
                bad.append(f"{item.number}: {exc}")
    return bad


# -- the paper's numbers beside ours -----------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    ref: Reference
    paper: float  # in our unit, or the paper's ratio
    ours: float | None  # None: no run of ours matched
    runs: int

    @property
    def ratio(self) -> float | None:
        """ours / paper (both values, or both ratios)."""
        if self.ours is None or not self.paper or not math.isfinite(self.ours):
            return None
        return self.ours / self.paper


def _value(store, study_id: int, sel: Selector, architecture: str) -> tuple[float | None, int]:
    runs = {
        r.id: r
        for r in store.runs(study_id)
        if r.status == "ok"
        and r.architecture == architecture
        # a mixed run's members are stored as "mix/tcp" under the run's workload "mix"
        and (
            sel.workload is None
            or sel.workload == r.workload
            or sel.workload.startswith(r.workload + "/")
        )
        and (sel.topology is None or r.topology == sel.topology)
        and all(str(r.point.get(k)) == str(v) for k, v in sel.point.items())
    }
    vals = [
        s.value
        for s in store.summaries(study_id)
        if s.run_id in runs
        and s.metric == sel.metric
        and (sel.workload is None or s.workload == sel.workload)
        and math.isfinite(s.value)
    ]
    return (sum(vals) / len(vals) if vals else None), len(runs)


def compare(store, study_id: int, ref: Reference) -> Comparison | None:
    if ref.ours is None:
        return None
    ours, n = _value(store, study_id, ref.ours, ref.ours.architecture)
    if ref.over is not None and ref.paper_over:
        below, _ = _value(store, study_id, ref.ours, ref.over)
        ratio = None if ours is None or not below else ours / below
        return Comparison(ref, ref.paper / ref.paper_over, ratio, n)
    return Comparison(ref, ref.paper * ref.scale, ours, n)


# -- text and HTML ------------------------------------------------------------------------


def _target(item: Item) -> str:
    kid = item.kind_id
    if kid is None:
        return "—"
    where = f" [{item.part}]" if item.part else ""
    if item.plot:
        return (
            " + ".join(f"plot {fid} ({_stem(fid, args)})" for fid, args in item.figures()) + where
        )
    return f"table {kid} ({_stem(kid, item.args)}){where}"


def _stem(kid: str, args: dict[str, str]) -> str:
    kind = REGISTRY.get(kid)
    return kind.name(args) if kind is not None else "?"


def lines(study: BuiltinStudy, fmap: FigureMap) -> list[str]:
    """The map as text: one block per item, the count last."""
    report_kinds()
    out = [f"{study.name}: figure map of seed paper {fmap.paper.seed}, {fmap.paper.title}"]
    for item in fmap.item:
        out.append(f"  {item.number}: {item.caption}")
        out.append(f"      {STATUS_WORDS[item.status]}: {_target(item)}")
        if item.note:
            out.append(f"      {item.note}")
        for ref in item.reference:
            out.append(
                f"      paper: {ref.what} = {ref.paper:g}"
                + (f" / {ref.paper_over:g} (vs {ref.over})" if ref.over else "")
                + f" {ref.unit} ({ref.source})"
            )
    out.append(f"reproduced {fmap.reproduced()} of {len(fmap.item)}")
    return out


def comparisons(
    store, study_id: int, fmap: FigureMap, part: str | None = None
) -> list[tuple[Item, Comparison]]:
    """The paper's numbers beside ours; with `part` (a study of several files), only the
    items that part's runs draw (and those of no part)."""
    out = []
    for item in fmap.item:
        for ref in item.reference:
            own = ref.part or item.part
            if part and own and own != part:
                continue
            c = compare(store, study_id, ref)
            if c is not None:
                out.append((item, c))
    return out


def _fmt(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def comparison_lines(store, study_id: int, fmap: FigureMap, part: str | None = None) -> list[str]:
    rows = comparisons(store, study_id, fmap, part)
    if not rows:
        return []
    out = ["The paper's numbers beside ours (ratio = ours / paper; ratios of ratios where marked):"]
    for item, c in rows:
        kind = f"{c.ref.ours.architecture}/{c.ref.over}" if c.ref.over and c.ref.ours else ""
        out.append(
            f"  {item.number}, {c.ref.what}{' (' + kind + ')' if kind else ''}: "
            f"paper {_fmt(c.paper)}, ours {_fmt(c.ours)} (n={c.runs}), ratio {_fmt(c.ratio)}"
        )
    return out


def map_for_store(store, study_id: int) -> tuple[BuiltinStudy, FigureMap, str] | None:
    """The built-in study (and its part) a stored study belongs to, with its map."""
    stored = store.study(study_id).name
    for study in STUDIES.values():
        if stored == study.name or stored.startswith(study.name + "-"):
            if not path_of(study).exists():
                return None
            return study, load(study), stored[len(study.name) + 1 :]
    return None


@register_section("opening")
def figure_map_html(store, study_id: int, figure_stems: list[str] | None = None) -> str:
    """The report's opening: the paper's figures and tables, ours beside each."""
    found = map_for_store(store, study_id)
    if found is None:
        return ""
    study, fmap, part = found
    report_kinds()
    drawn = set(figure_stems or [])
    counts: dict[str, int] = defaultdict(int)
    rows = []
    for item in fmap.item:
        counts[item.status] += 1
        kid = item.kind_id
        kind = REGISTRY.get(kid) if kid else None
        here = ""
        if kind is not None and (item.part is None or item.part == part):
            if kind.kind == "plot":
                names = [_stem(fid, args) for fid, args in item.figures()]
                missing = [n for n in names if n not in drawn]
                here = (
                    " — drawn below"
                    if not missing
                    else f" — not drawn from these runs: {', '.join(missing)}"
                )
        elif item.part and item.part != part:
            here = f" — in the report of part {item.part}"
        rows.append(
            f"<tr><td>{escape(item.number)}</td><td>{escape(item.caption)}</td>"
            f"<td>{escape(STATUS_WORDS[item.status])}</td>"
            f"<td>{escape(_target(item) + here)}</td><td>{escape(item.note)}</td></tr>"
        )
    cmp_rows = "".join(
        f"<tr><td>{escape(item.number)}</td><td>{escape(c.ref.what)}"
        + (
            f" ({escape(c.ref.ours.architecture)} / {escape(c.ref.over)})"
            if c.ref.over and c.ref.ours
            else ""
        )
        + f"</td><td>{escape(c.ref.source)}</td><td class=num>{_fmt(c.paper)}</td>"
        f"<td class=num>{_fmt(c.ours)}</td><td class=num>{c.runs}</td>"
        f"<td class=num>{_fmt(c.ratio)}</td></tr>"
        for item, c in comparisons(store, study_id, fmap, part)
    )
    return (
        f"<h2>The paper, figure by figure</h2><p>Seed paper {escape(fmap.paper.seed)}: "
        f"{escape(fmap.paper.title)}. Every result table and figure of the paper, with the "
        "figure or table of this report that reproduces it, or why it cannot be. "
        f"<b>reproduced {fmap.reproduced()} of {len(fmap.item)}</b>"
        f" ({', '.join(f'{n} {STATUS_WORDS[s]}' for s, n in counts.items())}).</p>"
        "<table><tr><th>paper</th><th>caption</th><th>status</th><th>ours</th>"
        f"<th>note</th></tr>{''.join(rows)}</table>"
        + (
            "<h3>The paper's numbers beside ours</h3><p>Values typed from the paper; ratio = "
            "ours / paper. Where an architecture is set over another, both columns are "
            "ratios (testbeds differ; the ratio is what can be compared).</p><table><tr>"
            "<th>paper</th><th>what</th><th>source</th><th>paper</th><th>ours</th><th>runs</th>"
            f"<th>ratio</th></tr>{cmp_rows}</table>"
            if cmp_rows
            else ""
        )
    )
