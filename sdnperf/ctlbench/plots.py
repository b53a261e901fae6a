"""ctlbench figures, drawn into the study's HTML report through the report's plot
extension point (registered with sdnperf.report.plots.register_plot_provider): answered vs offered rate, reaction
time vs number of switches (log scale), outstanding packet-ins over time, controller CPU
vs load. Studies without ctlbench runs get nothing from here."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.ctlbench import metrics as m
from sdnperf.report.plots import register_plot_provider
from sdnperf.store import Store

DPI = 100
SIZE = (8, 4.5)
Add = Callable[[Path | None, str, str], None]


def _figure():
    fig = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Figure, out_dir: str | Path, stem: str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"ctlbench_{re.sub(r'[^A-Za-z0-9_.-]+', '_', stem)}.png"
    fig.savefig(path, dpi=DPI)
    return path


def _points(store: Store, study_id: int) -> list[dict]:
    """One dict per ok ctlbench run: its params and summaries."""
    runs = {r.id: r for r in store.runs(study_id) if "switches" in r.params and "mode" in r.params}
    by_run: dict[int, dict] = defaultdict(dict)
    for s in store.summaries(study_id):
        if s.run_id in runs:
            by_run[s.run_id][s.metric] = s.value
    out = []
    for rid, r in runs.items():
        if r.status != "ok":
            continue
        out.append(
            {
                "run": r,
                "controller": r.architecture,
                "switches": int(r.params["switches"]),
                "rate": r.params.get("rate_per_switch"),
                "mode": r.params["mode"],
                "workload": r.workload,
                "ceiling": bool(r.params.get("ceiling")),
                "probe_bound": bool(r.params.get("probe_bound")),
                **by_run[rid],
            }
        )
    return out


def _colors(names: list[str]) -> dict[str, str]:
    return {n: f"C{i % 10}" for i, n in enumerate(names)}


def answered_vs_offered(store: Store, study_id: int, out_dir) -> Path | None:
    pts = [
        p
        for p in _points(store, study_id)
        if p["mode"] == "rate" and m.OFFERED in p and m.ANSWERED in p
    ]
    if len({p[m.OFFERED] for p in pts}) < 2:
        return None
    fig, ax = _figure()
    names = sorted({p["controller"] for p in pts})
    colors = _colors(names)
    top = 0.0
    for name in names:
        for n in sorted({p["switches"] for p in pts if p["controller"] == name}):
            groups: dict[float, list[float]] = defaultdict(list)
            for p in pts:
                if p["controller"] == name and p["switches"] == n:
                    groups[p[m.OFFERED]].append(p[m.ANSWERED])
            xs = sorted(groups)
            ys = [mean(groups[x]) for x in xs]
            top = max(top, max(xs), max(ys))
            ax.plot(
                xs,
                ys,
                "o-",
                color=colors[name],
                label=f"{name}, {n} sw",
                alpha=0.5 + 0.5 / (1 + list(sorted({q["switches"] for q in pts})).index(n)),
            )
    ax.plot([0, top], [0, top], "k--", lw=0.8, label="answered = offered")
    ax.set_xlabel("offered packet-ins/s (all switches)")
    ax.set_ylabel("answered packet-ins/s")
    ax.set_title("Answered vs offered packet-in rate (mean over repetitions)", fontsize="medium")
    ax.legend(fontsize="small", ncol=2)
    return _save(fig, out_dir, "answered_vs_offered")


def rtt_vs_switches(store: Store, study_id: int, out_dir) -> list[Path]:
    pts = [p for p in _points(store, study_id) if m.RTT_P50 in p and not p["ceiling"]]
    paths = []
    for workload in sorted({p["workload"] for p in pts}):
        wp = [p for p in pts if p["workload"] == workload]
        if len({p["switches"] for p in wp}) < 2:
            continue
        fig, ax = _figure()
        names = sorted({p["controller"] for p in wp})
        colors = _colors(names)
        for name in names:
            by_n: dict[int, list[dict]] = defaultdict(list)
            for p in wp:
                if p["controller"] == name:
                    by_n[p["switches"]].append(p)
            xs = sorted(by_n)
            ax.plot(
                xs,
                [mean(q[m.RTT_P50] for q in by_n[x]) for x in xs],
                "o-",
                color=colors[name],
                label=f"{name} p50",
            )
            if all(m.RTT_P99 in q for x in xs for q in by_n[x]):
                ax.plot(
                    xs,
                    [mean(q[m.RTT_P99] for q in by_n[x]) for x in xs],
                    "^--",
                    color=colors[name],
                    alpha=0.6,
                    label=f"{name} p99",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("emulated switches (log)")
        ax.set_ylabel("packet-in → answer time, ms (log)")
        ax.set_title(f"{workload}: reaction time vs number of switches", fontsize="medium")
        ax.legend(fontsize="small", ncol=2)
        paths.append(_save(fig, out_dir, f"rtt_vs_switches_{workload}"))
    return paths


def outstanding_over_time(store: Store, study_id: int, out_dir) -> Path | None:
    """Per controller, its most loaded ok run (most switches, highest rate), repetition 1."""
    pts = [p for p in _points(store, study_id) if not p["ceiling"]]
    if not pts:
        return None
    best: dict[str, dict] = {}
    for p in pts:
        k = (p["switches"], p["rate"] or 0, -p["run"].repetition)
        if p["controller"] not in best or k > best[p["controller"]]["_k"]:
            best[p["controller"]] = {**p, "_k": k}
    fig, ax = _figure()
    colors = _colors(sorted(best))
    drawn = False
    for name, p in sorted(best.items()):
        rows = [
            s for s in store.samples(p["run"].id, metric=m.OUTSTANDING, flow="") if s.t is not None
        ]
        if not rows:
            continue
        rows.sort(key=lambda s: s.t)
        rate = f", {p['rate']:g}/s per switch" if p["rate"] else ""
        ax.plot(
            [s.t for s in rows],
            [s.value for s in rows],
            "-",
            color=colors[name],
            label=f"{name} ({p['switches']} sw{rate})",
        )
        drawn = True
    if not drawn:
        return None
    ax.set_xlabel("time since the load started, s (warm-up first)")
    ax.set_ylabel("outstanding packet-ins (all switches)")
    ax.set_title("Outstanding (unanswered) packet-ins over time", fontsize="medium")
    ax.legend(fontsize="small")
    return _save(fig, out_dir, "outstanding_over_time")


def controller_cpu_vs_load(store: Store, study_id: int, out_dir) -> Path | None:
    pts = [p for p in _points(store, study_id) if m.CTL_CPU in p and m.ANSWERED in p]
    if len(pts) < 2:
        return None
    fig, ax = _figure()
    names = sorted({p["controller"] for p in pts})
    colors = _colors(names)
    for name in names:
        q = sorted((p for p in pts if p["controller"] == name), key=lambda p: p[m.ANSWERED])
        ax.plot(
            [p[m.ANSWERED] for p in q],
            [p[m.CTL_CPU] for p in q],
            "o:",
            color=colors[name],
            label=name,
        )
    ax.set_xlabel("answered packet-ins/s")
    ax.set_ylabel("controller CPU, % of one core")
    ax.set_title("Controller CPU vs load (one dot per run)", fontsize="medium")
    ax.legend(fontsize="small")
    return _save(fig, out_dir, "controller_cpu_vs_load")


@register_plot_provider
def add_plots(store: Store, study_id: int, out_dir, add: Add) -> None:
    """Plot provider for the HTML report; silent for studies without ctlbench runs."""
    if not _points(store, study_id):
        return
    add(
        answered_vs_offered(store, study_id, out_dir),
        "Answered vs offered packet-in rate, one line per controller and switch count; the "
        "dashed diagonal is a controller that answers everything.",
        "ctlbench: answered vs offered rate — needs a rate-mode study with ≥ 2 offered rates",
    )
    paths = rtt_vs_switches(store, study_id, out_dir)
    for p in paths:
        add(
            p,
            "Median (solid) and 99th-percentile (dashed) packet-in → answer time against the "
            "number of emulated switches, log-log; mean over repetitions.",
            "",
        )
    if not paths:
        add(None, "", "ctlbench: reaction time vs switches — needs ≥ 2 switch counts")
    add(
        outstanding_over_time(store, study_id, out_dir),
        "Packet-ins sent and not yet answered, summed over switches, at the end of each "
        "interval, for each controller's most loaded run.",
        "ctlbench: outstanding over time — no time series stored",
    )
    add(
        controller_cpu_vs_load(store, study_id, out_dir),
        "CPU use of the controller process (and children) during the measurement window "
        "against the answered rate; one dot per run.",
        "ctlbench: controller CPU vs load — needs ≥ 2 runs with controller CPU samples",
    )
