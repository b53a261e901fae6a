"""The comparison table: one row per workload × metric × architecture, over repetitions
(and per topology and sweep point, should a study hold several: rows never mix them; the
topology column then reads "topology · path=value,...").

Each row holds n (ok runs with a value), the mean with its 95 % CI, the difference to the
baseline architecture in % with "better/worse" wording, the p-value of the study's
significance rule (stats.compare_groups), the CPU-bound, emulator-bound and link-fidelity
marks and the number of failed runs.
Failed runs are never dropped silently: they are counted in their row, and an
architecture whose runs all failed still gets a row with n = 0.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Console, JustifyMethod
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from sdnperf.report import fmt, metrics
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.stats import (
    Difference,
    MeanCI,
    TestResult,
    compare_groups,
    holm,
    mean_ci,
    pct_difference,
    significance_mark,
)
from sdnperf.samples import Better, format_point
from sdnperf.store import RunRow, Store

CPU_MARK = "⚠ CPU"
CPU_FOOTNOTE = (
    f"{CPU_MARK}: at least one run of this cell was CPU-bound — the machine was saturated "
    "during the run, so its numbers may measure the host rather than the network."
)
EMU_MARK = "⚠ EMU"
EMU_FOOTNOTE = (
    f"{EMU_MARK}: at least one run of this cell was emulator-bound — one switch took far longer "
    "to forward a packet than on a small topology, so its numbers measure the emulator (e.g. one "
    "userspace ovs-vswitchd for every switch) rather than the architecture."
)
LINK_MARK = "⚠ LINK"
LINK_FOOTNOTE = (
    f"{LINK_MARK}: in at least one run of this cell an impaired link did not do what the study "
    "configured (its rate, added delay or loss, measured from the switch's port counters or tc), "
    "so its numbers describe a different link."
)
NO_METRIC = ""  # metric of the placeholder row of a workload × architecture with no data


@dataclass
class Row:
    workload: str
    metric: str  # NO_METRIC when no run of this workload produced any summary
    architecture: str
    unit: str
    better: Better
    stats: MeanCI  # over the ok runs' summary values
    failed: int  # failed runs of this workload × architecture (not in n)
    is_baseline: bool
    diff: Difference | None = None  # vs the baseline; None on the baseline row itself
    test: TestResult | None = None
    cpu_bound_runs: list[str] = field(default_factory=list)  # run keys
    cpu_reasons: dict[str, str] = field(default_factory=dict)  # run key -> reason
    emulator_bound_runs: list[str] = field(default_factory=list)  # run keys (fidelity/hops.py)
    emulator_reasons: dict[str, str] = field(default_factory=dict)  # run key -> reason
    link_breach_runs: list[str] = field(default_factory=list)  # run keys (fidelity/links.py)
    link_reasons: dict[str, str] = field(default_factory=dict)  # run key -> reason
    topology: str = ""
    # Holm-adjusted p over every comparison of this workload × metric, when the table
    # compares at several topologies or sweep points (None otherwise)
    p_holm: float | None = None

    @property
    def n(self) -> int:
        return self.stats.n

    @property
    def p(self) -> float | None:
        return self.test.p if self.test else None

    @property
    def significance(self) -> str:
        return significance_mark(self.p)

    @property
    def cpu_mark(self) -> str:
        return " ".join(
            mark
            for mark, runs in (
                (CPU_MARK, self.cpu_bound_runs),
                (EMU_MARK, self.emulator_bound_runs),
                (LINK_MARK, self.link_breach_runs),
            )
            if runs
        )

    def record(self) -> dict:
        """The row as plain data (numbers and display strings) for CSV and HTML."""
        return {
            "topology": self.topology,
            "workload": self.workload,
            "metric": self.metric,
            "label": metrics.label(self.metric) if self.metric else "(no data)",
            "architecture": self.architecture,
            "baseline": self.is_baseline,
            "n": self.n,
            "failed": self.failed,
            "mean": self.stats.mean,
            "ci95_half_width": self.stats.half_width,
            "mean_ci": fmt.mean_pm(self.stats.mean, self.stats.half_width),
            "ci_note": self.stats.note,
            "unit": self.unit,
            "better": self.better,
            "diff_pct": self.diff.pct if self.diff else None,
            "diff": "baseline" if self.is_baseline else (self.diff.words() if self.diff else ""),
            "verdict": self.diff.verdict if self.diff else "",
            "test": self.test.test if self.test else "",
            "p": self.p,
            "p_text": fmt.p_value(self.p),
            "p_holm": self.p_holm,
            "p_holm_text": fmt.p_value(self.p_holm) if self.p_holm is not None else "",
            "significance": self.significance,
            "cpu_bound": bool(self.cpu_bound_runs),
            "cpu_mark": self.cpu_mark,
            "cpu_bound_runs": " ".join(self.cpu_bound_runs),
            "emulator_bound": bool(self.emulator_bound_runs),
            "emulator_bound_runs": " ".join(self.emulator_bound_runs),
            "link_breach": bool(self.link_breach_runs),
            "link_breach_runs": " ".join(self.link_breach_runs),
        }


RECORD_COLUMNS = list(
    Row("", "", "", "", "lower", MeanCI(0, 0.0, None, None), 0, False).record().keys()
)


register_kind(
    "comparison",
    "table",
    "{workload}/{metric}",
    "the comparison table's rows of one workload and metric: mean, CI, difference to the baseline",
)


def comparison(
    store: Store,
    study_id: int,
    baseline: str | None = None,
    only_metrics: Collection[str] | None = None,
) -> list[Row]:
    """Build the table from the store.

    baseline=None takes the study spec's baseline (`spec["study"]["baseline"]` or
    `spec["baseline"]`), else the first architecture that was run. A baseline that no
    run used is an error naming the architectures that exist.
    only_metrics keeps just those metrics (e.g. a short terminal table); failed runs
    are still counted in the rows that remain. Metrics are ordered as in the registry
    (sdnperf.report.metrics), unregistered ones after, in the order they were stored.
    """
    runs = store.runs(study_id)
    if not runs:
        return []
    archs = _in_order(r.architecture for r in runs)
    base = _resolve_baseline(store, study_id, archs, baseline)
    archs = [base] + [a for a in archs if a != base]

    # A cell is topology (and sweep point) × workload × architecture; rows never mix them.
    where = {r.id: _where(r) for r in runs}
    runs_by_cell: dict[tuple[str, str, str], list[RunRow]] = defaultdict(list)
    for r in runs:
        runs_by_cell[(where[r.id], r.workload, r.architecture)].append(r)

    # values[(topology, workload, metric, arch)] = summary values of ok runs
    values: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    unit: dict[tuple[str, str], str] = {}
    better: dict[tuple[str, str], Better] = {}
    metric_order: dict[str, list[str]] = defaultdict(list)
    for s in store.summaries(study_id):
        if s.status != "ok":
            continue
        if s.metric not in metric_order[s.workload]:
            metric_order[s.workload].append(s.metric)
        values[(where[s.run_id], s.workload, s.metric, s.architecture)].append(s.value)
        unit.setdefault((s.workload, s.metric), s.unit)
        better.setdefault((s.workload, s.metric), s.better)

    # A mixed run stores its members' summaries as "run workload/member": they get rows of
    # their own, right after the mix, counted against the mix's runs.
    run_of: dict[str, str] = {}
    for w in _in_order(r.workload for r in runs):
        run_of[w] = w
        for member in metric_order:
            if member.startswith(w + "/"):
                run_of[member] = w

    rows: list[Row] = []
    for topology in _groups_in_order(runs, where):
        for workload in run_of:
            stored = metric_order.get(workload, [])
            shown = [m for m in stored if only_metrics is None or m in only_metrics]
            if stored and not shown:
                continue  # the workload has data, just none of the chosen metrics
            for metric in _registry_order(shown) or [NO_METRIC]:
                base_values = values.get((topology, workload, metric, base), [])
                for arch in archs:
                    cell_runs = runs_by_cell.get((topology, run_of[workload], arch), [])
                    if not cell_runs:
                        continue
                    row = _row(
                        workload,
                        metric,
                        arch,
                        base,
                        cell_runs,
                        values.get((topology, workload, metric, arch), []),
                        base_values,
                        unit.get((workload, metric), ""),
                        better.get((workload, metric), _default_better(metric)),
                    )
                    row.topology = topology
                    rows.append(row)
    if len(set(where.values())) > 1:
        _adjust_p(rows)
    return rows


def _adjust_p(rows: list[Row]) -> None:
    """Holm over each workload × metric's comparisons (one per topology/point × architecture):
    with that many tests some would look significant by chance."""
    families: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        if row.p is not None:
            families[(row.workload, row.metric)].append(row)
    for family in families.values():
        for row, adjusted in zip(family, holm([r.p for r in family])):
            row.p_holm = adjusted


def _groups_in_order(runs: list[RunRow], where: dict[int, str]) -> list[str]:
    """Topologies in the order they ran first; their sweep points by value (numbers as
    numbers), whatever order the runs had."""
    topologies = _in_order(r.topology for r in runs)

    def value_key(value):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return (0, float(value), "") if number else (1, 0.0, str(value))

    first: dict[str, tuple] = {}
    for r in runs:
        first.setdefault(
            where[r.id],
            (
                topologies.index(r.topology),
                tuple((p, value_key(v)) for p, v in sorted(r.point.items())),
            ),
        )
    return sorted(first, key=lambda group: first[group])


def _where(run: RunRow) -> str:
    """The run's topology, with its sweep point when it has one."""
    return (
        f"{run.topology} · {format_point(tuple(sorted(run.point.items())))}"
        if run.point
        else run.topology
    )


