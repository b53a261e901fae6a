"""PNG figures of a study (matplotlib, Agg canvas, no pyplot global state).

Each function reads the store, writes one PNG into `out_dir` and returns its Path, or
returns None and logs why when the data it needs is absent. Every title names the
workload and the conditions (topology, repetitions, CPU-bound runs); axes carry units.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.report import metrics, series
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.stats import ecdf, mean_ci
from sdnperf.store import Store

log = logging.getLogger(__name__)

DPI = 100
SIZE = (8, 4.5)
RTT = "rtt_ms"
THROUGHPUT = "throughput_mbps"
# Per-flow metrics sampled per interval, drawn over time (mean over flows): what they are.
OVER_TIME = {
    "jitter_ms": "UDP jitter (RFC 3550, iperf3's running value)",
    "icmp_throughput_bps": "ICMP throughput (echo replies' bits per second)",
    "tcp_rtt_ms": "TCP sender's smoothed RTT",
    "jitter_rfc3550_ms": "live video jitter (RFC 3550 running value at each interval's end)",
    "arp_frames_per_s": "ARP frames captured at the client's link",
    "lldp_frames_per_s": "LLDP frames captured at the client's link",
}

# Extension point: figure providers of other subsystems register themselves when their
# module is imported (register_plot_provider); the CLI imports them, so report/ names none.
# Each is called as fn(store, study_id, out_dir, add) and adds figures through add(path,
# caption, reason_if_not_drawn); it returns quietly when the study has nothing for it.
PlotProvider = Callable[..., None]
PLOT_PROVIDERS: list[PlotProvider] = []


def register_plot_provider(provider: PlotProvider) -> PlotProvider:
    """Add `provider` to every report (idempotent; usable as a decorator)."""
    if provider not in PLOT_PROVIDERS:
        PLOT_PROVIDERS.append(provider)
    return provider


@dataclass
class PlotSet:
    figures: list[tuple[Path, str]] = field(default_factory=list)  # (png, caption)
    skipped: list[str] = field(default_factory=list)  # one sentence per figure not drawn

    @property
    def paths(self) -> list[Path]:
        return [path for path, _ in self.figures]


def all_plots(
    store: Store, study_id: int, out_dir: str | Path, baseline: str | None = None
) -> PlotSet:
    """Every figure the data allows; the reasons for those it does not."""
    out = PlotSet()

    def add(path: Path | None, caption: str, reason: str) -> None:
        if path is None:
            out.skipped.append(reason)
            log.info("plot skipped: %s", reason)
        else:
            out.figures.append((path, caption))

    tput = series.workloads_with(store, study_id, THROUGHPUT)
    for w in tput:
        add(
            throughput_over_time(store, study_id, out_dir, w, baseline),
            f"{w}: throughput summed over the workload's flows, per reporting interval; the "
            "line is the mean across repetitions, the band their minimum and maximum.",
            f"{w}: throughput over time — no time-stamped {THROUGHPUT} samples",
        )
    if not tput:
        add(None, "", f"throughput over time — no workload recorded {THROUGHPUT}")
    for metric, what in OVER_TIME.items():
        for w in series.workloads_with(store, study_id, metric):
            add(
                metric_over_time(store, study_id, out_dir, w, metric, baseline),
                f"{w}: {what} per reporting interval, the mean over the workload's flows; "
                "the line is the mean across repetitions, the band their minimum and maximum.",
                f"{w}: {metrics.label(metric)} over time — no time-stamped {metric} samples",
            )
    rtt = series.workloads_with(store, study_id, RTT)
    for w in rtt:
        add(
            rtt_bars(store, study_id, out_dir, w, baseline),
            f"{w}: steady-state RTT. Each dot is one run's mean RTT; the bar is the mean of "
            "the runs with its 95 % confidence interval.",
            f"{w}: RTT bars — no steady-state {RTT} samples",
        )
        add(
            rtt_cdf(store, study_id, out_dir, w, baseline),
            f"{w}: distribution of every steady-state packet's RTT, all runs pooled.",
            f"{w}: RTT CDF — no steady-state {RTT} samples",
        )
        add(
            first_vs_steady(store, study_id, out_dir, w, baseline),
            f"{w}: RTT of each flow's first packet on a fresh network (cold) next to the "
            "steady-state RTT; mean of the per-run means with 95 % CI.",
            f"{w}: first-packet vs steady RTT — needs both 'cold' and steady {RTT} samples",
        )
    if not rtt:
        add(None, "", f"RTT bars, CDF and first-packet plots — no workload recorded {RTT}")
    for provider in PLOT_PROVIDERS:
        name = f"{provider.__module__}.{provider.__qualname__}"
        try:
            provider(store, study_id, out_dir, add)
        except Exception as exc:  # a provider's bug must not cost the whole report
            log.warning("plot provider %s failed: %s", name, exc)
            out.skipped.append(f"{name}: failed ({exc})")
    add(
        cpu_per_role(store, study_id, out_dir, baseline),
        "Mean CPU use of each process role during a run (100 % = one core fully busy), "
        "averaged over the runs of all workloads, with 95 % CI.",
        "CPU use per role — no run recorded per-process CPU use",
    )
    return out


# -- the figures -----------------------------------------------------------------------
# Their ids for figure maps (sdnperf/studies/figure_map.py): the PNG stem each one saves.
register_kind(
    "throughput-over-time",
    "plot",
    "throughput_{workload}",
    "a workload's throughput summed over its flows against time, one line per architecture",
)
register_kind("rtt-bars", "plot", "rtt_bars_{workload}", "mean steady RTT per architecture")
register_kind("rtt-cdf", "plot", "rtt_cdf_{workload}", "CDF of every steady packet's RTT")
register_kind(
    "rtt-first-vs-steady",
    "plot",
    "rtt_first_vs_steady_{workload}",
    "first-packet (cold) RTT beside the steady RTT, per architecture",
)
register_kind("cpu-per-role", "plot", "cpu_per_role", "CPU use of each process role")


def throughput_over_time(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    data = series.throughput_over_time(store, study_id, workload, THROUGHPUT)
    if not data:
        log.info("%s: no time-stamped %s samples, throughput plot skipped", workload, THROUGHPUT)
        return None
    fig, ax = _figure()
    colors = _colors(store, study_id, baseline)
    for arch in _ordered(data, store, study_id, baseline):
        ts = data[arch]
        ax.plot(
            ts.t,
            ts.mean,
            color=colors[arch],
            marker=".",
            label=f"{arch} (mean of {ts.runs} runs, {ts.flows} flow{'s' if ts.flows != 1 else ''})",
        )
        if ts.runs > 1:
            ax.fill_between(ts.t, ts.low, ts.high, color=colors[arch], alpha=0.2, linewidth=0)
    unit = next(iter(data.values())).unit
    ax.set_xlabel("time since workload start (s)")
    ax.set_ylabel(f"aggregate throughput ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", title="band: min–max across runs", title_fontsize="small")
    _title(ax, f"{workload}: throughput over time", store, study_id)
    return _save(fig, out_dir, f"throughput_{workload}")


def metric_over_time(
    store: Store,
    study_id: int,
    out_dir: str | Path,
    workload: str,
    metric: str,
    baseline: str | None = None,
) -> Path | None:
    """A per-flow sampled metric over time, one line per architecture and one panel per
    topology (000 Figs 3-4, 7, 9, 10 and 12 draw jitter and ICMP throughput this way, a
    panel per topology)."""
    topologies = sorted(
        {
            s.topology
            for s in store.samples(study_id=study_id, workload=workload, metric=metric, status="ok")
        }
    )
    panels = {
        topo: series.throughput_over_time(store, study_id, workload, metric, "mean", topo)
        for topo in topologies
    }
    panels = {topo: data for topo, data in panels.items() if data}
    if not panels:
        return None
    width = SIZE[0] * max(1.0, 0.6 * len(panels))
    fig = Figure(figsize=(width, SIZE[1]), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    colors = _colors(store, study_id, baseline)
    unit = ""
    for ax, (topo, data) in zip(axes, panels.items()):
        for arch in _ordered(data, store, study_id, baseline):
            ts = data[arch]
            ax.plot(
                ts.t,
                ts.mean,
                color=colors[arch],
                marker=".",
                label=f"{arch} ({ts.runs} run{'s' if ts.runs != 1 else ''}, "
                f"{ts.flows} flow{'s' if ts.flows != 1 else ''})",
            )
            if ts.runs > 1:
                ax.fill_between(ts.t, ts.low, ts.high, color=colors[arch], alpha=0.2, linewidth=0)
            unit = ts.unit
        ax.set_xlabel("time since workload start (s)")
        ax.set_title(topo if len(panels) > 1 else "", fontsize="medium")
        ax.legend(fontsize="x-small", title="band: min–max across runs", title_fontsize="x-small")
    axes[0].set_ylabel(f"{metrics.label(metric)} per flow ({unit})")
    axes[0].set_ylim(bottom=0)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle(
        f"{workload}: {metrics.label(metric)} over time\n{series.conditions(store, study_id)}",
        fontsize="medium",
    )
    return _save(fig, out_dir, f"{metric}_over_time_{workload}")


def rtt_bars(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    values, unit = series.per_run_means(store, study_id, workload, RTT, cold=False)
    if not values:
        log.info("%s: no steady %s samples, RTT bars skipped", workload, RTT)
        return None
    archs = _ordered(values, store, study_id, baseline)
    colors = _colors(store, study_id, baseline)
    fig, ax = _figure()
    for i, arch in enumerate(archs):
        ci = mean_ci(values[arch])
        ax.bar(
            i,
            ci.mean,
            color=colors[arch],
            alpha=0.8,
            yerr=ci.half_width if ci.half_width is not None else None,
            capsize=6,
        )
        # the individual runs, so the spread is visible even when n is small
        ax.scatter(np.full(len(values[arch]), i), values[arch], color="black", s=12, zorder=3)
        ax.annotate(
            f"n={ci.n}",
            (i, 0),
            textcoords="offset points",
            xytext=(0, 3),
            ha="center",
            fontsize="small",
            color="white",
        )
    ax.set_xticks(range(len(archs)), archs)
    ax.set_ylabel(f"steady-state RTT ({unit})")
    ax.set_ylim(bottom=0)
    _title(ax, f"{workload}: mean steady-state RTT per run, 95 % CI, dots = runs", store, study_id)
    return _save(fig, out_dir, f"rtt_bars_{workload}")


def rtt_cdf(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    values, unit = series.pooled(store, study_id, workload, RTT, cold=False)
    if not values:
        log.info("%s: no steady %s samples, RTT CDF skipped", workload, RTT)
        return None
    colors = _colors(store, study_id, baseline)
    fig, ax = _figure()
    for arch in _ordered(values, store, study_id, baseline):
        x, y = ecdf(values[arch])
        ax.step(x, y, where="post", color=colors[arch], label=f"{arch} ({len(x)} packets)")
    everything = np.concatenate([np.asarray(v, dtype=float) for v in values.values()])
    if everything.min() > 0 and everything.max() / everything.min() > 100:
        ax.set_xscale("log")  # controller round trips and switch hits differ by decades
    ax.set_xlabel(
        f"steady-state RTT ({unit})" + (", log scale" if ax.get_xscale() == "log" else "")
    )
    ax.set_ylabel("fraction of packets ≤ x")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    _title(ax, f"{workload}: RTT distribution (all steady packets of all runs)", store, study_id)
    return _save(fig, out_dir, f"rtt_cdf_{workload}")


def first_vs_steady(
    store: Store, study_id: int, out_dir: str | Path, workload: str, baseline: str | None = None
) -> Path | None:
    cold, unit = series.per_run_means(store, study_id, workload, RTT, cold=True)
    steady, _ = series.per_run_means(store, study_id, workload, RTT, cold=False)
    if not cold or not steady:
        log.info(
            "%s: needs both cold and steady %s samples, first-packet plot skipped", workload, RTT
        )
        return None
    archs = _ordered({**steady, **cold}, store, study_id, baseline)
    fig, ax = _figure()
    width = 0.38
    means = []
    for offset, (label, data, color) in zip(
        (-width / 2, width / 2),
        (("first packet (cold)", cold, "#d62728"), ("steady state", steady, "#1f77b4")),
    ):
        xs, ys, errs = [], [], []
        for i, arch in enumerate(archs):
            if arch not in data:
                continue
            ci = mean_ci(data[arch])
            xs.append(i + offset)
            ys.append(ci.mean)
            errs.append(ci.half_width or 0.0)
            means.append(ci.mean)
        ax.bar(xs, ys, width, yerr=errs, capsize=4, color=color, alpha=0.85, label=label)
        for x, y in zip(xs, ys):
            ax.annotate(
                f"{y:.3g}",
                (x, y),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                fontsize="x-small",
            )
    positive = [m for m in means if m > 0 and math.isfinite(m)]
    log_scale = bool(positive) and max(positive) / min(positive) > 20
    if log_scale:
        ax.set_yscale("log")  # a cold packet can cost 100× a steady one
    ax.set_xticks(range(len(archs)), archs)
    ax.set_ylabel(f"RTT ({unit}), mean per run, 95 % CI" + (", log scale" if log_scale else ""))
    ax.legend(fontsize="small")
    _title(ax, f"{workload}: first-packet RTT vs steady-state RTT", store, study_id)
    return _save(fig, out_dir, f"rtt_first_vs_steady_{workload}")


def cpu_per_role(
    store: Store, study_id: int, out_dir: str | Path, baseline: str | None = None
) -> Path | None:
    data = series.cpu_per_role(store, study_id)
    if not data:
        log.info("no per-role CPU use recorded, CPU plot skipped")
        return None
    archs = _ordered(data, store, study_id, baseline)
    roles = sorted({role for roles in data.values() for role in roles})
    colors = _colors(store, study_id, baseline)
    fig, ax = _figure()
    width = 0.8 / len(archs)
    for j, arch in enumerate(archs):
        xs, ys, errs = [], [], []
        for i, role in enumerate(roles):
            if role in data[arch]:
                ci = mean_ci(data[arch][role])
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(ci.mean)
                errs.append(ci.half_width or 0.0)
        ax.bar(xs, ys, width, yerr=errs, capsize=3, color=colors[arch], alpha=0.85, label=arch)
    ax.axhline(100, color="grey", linestyle="--", linewidth=1)
    ax.annotate(
        "one core",
        (len(roles) - 0.5, 100),
        textcoords="offset points",
        xytext=(-2, 2),
        ha="right",
        fontsize="x-small",
        color="grey",
    )
    ax.set_xticks(range(len(roles)), roles)
    ax.set_ylabel("CPU use (% of one core), mean per run, 95 % CI")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    _title(ax, "CPU use per role (all workloads)", store, study_id)
    return _save(fig, out_dir, "cpu_per_role")


# -- helpers -----------------------------------------------------------------------------


def _figure():
    fig = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _title(ax, what: str, store: Store, study_id: int) -> None:
    ax.set_title(f"{what}\n{series.conditions(store, study_id)}", fontsize="medium")


def _colors(store: Store, study_id: int, baseline: str | None) -> dict[str, str]:
    """The same color for an architecture in every figure."""
    palette = [f"C{i}" for i in range(10)]
    return {
        a: palette[i % 10] for i, a in enumerate(series.architectures(store, study_id, baseline))
    }


def _ordered(data: dict, store: Store, study_id: int, baseline: str | None) -> list[str]:
    return [a for a in series.architectures(store, study_id, baseline) if a in data]


def _save(fig: Figure, out_dir: str | Path, stem: str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', stem)}.png"
    save_png(fig, path)
    return path


def save_png(fig: Figure, path: Path) -> None:
    """`fig` as a PNG at its own dpi, drawn once. savefig draws a figure that has a
    layout engine twice, laying it out each time (a first draw without rendering, only to
    lay it out); the Agg canvas's own print lays it out in its one draw. Same pixels."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.print_png(path)
