"""Figures of links that changed during a run (a report extension, registered with
sdnperf.report.plots.register_plot_provider when imported): per workload with a recorded
link schedule, throughput and RTT over time, one line per architecture, with the applied
schedule (links/scheduler.py's link_* samples) drawn in a panel under them on the same
time axis."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.links.scheduler import METRICS
from sdnperf.report import series
from sdnperf.report.plots import DPI, _colors, _ordered, _save, register_plot_provider
from sdnperf.store import Store

LINK_METRICS = [metric for metric, _ in METRICS.values()]
RATE = "link_rate_mbps"
RTT_BIN_S = 0.5


def applied_schedule(store: Store, study_id: int, workload: str) -> dict[str, list]:
    """ "metric label" -> [(t, value)] of the first ok run that recorded it, directions with
    the same series drawn once ("h1-s1 up, h2-s1 down"). A schedule is the same in every
    run of a study point; each run's own record stays in the store."""
    rows = store.samples(study_id=study_id, workload=workload, metric=LINK_METRICS, status="ok")
    first_run: dict[str, int] = {}
    by_key: dict[tuple[str, str], list] = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r.run_id, r.t or 0.0)):
        if first_run.setdefault(r.metric, r.run_id) != r.run_id:
            continue
        by_key[(r.metric, r.flow)].append((r.t or 0.0, r.value))
    grouped: dict[tuple[str, tuple], list[str]] = defaultdict(list)
    for (metric, flow), points in by_key.items():
        grouped[(metric, tuple(v for _, v in points))].append(flow)
    out = {}
    for (metric, _), flows in grouped.items():
        points = by_key[(metric, flows[0])]
        label = ", ".join(flows[:3]) + (f" (+{len(flows) - 3})" if len(flows) > 3 else "")
        out[f"{metric.removeprefix('link_')}: {label}"] = points
    return out


def rtt_over_time(store: Store, study_id: int, workload: str) -> dict[str, tuple]:
    """Per architecture: steady RTT samples pooled over runs, mean per RTT_BIN_S bin."""
    rows = store.samples(study_id=study_id, workload=workload, metric="rtt_ms", status="ok")
    bins: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.t is not None and r.phase != series.COLD and np.isfinite(r.value):
            bins[r.architecture][int(r.t // RTT_BIN_S)].append(r.value)
    return {
        arch: (
            np.array([(k + 0.5) * RTT_BIN_S for k in sorted(b)]),
            np.array([np.mean(b[k]) for k in sorted(b)]),
        )
        for arch, b in bins.items()
    }


def link_schedule_figure(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    schedule = applied_schedule(store, study_id, workload)
    if not schedule:
        return None
    tput = series.throughput_over_time(store, study_id, workload)
    rtt = rtt_over_time(store, study_id, workload)
    # throughput: TimeSeries per architecture; RTT: (times, means) per architecture
    panels: list[tuple[str, dict[str, Any]]] = [p for p in (("tput", tput), ("rtt", rtt)) if p[1]]
    fig = Figure(figsize=(8, 2.6 * (len(panels) + 1)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels) + 1, 1, sharex=True, squeeze=False)[:, 0]
    colors = _colors(store, study_id, baseline)
    for ax, (kind, data) in zip(axes, panels):
        for arch in _ordered(data, store, study_id, baseline):
            if kind == "tput":
                ts = data[arch]
                ax.plot(ts.t, ts.mean, marker=".", color=colors[arch], label=f"{arch}")
                if ts.runs > 1:
                    ax.fill_between(ts.t, ts.low, ts.high, color=colors[arch], alpha=0.2, lw=0)
            else:
                t, mean = data[arch]
                ax.plot(t, mean, marker=".", color=colors[arch], label=arch)
        ax.set_ylabel(
            "throughput (Mbit/s)" if kind == "tput" else f"RTT (ms, {RTT_BIN_S:g}-s mean)"
        )
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    ax = axes[-1]
    right = None
    # every line runs to the same end: the last change anywhere, or the data panels' axis
    end = max(p[-1][0] for p in schedule.values()) + 1
    if panels:
        end = max(end, axes[0].get_xlim()[1])
    for i, (label, points) in enumerate(sorted(schedule.items())):
        t = [p[0] for p in points]
        v = [p[1] for p in points]
        target = ax
        if not label.startswith("rate_mbps"):
            right = right or ax.twinx()
            target = right
        target.step(t + [end], v + [v[-1]], where="post", color=f"C{(i + 5) % 10}", label=label)
    ax.set_ylabel("rate (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time since traffic start (s)")
    ax.grid(True, alpha=0.3)
    if right is not None:
        right.set_ylabel("delay/jitter (ms), loss (%)")
        right.set_ylim(bottom=0)
    handles = [h for a in (ax, right) if a is not None for h in a.get_legend_handles_labels()[0]]
    labels = [lab for a in (ax, right) if a is not None for lab in a.get_legend_handles_labels()[1]]
    ax.legend(
        handles, labels, fontsize="x-small", title="link setting applied", title_fontsize="small"
    )
    axes[0].set_title(
        f"{workload}: over time, with the link schedule applied\n"
        f"{series.conditions(store, study_id)}",
        fontsize="medium",
    )
    return _save(fig, out_dir, f"link_schedule_{workload}")


@register_plot_provider
def link_schedule_plots(store: Store, study_id: int, out_dir, add) -> None:
    workloads = {w for w, m in store.sample_metrics(study_id) if m in LINK_METRICS}
    for w in sorted(workloads):
        add(
            link_schedule_figure(store, study_id, out_dir, w),
            f"{w}: throughput and RTT over time (t = 0 at traffic start; lines: mean over "
            "repetitions) with, underneath, the link settings the schedule applied, as "
            "recorded when each change took effect.",
            f"{w}: link schedule figure — no link_* samples",
        )