def _row(workload, metric, arch, base, cell_runs, vals, base_vals, unit, better) -> Row:
    stats = mean_ci(vals)
    row = Row(
        workload=workload,
        metric=metric,
        architecture=arch,
        unit=unit,
        better=better,
        stats=stats,
        failed=sum(1 for r in cell_runs if r.status == "failed"),
        is_baseline=arch == base,
        cpu_bound_runs=[r.key for r in cell_runs if r.cpu_bound],
        cpu_reasons={r.key: r.cpu.reason for r in cell_runs if r.cpu_bound},
        emulator_bound_runs=[r.key for r in cell_runs if r.cpu.emulator_bound],
        emulator_reasons={r.key: r.cpu.emulator_reason for r in cell_runs if r.cpu.emulator_bound},
        link_breach_runs=[r.key for r in cell_runs if r.cpu.link_breach],
        link_reasons={r.key: r.cpu.link_reason for r in cell_runs if r.cpu.link_breach},
    )
    if not row.is_baseline and metric != NO_METRIC:
        base_stats = mean_ci(base_vals)
        row.diff = pct_difference(stats.mean, base_stats.mean, better)
        row.test = compare_groups(vals, base_vals)
    return row


def _registry_order(names: list[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(metrics.METRICS)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), names.index(n)))


