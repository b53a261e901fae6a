"""Figures of a sweep study: metric versus parameter (report/sweeps.py gives the data).

One figure per swept parameter × metric; one panel per topology (small multiples, shared
y axis); in each panel one line per architecture: the mean at each value with its 95 % CI
as a band, every run as a dot, the fit (when the study asks for one) dashed. An
architecture without the parameter is a dotted horizontal line with its band. Axes turn
logarithmic when the values span two decades or more.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.report import metrics
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.plots import DPI, _save
from sdnperf.report.stats import mean_ci
from sdnperf.report.sweeps import SweepMetric, fit_number, number
from sdnperf.samples import format_value

DECADES = 100.0  # max/min ratio from which an axis is drawn logarithmic
PANEL_SIZE = (5.0, 4.0)
MAX_COLUMNS = 3


register_kind(
    "sweep",
    "plot",
    "sweep_{param}_{workload}_{metric}",
    "a metric against a swept parameter, one line per architecture, mean with 95 % CI",
)
register_kind(
    "topology-panels",
    "plot",
    "topologies_{workload}_{metric}",
    "a metric per architecture, one panel per topology",
)


def spans_decades(values) -> bool:
    vals = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= DECADES


def no_figure_reason(item: SweepMetric) -> str | None:
    """Why a sweep item gets its table but no figure, or None: the partner of a zipped
    sweep would draw its partner's figure again, a parameter that took one value has no
    curve to draw, and runs that all gave the same value draw a flat line at a number the
    table states. (Such figures were most of a report's drawing time: 50 of
    the recirculation smoke study's 87, at ~0.3-0.5 s each.)"""
    if item.same_runs_as is not None:
        return (
            f"No figure: {item.param} is zipped with {item.same_runs_as} (they advance "
            "together); its figure shows these runs."
        )
    xs = item.xs()
    if len(xs) == 1:
        return f"No figure: {item.param} took one value in these runs ({format_value(xs[0])})."
    values = {v for c in item.curves for p in c.points for v in p.values}
    values |= {v for f in item.flats for v in f.values}
    if len(values) == 1:
        (value,) = values
        return f"No figure: every run gave the same value ({value:g} {item.unit})."
    return None


def sweep_figure(
    item: SweepMetric, out_dir: str | Path, colors: dict[str, str], conditions: str
) -> Path | None:
    if not item.curves or no_figure_reason(item) is not None:
        return None
    xs = item.xs()
    position = (
        {format_value(x): number(x) for x in xs}
        if item.numeric
        else {format_value(x): float(i) for i, x in enumerate(xs)}
    )
    panels = item.topologies or [""]
    cols = min(MAX_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig = Figure(
        figsize=(PANEL_SIZE[0] * cols + 1.5, PANEL_SIZE[1] * rows + 0.8),
        dpi=DPI,
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    log_x = item.numeric and spans_decades(xs)
    means = [p.stats.mean for c in item.curves for p in c.points] + [
        f.stats.mean for f in item.flats
    ]
    log_y = spans_decades(means)
    styles = ["-", "--", "-.", ":"]
    for ax, topology in zip(axes, panels):
        ax.grid(True, alpha=0.3)
        rests = list(dict.fromkeys(c.rest for c in item.curves))
        for curve in (c for c in item.curves if c.topology == topology):
            color = colors.get(curve.architecture, "C0")
            x = np.array([position[format_value(p.x)] for p in curve.points])
            mean = np.array([p.stats.mean for p in curve.points])
            low = np.array(
                [p.stats.low if p.stats.low is not None else p.stats.mean for p in curve.points]
            )
            high = np.array(
                [p.stats.high if p.stats.high is not None else p.stats.mean for p in curve.points]
            )
            ax.plot(
                x,
                mean,
                marker="o",
                color=color,
                label=curve.label,
                linestyle=styles[rests.index(curve.rest) % len(styles)],
            )
            if len(x) > 1:
                ax.fill_between(x, low, high, color=color, alpha=0.18, linewidth=0)
            for p in curve.points:  # every run as a dot
                ax.scatter(
                    np.full(len(p.values), position[format_value(p.x)]),
                    p.values,
                    color=color,
                    s=10,
                    alpha=0.6,
                    zorder=3,
                )
            if curve.fit is not None:
                lo, hi = float(min(x)), float(max(x))
                grid = (
                    np.geomspace(lo, hi, 60)
                    if (log_x or curve.fit.transform == "log") and lo > 0
                    else np.linspace(lo, hi, 60)
                )
                ax.plot(
                    grid,
                    [curve.fit.predict(g) for g in grid],
                    color=color,
                    linestyle=(0, (4, 2)),
                    linewidth=1,
                    label=f"{curve.label} fit: a={fit_number(curve.fit.a)}, "
                    f"b={fit_number(curve.fit.b)}, R²={curve.fit.r2:.3f}",
                )
        for flat in (f for f in item.flats if f.topology == topology):
            color = colors.get(flat.architecture, "C0")
            ax.axhline(
                flat.stats.mean,
                color=color,
                linestyle=":",
                label=f"{flat.architecture} (not swept)",
            )
            if flat.stats.half_width is not None:
                ax.axhspan(flat.stats.low, flat.stats.high, color=color, alpha=0.1)
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        if not item.numeric:
            ax.set_xticks(list(position.values()), [format_value(x) for x in xs])
        ax.set_xlabel(item.param + (" (log scale)" if log_x else ""))
        if topology:
            ax.set_title(topology, fontsize="medium")
        ax.legend(fontsize="x-small")
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].set_ylabel(f"{item.label} ({item.unit})" + (", log scale" if log_y else ""))
    fig.suptitle(
        f"{item.workload}: {item.metric} vs {item.param} — mean, 95 % CI band, "
        f"dots = runs\n{conditions}",
        fontsize="medium",
    )
    return _save(fig, out_dir, f"sweep_{item.param}_{item.workload}_{item.metric}")


def topology_panels(
    store,
    study_id: int,
    out_dir: str | Path,
    colors: dict[str, str],
    conditions: str,
    archs: list[str],
) -> list[tuple[Path, str]]:
    """A study with several topologies: per workload × metric, one panel per topology
    (small multiples, shared y axis), a bar per architecture (mean, 95 % CI) and its runs
    as dots. Metrics a sweep figure already shows per point are drawn there instead."""
    from collections import defaultdict

    runs = {r.id: r for r in store.runs(study_id)}
    topologies = list(dict.fromkeys(r.topology for r in runs.values()))
    if len(topologies) < 2:
        return []
    data: dict[tuple[str, str], dict] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    units: dict[tuple[str, str], str] = {}
    for s in store.summaries(study_id):
        if s.status == "ok" and math.isfinite(s.value) and not runs[s.run_id].point:
            data[(s.workload, s.metric)][s.topology][s.architecture].append(s.value)
            units.setdefault((s.workload, s.metric), s.unit)
    out = []
    for (workload, metric), per_topology in data.items():
        cols = min(MAX_COLUMNS, len(topologies))
        rows = math.ceil(len(topologies) / cols)
        fig = Figure(
            figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + 0.8),
            dpi=DPI,
            layout="constrained",
        )
        FigureCanvasAgg(fig)
        axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
        for ax, topology in zip(axes, topologies):
            ax.grid(True, alpha=0.3, axis="y")
            shown = [a for a in archs if a in per_topology.get(topology, {})]
            for i, arch in enumerate(shown):
                values = per_topology[topology][arch]
                ci = mean_ci(values)
                ax.bar(
                    i,
                    ci.mean,
                    color=colors.get(arch, "C0"),
                    alpha=0.8,
                    yerr=ci.half_width,
                    capsize=5,
                )
                ax.scatter(np.full(len(values), i), values, color="black", s=10, zorder=3)
            ax.set_xticks(range(len(shown)), shown)
            ax.set_title(topology, fontsize="medium")
        for ax in axes[len(topologies) :]:
            ax.set_visible(False)
        axes[0].set_ylabel(f"{metrics.label(metric)} ({units[(workload, metric)]})")
        fig.suptitle(
            f"{workload}: {metric} per topology — mean, 95 % CI, dots = runs\n{conditions}",
            fontsize="medium",
        )
        path = _save(fig, out_dir, f"topologies_{workload}_{metric}")
        out.append(
            (
                path,
                f"{workload}: {metrics.label(metric)} on each topology "
                "(one panel per topology, shared y axis).",
            )
        )
    return out
