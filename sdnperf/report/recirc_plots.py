"""Figures of a recirculation study on the axes of seed paper 003 (Chapter 5).

A plot provider (report/plots.register_plot_provider), silent for studies whose runs have
no `recirc_passes` parameter. It reads the store only and draws, per the thesis's figures:

- min and mean RTT against the link rate at N = 0, with the theoretical RTT line
  (report/rtt_theory.py) — Figs 5.5/5.6;
- min and mean RTT against the number of recirculations N, one figure per link rate
  (transmissions N + 1 on the top axis) — Figs 5.8-5.17;
- a metric against the number of transmissions, one switch and the chain in one panel
  (min RTT, TCP throughput) — Figs 5.22-5.23, 5.25-5.27;
- throughput against N, a line per link rate — Figs 5.21, 5.24;
- UDP throughput and loss against N, a line per send rate, one figure per link rate —
  Figs 5.19/5.20.

Every figure: the mean of the runs at each point, every run as a dot. The data functions
(`rows`, `lines_by`, ...) are pure and unit-tested; the drawing is thin around them.
"""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.report import metrics
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.plots import DPI, _colors, _save, register_plot_provider
from sdnperf.report.rtt_theory import theoretical_rtt_ms, transmissions
from sdnperf.report.sweep_plots import spans_decades
from sdnperf.samples import format_value
from sdnperf.store import Store

PASSES = ".params.recirc_passes"  # the end of a point's path that holds N
BW = "topology.link.bw"
UNSWEPT = "as set"  # a study that does not sweep the link rate
PANEL = (5.0, 4.0)

register_kind(
    "rtt-vs-link-rate",
    "plot",
    "rtt_vs_link_rate_{workload}",
    "min and mean RTT against the link rate at N = 0, with the theoretical RTT (003 5.5/5.6)",
)
register_kind(
    "rtt-vs-passes",
    "plot",
    "rtt_vs_passes_{workload}_{bw}",
    "min and mean RTT against the number of recirculations at one link rate (003 5.8-5.17)",
)
register_kind(
    "vs-transmissions",
    "plot",
    "transmissions_{workload}_{metric}_{bw}",
    "a metric against the number of transmissions, one switch and the chain in one panel",
)
register_kind(
    "throughput-by-link-rate",
    "plot",
    "throughput_by_link_rate_{workload}_{topology}",
    "throughput against the number of recirculations, a line per link rate (003 5.21/5.24)",
)
register_kind(
    "by-send-rate",
    "plot",
    "by_send_rate_{workload}_{metric}_{bw}",
    "a UDP metric against the number of recirculations, a line per send rate (003 5.19/5.20)",
)


@dataclass(frozen=True)
class Row:
    """One run's value of one metric, with the thesis's coordinates of the run."""

    topology: str
    architecture: str
    workload: str
    passes: int
    bw: object  # "unlimited", a number (Mbit/s) or UNSWEPT
    send_rate: str | None  # a swept workload rate ("9.5M"), else None
    metric: str
    value: float


def rate_mbps(value: object) -> float | None:
    """A link rate or send rate in Mbit/s: 10 -> 10, "9.5M" -> 9.5, "500K" -> 0.5;
    "unlimited" (and anything unreadable) -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().lower()
    scale = {"k": 1e-3, "m": 1.0, "g": 1e3}.get(text[-1:], None)
    try:
        return float(text[:-1]) * scale if scale is not None else float(text) / 1e6
    except ValueError:
        return None


def bw_label(bw: object) -> str:
    """The thesis's names of link rates: no limit, 1 Gbit/s, 1 Mbit/s, 100 kbit/s ..."""
    mbps = rate_mbps(bw)
    if mbps is None:
        return "no limit" if bw == "unlimited" else str(bw)
    if mbps >= 1000:
        return f"{mbps / 1000:g} Gbit/s"
    if mbps >= 1:
        return f"{mbps:g} Mbit/s"
    return f"{mbps * 1000:g} kbit/s"


def bw_order(bw: object) -> float:
    """Sort key: unlimited first, then fastest to slowest (the thesis's order)."""
    mbps = rate_mbps(bw)
    return -math.inf if mbps is None else -mbps