def _default_better(metric: str) -> Better:
    m = metrics.get(metric)
    return m.better if m else "lower"


def _in_order(items) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _resolve_baseline(store: Store, study_id: int, archs: list[str], baseline: str | None) -> str:
    if baseline is None:
        spec = store.study(study_id).spec
        section = study if isinstance(study := spec.get("study"), dict) else {}
        baseline = section.get("baseline") or spec.get("baseline")
        if baseline not in archs:  # the spec's baseline never ran: fall back quietly
            baseline = archs[0]
    if baseline not in archs:
        raise ValueError(
            f"baseline architecture {baseline!r} has no runs in this study; "
            f"architectures: {', '.join(archs)}"
        )
    return baseline


def write_csv(rows: list[Row], path: str | Path) -> Path:
    """The table as CSV (RECORD_COLUMNS: raw numbers next to their display strings)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=RECORD_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.record().items()})
    return path


# -- footnotes and rendering ----------------------------------------------------------


def footnotes(rows: list[Row]) -> list[str]:
    """The notes the table needs, only those that apply to these rows."""
    notes: list[str] = []
    for footnote, label, reasons_of in (
        (CPU_FOOTNOTE, "CPU-bound", lambda row: row.cpu_reasons),
        (EMU_FOOTNOTE, "emulator-bound", lambda row: row.emulator_reasons),
        (LINK_FOOTNOTE, "link-fidelity breach in", lambda row: row.link_reasons),
    ):
        reasons: dict[str, str] = {}
        for row in rows:
            reasons.update(reasons_of(row))
        if reasons:
            notes.append(footnote)
            for key, reason in reasons.items():
                notes.append(f"  {label} run {key}: {reason or 'no reason recorded'}")
    if any(r.failed for r in rows):
        notes.append(
            "failed: runs that did not finish; they are not in n, and are listed "
            "with their errors in the report."
        )
    if any(r.stats.n == 1 for r in rows):
        notes.append("n=1: a single repetition has no confidence interval and no test.")
    if any(r.p_holm is not None for r in rows):
        notes.append(
            "p Holm: p adjusted (Holm–Bonferroni) over every comparison of the same "
            "workload and metric at the table's topologies and sweep points."
        )
    if any(r.test and r.test.test for r in rows):
        notes.append(
            "Δ vs baseline: difference of the means in % of the baseline's mean; "
            "better/worse takes into account whether lower or higher is better."
        )
        notes.append(
            "p: Welch's t-test, or Mann–Whitney U when n≥3 and Shapiro–Wilk doubts "
            "normality; *** p<0.001, ** p<0.01, * p<0.05, ns not significant."
        )
    return notes


def render_table(rows: list[Row], console: Console | None = None, title: str = "") -> None:
    """Print the table (and its footnotes) to a rich console.

    Compact on purpose: workload and metric are printed once per group of rows, the
    baseline row says "baseline" in the Δ column, p and its mark share a column, the
    fail and CPU columns appear when some run failed or was CPU-bound (a line below says
    so otherwise), and numbers are never cut — on a narrow terminal the names are.
    """
    console = console or Console()
    any_failed = any(r.failed for r in rows)
    any_bound = any(r.cpu_mark for r in rows)
    any_holm = any(r.p_holm is not None for r in rows)
    several_topologies = len({r.topology for r in rows}) > 1
    name_columns = (["topology"] if several_topologies else []) + ["workload", "metric", "arch"]
    right: JustifyMethod = "right"
    left: JustifyMethod = "left"
    number_columns = (
        [("n", right)]
        + ([("fail", right)] if any_failed else [])
        + [("mean ± 95% CI", right), ("unit", left), ("Δ vs baseline", right), ("p", left)]
        + ([("p Holm", left)] if any_holm else [])
        + ([("CPU", left)] if any_bound else [])
    )

    cells, previous = [], None
    for row in rows:
        rec = row.record()
        group = (row.topology, row.workload, row.metric)
        first = group != previous
        previous = group
        # Text objects, not markup strings: names from a study file may contain "[".
        names = [row.topology] if several_topologies else []
        names += [row.workload, row.metric or "(no data)"]
        p_cell = f"{rec['p_text']} {row.significance}".strip() if row.test else ""
        cells.append(
            (
                first,
                [
                    *(Text(name if first else "") for name in names),
                    Text(row.architecture, style="bold" if row.is_baseline else ""),
                    Text(str(row.n)),
                    *(
                        [Text(str(row.failed), style="red" if row.failed else "")]
                        if any_failed
                        else []
                    ),
                    Text(rec["mean_ci"] if row.n else "—"),
                    Text(row.unit),
                    Text(
                        "baseline" if row.is_baseline else rec["diff"],
                        style={"better": "green", "worse": "red"}.get(rec["verdict"], ""),
                    ),
                    Text(p_cell),
                    *([Text(rec["p_holm_text"])] if any_holm else []),
                    *([Text(row.cpu_mark, style="yellow")] if any_bound else []),
                ],
            )
        )

    # Widths decided here, not by rich (which would squeeze every column alike): numbers
    # and their headers get their full width; the name columns share what is left.
    def natural(j: int, header: str) -> int:
        return max([len(c[j].plain) for _, c in cells] + [len(header)])

    number_widths = [
        natural(j, name) for j, (name, _) in enumerate(number_columns, start=len(name_columns))
    ]
    name_widths = [natural(i, name) for i, name in enumerate(name_columns)]
    gaps = 3 * (len(name_columns) + len(number_columns) - 1)  # padding 2 + separator 1
    room = console.width - sum(number_widths) - gaps
    while sum(name_widths) > room and max(name_widths) > 4:
        name_widths[name_widths.index(max(name_widths))] -= 1

    table = Table(
        title=title or None, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1)
    )
    for name, width in zip(name_columns, name_widths):
        table.add_column(name, no_wrap=True, overflow="ellipsis", width=width)
    for (name, justify), width in zip(number_columns, number_widths):
        table.add_column(name, justify=justify, no_wrap=True, width=width)
    for n, (first, row_cells) in enumerate(cells):
        if first and n:
            table.add_section()
        table.add_row(*row_cells)
    # Too narrow even with cut names: print at full width and let the terminal wrap
    # rather than have rich squeeze the numbers.
    needed = sum(number_widths) + sum(name_widths) + gaps
    if needed <= console.width:
        console.print(table)
    else:
        wide = console.options.update(width=needed, max_width=needed)
        console.print(Segments(console.render(table, wide)), crop=False)
    if not any_failed:
        console.print("No run failed.", highlight=False)
    if not any(r.cpu_bound_runs for r in rows):
        console.print("No run was CPU-bound.", highlight=False)
    for note in footnotes(rows):
        console.print(note, markup=False, highlight=False)
