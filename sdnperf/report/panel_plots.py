"""Over-time figures with one panel per topology or per architecture, the layout of seed
paper 000's figures (its (a), (b), (c) are the topologies; Figs 10a-b and 12a-b are one
architecture each with a line per traffic type of the mix).

- `throughput_by_topology`: a workload's aggregate throughput (summed over its flows)
  against time, a panel per topology, a line per architecture (000 Figs 5, 6, 8).
- `members_over_time`: a mixed workload on one topology, a panel per architecture, a line
  per member (its aggregate throughput; 000 Figs 10a-b, 12a-b).

Registered as a plot provider (report/plots.py), so every report draws them where the data
allows; their ids are in the registry for figure maps. Per-flow metrics over time (jitter,
ICMP throughput, TCP RTT) are `plots.metric_over_time`, registered here as
"metric-over-time" (its stem was fixed before figure maps named it).
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.report import series
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.plots import (
    DPI,
    SIZE,
    THROUGHPUT,
    _colors,
    _ordered,
    _save,
    register_plot_provider,
)
from sdnperf.store import Store

register_kind(
    "metric-over-time",
    "plot",
    "{metric}_over_time_{workload}",
    "a per-flow sampled metric (jitter, ICMP throughput, TCP RTT) against time, the mean "
    "over flows, a panel per topology, a line per architecture",
)
register_kind(
    "throughput-by-topology",
    "plot",
    "throughput_by_topology_{workload}",
    "a workload's aggregate throughput against time, a panel per topology, a line per architecture",
)
register_kind(
    "members-over-time",
    "plot",
    "members_{workload}_{topology}",
    "a mixed workload on one topology: each member's aggregate throughput against time, a "
    "panel per architecture, a line per member",
)

MEMBER_COLORS = [f"C{i}" for i in range(10)]


def _topologies(store: Store, study_id: int, workload: str, metric: str) -> list[str]:
    """Topologies in the order their runs were stored."""
    seen: dict[str, None] = {}
    for s in store.samples(study_id=study_id, workload=workload, metric=metric, status="ok"):
        if s.t is not None:
            seen.setdefault(s.topology, None)
    return list(seen)


def _panels(n: int) -> tuple[Figure, list]:
    width = SIZE[0] * max(1.0, 0.6 * n)
    fig = Figure(figsize=(width, SIZE[1]), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = list(fig.subplots(1, n, sharey=True, squeeze=False)[0])
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("time since workload start (s)")
    return fig, axes


def throughput_by_topology(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    panels = {
        topo: series.throughput_over_time(store, study_id, workload, THROUGHPUT, "sum", topo)
        for topo in _topologies(store, study_id, workload, THROUGHPUT)
    }
    panels = {topo: data for topo, data in panels.items() if data}
    if not panels:
        return None
    fig, axes = _panels(len(panels))
    colors = _colors(store, study_id, baseline)
    unit = ""
    for ax, (topo, data) in zip(axes, panels.items()):
        for arch in _ordered(data, store, study_id, baseline):
            ts = data[arch]
            ax.plot(ts.t, ts.mean, color=colors[arch], marker=".", label=_label(arch, ts))
            if ts.runs > 1:
                ax.fill_between(ts.t, ts.low, ts.high, color=colors[arch], alpha=0.2, linewidth=0)
            unit = ts.unit
        ax.set_title(topo, fontsize="medium")
        ax.legend(fontsize="x-small", title="band: min–max across runs", title_fontsize="x-small")
    axes[0].set_ylabel(f"aggregate throughput ({unit})")
    axes[0].set_ylim(bottom=0)
    fig.suptitle(
        f"{workload}: throughput over time, per topology\n{series.conditions(store, study_id)}",
        fontsize="medium",
    )
    return _save(fig, out_dir, f"throughput_by_topology_{workload}")


def members_over_time(
    store: Store,
    study_id: int,
    out_dir: str | Path,
    workload: str,
    topology: str,
    baseline: str | None = None,
) -> Path | None:
    """Each member's aggregate throughput (members are stored as workload "MIX/MEMBER")."""
    members = [
        w
        for w in series.workloads_with(store, study_id, THROUGHPUT)
        if w.startswith(workload + "/")
    ]
    # per_arch[arch][member] = that member's series on this topology
    per_arch: dict[str, dict[str, series.TimeSeries]] = {}
    for member in members:
        for arch, ts in series.throughput_over_time(
            store, study_id, member, THROUGHPUT, "sum", topology
        ).items():
            per_arch.setdefault(arch, {})[member] = ts
    if not per_arch:
        return None
    archs = _ordered(per_arch, store, study_id, baseline)
    fig, axes = _panels(len(archs))
    color = {m: MEMBER_COLORS[i % 10] for i, m in enumerate(members)}
    unit = ""
    for ax, arch in zip(axes, archs):
        for member, ts in per_arch[arch].items():
            short = member[len(workload) + 1 :]
            ax.plot(ts.t, ts.mean, color=color[member], marker=".", label=_label(short, ts))
            if ts.runs > 1:
                ax.fill_between(ts.t, ts.low, ts.high, color=color[member], alpha=0.2, linewidth=0)
            unit = ts.unit
        ax.set_title(arch, fontsize="medium")
        ax.legend(fontsize="x-small", title="band: min–max across runs", title_fontsize="x-small")
    axes[0].set_ylabel(f"aggregate throughput per member ({unit})")
    axes[0].set_ylim(bottom=0)
    fig.suptitle(
        f"{workload} on {topology}: each member's throughput over time\n"
        f"{series.conditions(store, study_id)}",
        fontsize="medium",
    )
    return _save(fig, out_dir, f"members_{workload}_{topology}")


def _label(name: str, ts: series.TimeSeries) -> str:
    return (
        f"{name} ({ts.runs} run{'s' if ts.runs != 1 else ''}, "
        f"{ts.flows} flow{'s' if ts.flows != 1 else ''})"
    )


@register_plot_provider
def panel_figures(store: Store, study_id: int, out_dir: str | Path, add) -> None:
    """Per-topology throughput for every plain workload; per-member lines for every mix."""
    baseline = (store.study(study_id).spec.get("study") or {}).get("baseline")
    workloads = series.workloads_with(store, study_id, THROUGHPUT)
    mixes = sorted({w.split("/", 1)[0] for w in workloads if "/" in w})
    for w in workloads:
        if "/" in w:
            continue
        add(
            throughput_by_topology(store, study_id, out_dir, w, baseline),
            f"{w}: throughput summed over the workload's flows per reporting interval, one "
            "panel per topology; the line is the mean across repetitions, the band their "
            "minimum and maximum.",
            f"{w}: throughput per topology — no time-stamped {THROUGHPUT} samples",
        )
    for mix in mixes:
        for topo in _topologies(store, study_id, mix, "aggregate_mbps") or sorted(
            {r.topology for r in store.runs(study_id) if r.workload == mix}
        ):
            add(
                members_over_time(store, study_id, out_dir, mix, topo, baseline),
                f"{mix} on {topo}: each member's throughput (summed over its flows) per "
                "reporting interval, one panel per architecture; mean across repetitions, "
                "band min–max.",
                f"{mix} on {topo}: members over time — no time-stamped {THROUGHPUT} samples",
            )