def switch_counts(spec: dict) -> dict[str, int]:
    """Switches on the path of each topology of a study spec (single: 1, linear: its
    `switches`); topologies of other kinds are left out (no "transmissions" for them)."""
    out = {}
    for topo in spec.get("topology", []) or []:
        if not isinstance(topo, dict) or "name" not in topo:
            continue
        if topo.get("kind") == "single":
            out[topo["name"]] = 1
        elif topo.get("kind") == "linear" and isinstance(topo.get("switches"), int):
            out[topo["name"]] = topo["switches"]
    return out


def rows(store: Store, study_id: int) -> list[Row]:
    """Every ok run's summary values of a study whose runs sweep `recirc_passes`."""
    runs = {r.id: r for r in store.runs(study_id) if r.status == "ok"}
    out = []
    for s in store.summaries(study_id):
        run = runs.get(s.run_id)
        if run is None or not math.isfinite(s.value):
            continue
        passes = [v for k, v in run.point.items() if k.endswith(PASSES)]
        if len(passes) != 1 or not isinstance(passes[0], int):
            continue
        rate = run.point.get(f"workload.{run.workload}.rate")
        out.append(
            Row(
                run.topology,
                run.architecture,
                s.workload,
                passes[0],
                run.point.get(BW, UNSWEPT),
                None if rate is None else str(rate),
                s.metric,
                s.value,
            )
        )
    return out


Lines = dict[str, dict[object, list[float]]]  # line label -> x -> run values


def lines_by(data: list[Row], line: Callable[[Row], str], x: Callable[[Row], object]) -> Lines:
    """Group rows into lines (by `line`) of points (by `x`), each point the runs' values."""
    out: Lines = defaultdict(lambda: defaultdict(list))
    for r in data:
        out[line(r)][x(r)].append(r.value)
    return {k: dict(v) for k, v in out.items()}


def processing_ms(data: list[Row], topology: str, architecture: str) -> float | None:
    """The thesis's processing delay: the minimum RTT with no link rate and N = 0."""
    mins = [
        r.value
        for r in data
        if r.metric == "rtt_min_ms"
        and r.topology == topology
        and r.architecture == architecture
        and r.passes == 0
        and r.bw == "unlimited"
    ]
    return min(mins) if mins else None


def theory_line(
    payload: int, bws: list[object], processing: float, switches: int
) -> dict[object, float]:
    """The theoretical RTT at each link rate (unlimited: the processing delay alone)."""
    return {bw: theoretical_rtt_ms(payload, rate_mbps(bw), processing, switches) for bw in bws}


# -- drawing ------------------------------------------------------------------------------


X = TypeVar("X")  # an x value: N, a link rate, a send rate


