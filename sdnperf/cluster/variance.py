"""Does the node explain the results? A per-node mean table and a Kruskal–Wallis test.

Blocking keeps every comparison of architectures on one node, so a slower node does not
bias a comparison; it still widens the spread of each architecture's numbers. For every
(topology, sweep point, architecture, workload, metric) cell whose ok runs come from at
least two nodes, the runs' values are grouped by node and tested with Kruskal–Wallis (no
normality assumed, works for two or more nodes). With many cells, some would pass p < 0.05
by chance, so a warning needs p below 0.05 divided by the number of cells (Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from sdnperf.report.sections import register_section

ALPHA = 0.05
MIN_RUNS_PER_NODE = 2


@dataclass(frozen=True)
class Value:
    node: str
    cell: tuple  # (topology, point, architecture, workload, metric)
    value: float


@dataclass
class Cell:
    cell: tuple
    per_node: dict[str, tuple[int, float]]  # node -> (n, mean)
    p: float | None  # None: not testable (too few runs per node, or no spread at all)


@dataclass
class NodeReport:
    nodes: list[str]
    runs_per_node: dict[str, int]
    cells: list[Cell] = field(default_factory=list)
    node_of_run: dict[str, str] = field(default_factory=dict)  # run key -> node
    threshold: float = ALPHA

    @property
    def tested(self) -> list[Cell]:
        return [c for c in self.cells if c.p is not None]

    @property
    def flagged(self) -> list[Cell]:
        return [c for c in self.tested if c.p is not None and c.p < self.threshold]

    def warnings(self) -> list[str]:
        out = []
        for c in self.flagged:
            topology, point, arch, workload, metric = c.cell
            where = f"{workload} {metric}, {arch}" + (f", {point}" if point else "")
            means = ", ".join(
                f"{node} {mean:.4g} (n={n})" for node, (n, mean) in c.per_node.items()
            )
            out.append(
                f"the node explains variance of {where}: Kruskal–Wallis p={c.p:.2g} "
                f"(< {self.threshold:.2g}); means per node: {means}"
            )
        return out


def analyse(values: list[Value], runs_per_node: dict[str, int]) -> NodeReport:
    """Per-node means and the test, for every cell (pure: no store)."""
    from scipy.stats import kruskal

    nodes = sorted(runs_per_node)
    grouped: dict[tuple, dict[str, list[float]]] = {}
    for v in values:
        if not math.isnan(v.value):
            grouped.setdefault(v.cell, {}).setdefault(v.node, []).append(v.value)
    report = NodeReport(nodes, dict(runs_per_node))
    for cell, by_node in grouped.items():
        per_node = {n: (len(xs), sum(xs) / len(xs)) for n, xs in sorted(by_node.items())}
        samples = [xs for xs in by_node.values() if len(xs) >= MIN_RUNS_PER_NODE]
        p = None
        if len(samples) >= 2 and len({x for xs in samples for x in xs}) > 1:
            p = float(kruskal(*samples).pvalue)
        report.cells.append(Cell(cell, per_node, p))
    report.threshold = ALPHA / max(1, len(report.tested))
    return report


def node_report(store, study_id: int) -> NodeReport | None:
    """The report of a stored study; None when its runs did not come from several nodes."""
    runs = store.runs(study_id)
    node_of = {r.id: r.params.get("node") for r in runs}
    if len({n for n in node_of.values() if n}) < 2:
        return None
    point_of = {r.id: _point_text(getattr(r, "point", None)) for r in runs}
    runs_per_node: dict[str, int] = {}
    for r in runs:
        if node_of[r.id]:
            runs_per_node[node_of[r.id]] = runs_per_node.get(node_of[r.id], 0) + 1
    values = [
        Value(
            node_of[s.run_id],
            (s.topology, point_of[s.run_id], s.architecture, s.workload, s.metric),
            s.value,
        )
        for s in store.summaries(study_id)
        if s.status == "ok" and node_of.get(s.run_id) and s.value is not None
    ]
    report = analyse(values, runs_per_node)
    report.node_of_run = {r.key: node_of[r.id] for r in runs if node_of[r.id]}
    return report


def _point_text(point) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(point.items())) if point else ""


@register_section("end")
def node_section(store, study_id: int) -> str:
    """The report's "Nodes" section of a study spread over a cluster's nodes."""
    return html_section(node_report(store, study_id))


def html_section(report: NodeReport | None) -> str:
    """The "Nodes" section of a node report (empty when the study ran on one machine)."""
    if report is None:
        return ""
    heads = "".join(f"<th>{escape(n)}</th>" for n in report.nodes)
    rows = []
    for c in report.cells:
        topology, point, arch, workload, metric = c.cell
        cells = "".join(
            f'<td class="num">{c.per_node[n][1]:.4g} <small>(n={c.per_node[n][0]})</small></td>'
            if n in c.per_node
            else "<td></td>"
            for n in report.nodes
        )
        p = "—" if c.p is None else f"{c.p:.2g}" + (" ⚠" if c in report.flagged else "")
        label = f"{escape(arch)}" + (f" <small>{escape(point)}</small>" if point else "")
        rows.append(
            f"<tr><td>{escape(workload)}</td><td>{escape(metric)}</td><td>{label}</td>"
            f'{cells}<td class="num">{p}</td></tr>'
        )
    counts = ", ".join(f"{escape(n)}: {k} runs" for n, k in report.runs_per_node.items())
    flagged = report.warnings()
    if flagged:
        verdict = '<p class="cpu">⚠ ' + "<br>⚠ ".join(escape(w) for w in flagged) + "</p>"
    elif report.tested:
        verdict = (
            f"<p>No node effect found (Kruskal–Wallis on {len(report.tested)} cell(s), "
            f"threshold p &lt; {report.threshold:.2g}).</p>"
        )
    else:
        verdict = (
            f"<p>Not tested: a cell needs at least {MIN_RUNS_PER_NODE} ok runs on each "
            "of two nodes (more repetitions).</p>"
        )
    per_run = "".join(
        f"<tr><td>{escape(key)}</td><td>{escape(node)}</td></tr>"
        for key, node in sorted(report.node_of_run.items())
    )
    return (
        f"<h2>Nodes</h2><p>The study ran on a cluster: {counts}. Each block (all "
        "architectures of one workload, point and repetition) ran on one node, so every "
        "comparison was made on one machine; the table shows whether the node itself "
        "moves the numbers.</p>"
        + verdict
        + f"<table><tr><th>workload</th><th>metric</th><th>architecture</th>{heads}"
        f"<th>p (Kruskal–Wallis)</th></tr>{''.join(rows)}</table>"
        f"<details><summary>The node of every run</summary><table><tr><th>run</th>"
        f"<th>node</th></tr>{per_run}</table></details>"
    )