def _draw(
    panels: dict[str, Lines],
    styles: dict[str, dict],
    x_order: Sequence[X],
    categorical: bool,
    xlabel: str,
    ylabel: str,
    title: str,
    out_dir: str | Path,
    stem: str,
    top_axis: Callable[[X], float] | None = None,
    extra: dict[str, dict[str, dict[object, float]]] | None = None,
    sharey: bool = True,
) -> Path | None:
    """One panel per entry of `panels`; per line the mean per x (markers), runs as dots.
    `extra`: per panel, lines of single values (e.g. a theory), drawn dotted."""
    if not panels:
        return None
    cols = min(3, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig = Figure(figsize=(PANEL[0] * cols + 1.5, PANEL[1] * nrows + 0.9), dpi=DPI)
    fig.set_layout_engine("constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, cols, sharey=sharey, squeeze=False).ravel()
    pos = {format_value(x): (float(i) if categorical else float(x)) for i, x in enumerate(x_order)}  # type: ignore[arg-type]  # numbers when not categorical
    all_means: list[float] = []
    for ax, (panel, lines) in zip(axes, panels.items()):
        ax.grid(True, alpha=0.3)
        panel_means: list[float] = []
        for label, points in lines.items():
            xs = [x for x in x_order if x in points]
            if not xs:
                continue
            px = np.array([pos[format_value(x)] for x in xs])
            means = np.array([float(np.mean(points[x])) for x in xs])
            panel_means.extend(means)
            style = styles.get(label, {})
            ax.plot(px, means, marker="o", label=label, **style)
            for x in xs:
                ax.scatter(
                    np.full(len(points[x]), pos[format_value(x)]),
                    points[x],
                    s=8,
                    alpha=0.5,
                    color=style.get("color"),
                    zorder=3,
                )
        for label, line in (extra or {}).get(panel, {}).items():
            xs = [x for x in x_order if x in line]
            ax.plot(
                [pos[format_value(x)] for x in xs],
                [line[x] for x in xs],
                linestyle=":",
                marker="x",
                color="black",
                label=label,
            )
            panel_means.extend(line[x] for x in xs)
        all_means.extend(panel_means)
        if categorical:
            ax.set_xticks(list(pos.values()), [bw_label(x) for x in x_order])
        else:
            ax.set_xticks(list(pos.values()), [format_value(x) for x in x_order])
        if not sharey:
            if spans_decades(panel_means):
                ax.set_yscale("log")
            ax.set_ylabel(ylabel)
        ax.set_xlabel(xlabel)
        ax.set_title(panel, fontsize="medium")
        ax.legend(fontsize="x-small")
        if top_axis is not None and not categorical:
            top = ax.secondary_xaxis("top")
            top.set_xticks([pos[format_value(x)] for x in x_order])
            top.set_xticklabels([f"{top_axis(x):g}" for x in x_order])
            top.set_xlabel("transmissions (N + 1)", fontsize="small")
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    if sharey:
        if spans_decades(all_means):
            axes[0].set_yscale("log")
            ylabel += ", log scale"
        axes[0].set_ylabel(ylabel)
    fig.suptitle("\n".join(textwrap.wrap(title, 60 * cols)), fontsize="medium")
    return _save(fig, out_dir, stem)


def _unit(metric: str) -> str:
    m = metrics.get(metric)
    return m.unit if m is not None else ""


# -- the figures ----------------------------------------------------------------------------


def rtt_vs_link_rate(
    data: list[Row], spec: dict, workload: str, colors: dict[str, str], out_dir
) -> Path | None:
    """Figs 5.5/5.6: min and mean RTT at N = 0 against the link rate, the theory beside."""
    base = [r for r in data if r.workload == workload and r.passes == 0]
    bws = sorted({r.bw for r in base}, key=bw_order)
    if len(bws) < 2:
        return None
    payload = _ping_size(spec, workload)
    counts = switch_counts(spec)
    panels: dict[str, Lines] = {}
    extra: dict[str, dict[str, dict[object, float]]] = {}
    styles: dict[str, dict] = {}
    for topology in _topologies(spec, base):
        here = [r for r in base if r.topology == topology]
        panels[topology] = _min_and_mean(here, lambda r: r.bw, colors, styles)
        if payload is not None and topology in counts:
            for arch in dict.fromkeys(r.architecture for r in here):
                proc = processing_ms(data, topology, arch)
                if proc is not None:
                    extra.setdefault(topology, {})[f"{arch} theory"] = theory_line(
                        payload, bws, proc, counts[topology]
                    )
    return _draw(
        panels,
        styles,
        bws,
        True,
        "link rate (every link)",
        "RTT (ms)",
        f"{workload}: min and mean RTT at N = 0 against the link rate; theory = the minimum "
        "RTT unshaped + crossings × (payload + 28 B) / rate (thesis §5.2.1)",
        out_dir,
        f"rtt_vs_link_rate_{workload}",
        extra=extra,
    )


def _min_and_mean(rows: list[Row], x: Callable[[Row], object], colors, styles) -> Lines:
    """A solid minimum-RTT and a dashed mean-RTT line per architecture (the thesis draws
    both), against `x`; each line's style is added to `styles`."""
    lines: Lines = {}
    for metric, word, dash in (("rtt_min_ms", "min", "-"), ("rtt_ms", "mean", "--")):

        def line_label(r, w: str = word) -> str:
            return f"{r.architecture} {w}"

        got = lines_by([r for r in rows if r.metric == metric], line_label, x)
        for label in got:
            styles[label] = {"color": colors.get(label.rsplit(" ", 1)[0], "C0"), "linestyle": dash}
        lines.update(got)
    return lines


def _topologies(spec: dict, data: list[Row]) -> list[str]:
    """The topologies of `data` in the study file's order (one switch before the chain)."""
    named = [t.get("name") for t in spec.get("topology", []) or [] if isinstance(t, dict)]
    present = dict.fromkeys(r.topology for r in data)
    return [t for t in named if t in present] + [t for t in present if t not in named]


def _ping_size(spec: dict, workload: str) -> int | None:
    for w in spec.get("workload", []) or []:
        if isinstance(w, dict) and w.get("name") == workload:
            size = w.get("size", 56)
            return size if isinstance(size, int) else None
    return None


def rtt_vs_passes(
    data: list[Row],
    workload: str,
    bw: object,
    colors: dict[str, str],
    out_dir,
    spec: dict | None = None,
) -> Path | None:
    """Figs 5.8-5.17: min and mean RTT against N at one link rate, a panel per topology."""
    here = [r for r in data if r.workload == workload and r.bw == bw]
    xs = sorted({r.passes for r in here})
    if len(xs) < 2:
        return None
    panels: dict[str, Lines] = {}
    styles: dict[str, dict] = {}
    for topology in _topologies(spec or {}, here):
        rows = [r for r in here if r.topology == topology]
        panels[topology] = _min_and_mean(rows, lambda r: r.passes, colors, styles)
    return _draw(
        panels,
        styles,
        xs,
        False,
        "number of recirculations N (per switch)",
        "RTT (ms)",
        f"{workload}: min and mean RTT against the number of recirculations, links {bw_label(bw)}",
        out_dir,
        f"rtt_vs_passes_{workload}_{format_value(bw)}",
        top_axis=lambda n: float(transmissions(int(n))),
        sharey=False,  # a topology each, as the thesis's figures: the passes' µs stay visible
    )


def vs_transmissions(
    data: list[Row],
    spec: dict,
    workload: str,
    metric: str,
    bw: object,
    colors: dict[str, str],
    out_dir,
) -> Path | None:
    """Figs 5.22/5.23, 5.25-5.27: one switch and the chain in one panel (per architecture),
    against the number of transmissions k·(N + 1)."""
    counts = switch_counts(spec)
    here = [
        r
        for r in data
        if r.workload == workload
        and r.metric == metric
        and r.bw == bw
        and r.topology in counts
        and r.send_rate is None
    ]
    if len({r.topology for r in here}) < 2:
        return None
    here.sort(key=lambda r: counts[r.topology])  # legend: one switch, then the chain
    panels = {
        arch: lines_by(
            [r for r in here if r.architecture == arch],
            lambda r: (
                f"{r.topology} ({counts[r.topology]} switch"
                + ("es)" if counts[r.topology] > 1 else ")")
            ),
            lambda r: transmissions(r.passes, counts[r.topology]),
        )
        for arch in dict.fromkeys(r.architecture for r in here)
    }
    xs = sorted({transmissions(r.passes, counts[r.topology]) for r in here})
    return _draw(
        panels,
        {},
        xs,
        False,
        "number of transmissions (switches × (N + 1))",
        f"{metrics.label(metric)} ({_unit(metric)})",
        f"{workload}: {metrics.label(metric)} against the number of transmissions, one switch "
        f"and the chain, links {bw_label(bw)}",
        out_dir,
        f"transmissions_{workload}_{metric}_{format_value(bw)}",
    )


def throughput_by_link_rate(data: list[Row], workload: str, topology: str, out_dir) -> Path | None:
    """Figs 5.21/5.24: throughput against N, a line per link rate, a panel per switch."""
    here = [
        r
        for r in data
        if r.workload == workload
        and r.topology == topology
        and r.metric == "throughput_mbps"
        and r.send_rate is None
    ]
    bws = sorted({r.bw for r in here}, key=bw_order)
    if len(bws) < 2:
        return None
    labels = {bw: f"links {bw_label(bw)}" for bw in bws}
    ordered = sorted(here, key=lambda r: bw_order(r.bw))  # legend: no limit, then fastest first
    panels = {
        arch: lines_by(
            [r for r in ordered if r.architecture == arch],
            lambda r: labels[r.bw],
            lambda r: r.passes,
        )
        for arch in dict.fromkeys(r.architecture for r in here)
    }
    return _draw(
        panels,
        {},
        sorted({r.passes for r in here}),
        False,
        "number of recirculations N (per switch)",
        "throughput (Mbit/s)",
        f"{workload} on {topology}: throughput against the number of recirculations, a line "
        "per link rate",
        out_dir,
        f"throughput_by_link_rate_{workload}_{topology}",
        top_axis=lambda n: float(transmissions(int(n))),
    )


def by_send_rate(data: list[Row], workload: str, metric: str, bw: object, out_dir) -> Path | None:
    """Figs 5.19/5.20: a UDP metric against N, a line per send rate, at one link rate;
    a panel per topology and architecture."""
    here = [
        r
        for r in data
        if r.workload == workload and r.metric == metric and r.bw == bw and r.send_rate is not None
    ]
    if len({r.send_rate for r in here}) < 2:
        return None
    panels = {
        f"{t}, {a}": lines_by(
            [r for r in here if r.topology == t and r.architecture == a],
            lambda r: f"send {r.send_rate}bit/s",
            lambda r: r.passes,
        )
        for t, a in dict.fromkeys((r.topology, r.architecture) for r in here)
    }
    for lines in panels.values():  # legend in send-rate order
        ordered = sorted(lines, key=lambda k: rate_mbps(k.split()[1].removesuffix("bit/s")) or 0)
        lines_sorted = {k: lines[k] for k in ordered}
        lines.clear()
        lines.update(lines_sorted)
    return _draw(
        panels,
        {},
        sorted({r.passes for r in here}),
        False,
        "number of recirculations N (per switch)",
        f"{metrics.label(metric)} ({_unit(metric)})",
        f"{workload}: {metrics.label(metric)} against the number of recirculations, a line per "
        f"send rate, links {bw_label(bw)}",
        out_dir,
        f"by_send_rate_{workload}_{metric}_{format_value(bw)}",
        top_axis=lambda n: float(transmissions(int(n))),
    )


@register_plot_provider
def add_plots(store: Store, study_id: int, out_dir, add) -> None:
    """Plot provider for the HTML report; silent for studies without recirculation runs."""
    data = rows(store, study_id)
    if not data:
        return
    spec = store.study(study_id).spec
    colors = _colors(store, study_id, None)
    workloads = list(dict.fromkeys(r.workload for r in data))
    bws = sorted({r.bw for r in data}, key=bw_order)
    for w in workloads:
        has = {r.metric for r in data if r.workload == w}
        if "rtt_min_ms" in has:
            add(
                rtt_vs_link_rate(data, spec, w, colors, out_dir),
                f"{w}: minimum (solid) and mean (dashed) RTT with no recirculation against the "
                "link rate, beside the theoretical RTT of thesis §5.2.1 (dotted): the minimum "
                "RTT on unshaped links (the processing delay) plus, per link crossed there and "
                "back, (payload + 28 bytes) × 8 / rate. Dots: runs. Shaped links here are "
                "token buckets (tc htb, as Mininet's bw; our switch's port rate likewise): a "
                "lone ping on an idle link leaves at once, where the thesis's netem rate "
                "serialises every packet, so measured RTT can sit below the theory.",
                f"{w}: RTT vs link rate — needs N = 0 runs at ≥ 2 link rates",
            )
            for bw in bws:
                add(
                    rtt_vs_passes(data, w, bw, colors, out_dir, spec),
                    f"{w}: minimum (solid) and mean (dashed) RTT against the number of "
                    f"recirculations N, links at {bw_label(bw)}; top axis: transmissions "
                    "through the switch (N + 1). Dots: runs.",
                    f"{w}: RTT vs N at {bw_label(bw)} — needs ≥ 2 values of N",
                )
        swept_rate = any(r.send_rate for r in data if r.workload == w)
        for metric in ("rtt_min_ms", "throughput_mbps"):
            if metric not in has or swept_rate:  # send rates: by_send_rate below
                continue
            for bw in bws:
                add(
                    vs_transmissions(data, spec, w, metric, bw, colors, out_dir),
                    f"{w}: {metrics.label(metric)} against the number of transmissions "
                    "(switches × (N + 1), thesis §5.2.4), one switch and the chain in one "
                    f"panel, links at {bw_label(bw)}. Dots: runs.",
                    f"{w}: {metric} vs transmissions at {bw_label(bw)} — needs a single "
                    "and a linear topology",
                )
        if "throughput_mbps" in has and not swept_rate:
            for topology in dict.fromkeys(r.topology for r in data if r.workload == w):
                add(
                    throughput_by_link_rate(data, w, topology, out_dir),
                    f"{w} on {topology}: throughput against the number of recirculations, a "
                    "line per link rate, a panel per switch. Dots: runs.",
                    f"{w}: throughput by link rate on {topology} — needs ≥ 2 link rates",
                )
        if swept_rate:
            for metric in ("throughput_mbps", "loss_pct"):
                for bw in bws:
                    add(
                        by_send_rate(data, w, metric, bw, out_dir),
                        f"{w}: {metrics.label(metric)} against the number of recirculations, "
                        f"a line per send rate, links at {bw_label(bw)}; a panel per "
                        "topology and switch. Dots: runs.",
                        f"{w}: {metric} by send rate at {bw_label(bw)} — needs ≥ 2 send rates",
                    )
