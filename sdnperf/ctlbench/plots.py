"""ctlbench figures, drawn into the study's HTML report through the report's plot
extension point (registered with sdnperf.report.plots.register_plot_provider): answered vs offered rate, reaction
time vs number of switches (log scale), outstanding packet-ins over time, controller CPU
vs load, and the axes of seed paper 002 (P4RCProbe): sent and answered rate, mean
reaction time and controller CPU against the number of switches, one line per rate per
switch (its Figs 5-6), against the configured rate (Fig 4), and each switch's outstanding
packet-ins over time at the most switches, one figure per rate per switch (Fig 7).
Studies without ctlbench runs get nothing from here."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdnperf.ctlbench import metrics as m
from sdnperf.report.plot_kinds import register as register_kind
from sdnperf.report.plots import register_plot_provider, save_png
from sdnperf.report.stats import mean_ci
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
    save_png(fig, path)  # drawn once (savefig draws twice)
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


register_kind(
    "ctlbench.answered-vs-offered",
    "plot",
    "ctlbench_answered_vs_offered",
    "answered against offered packet-in rate, one line per controller and switch count",
)
register_kind(
    "ctlbench.rtt-vs-switches",
    "plot",
    "ctlbench_rtt_vs_switches_{workload}",
    "median and p99 reaction time against the number of switches (log-log), per workload",
)
register_kind(
    "ctlbench.outstanding-over-time",
    "plot",
    "ctlbench_outstanding_over_time",
    "outstanding packet-ins (all switches) over time, each controller's most loaded run",
)
register_kind(
    "ctlbench.cpu-vs-load",
    "plot",
    "ctlbench_controller_cpu_vs_load",
    "controller CPU against the answered rate, one dot per run",
)
register_kind(
    "ctlbench.vs-switches",
    "plot",
    "ctlbench_vs_switches_{what}",
    "what = rate (sent and answered, all switches), rtt (mean reaction time, log) or cpu "
    "(controller, % of one core) against the number of switches, one line per controller "
    "and rate per switch, mean over repetitions with 95 % CI (P4RCProbe Figs 5, 6a, 6b)",
)
register_kind(
    "ctlbench.vs-rate",
    "plot",
    "ctlbench_vs_rate_{what}",
    "what = rate (sent and answered) or cpu (controller) against the configured rate of "
    "one switch, one line per controller, mean with 95 % CI (P4RCProbe Fig 4a-c)",
)
register_kind(
    "ctlbench.outstanding-per-switch",
    "plot",
    "ctlbench_outstanding_per_switch_{controller}_{rate}pps",
    "each switch's outstanding packet-ins over time in the run with the most switches at "
    "one rate per switch (repetition 1), one line per switch (P4RCProbe Fig 7a-c)",
)

# what -> (metrics drawn, y label, log y): the P4RCProbe axes
VERSUS = {
    "rate": ([(m.SENT, "sent", "o--"), (m.ANSWERED, "answered", "s-")], "packet-ins/s", False),
    "rtt": ([("ctl_rtt_mean_ms", "mean RTT", "o-")], "mean packet-in → answer time, ms", True),
    "cpu": ([(m.CTL_CPU, "CPU", "o-")], "controller CPU, % of one core", False),
}


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
        rows.sort(key=lambda s: s.t or 0.0)  # every t is set (filtered above)
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


def mean_band(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % CI (0 with one value): the paper's error bars."""
    ci = mean_ci(values)
    return ci.mean, (ci.half_width or 0.0)


def versus(
    store: Store, study_id: int, out_dir, what: str, x: str, pts: list[dict] | None = None
) -> Path | None:
    """A VERSUS metric group against `x` ("switches" or "rate": the configured rate of a
    single switch), one line per controller (and, against switches, per rate per switch)."""
    metrics, ylabel, log_y = VERSUS[what]
    pts = [p for p in (pts if pts is not None else _points(store, study_id)) if not p["ceiling"]]
    if x == "rate":
        pts = [p for p in pts if p["mode"] == "rate" and p["switches"] == 1 and p["rate"]]
    else:
        pts = [p for p in pts if p["mode"] == "rate" and p["rate"]]
    xs_all = {p[x] for p in pts}
    if len(xs_all) < 2 or not any(metric in p for p in pts for metric, _, _ in metrics):
        return None
    fig, ax = _figure()
    names = sorted({p["controller"] for p in pts})
    colors = _colors(names)
    groups: dict[tuple[str, float], list[dict]] = defaultdict(list)
    for p in pts:
        groups[(p["controller"], 0.0 if x == "rate" else float(p["rate"]))].append(p)
    styles = {r: st for r, st in zip(sorted({k[1] for k in groups}), ["-", "--", ":", "-."] * 8)}
    for (name, rate), group in sorted(groups.items()):
        for metric, label, marker in metrics:
            by_x: dict[float, list[float]] = defaultdict(list)
            for p in group:
                if metric in p:
                    by_x[p[x]].append(p[metric])
            if not by_x:
                continue
            xs = sorted(by_x)
            stats = [mean_band(by_x[v]) for v in xs]
            style = marker[0] + styles[rate] if x == "switches" else marker
            ax.errorbar(
                xs,
                [s[0] for s in stats],
                yerr=[s[1] for s in stats],
                fmt=style,
                color=colors[name],
                capsize=3,
                alpha=0.9,
                label=f"{name} {label}" + (f", {rate:g}/s per switch" if x == "switches" else ""),
            )
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(
        "emulated switches" if x == "switches" else "configured packet-in rate, one switch (/s)"
    )
    ax.set_ylabel(ylabel + (" (log)" if log_y else ""))
    ax.set_title(
        f"{ylabel} vs {'number of switches' if x == 'switches' else 'configured rate'} "
        "(mean over repetitions, 95 % CI)",
        fontsize="medium",
    )
    ax.legend(fontsize="x-small", ncol=2)
    return _save(fig, out_dir, f"vs_{x}_{what}")


def outstanding_per_switch(store: Store, study_id: int, out_dir) -> list[Path]:
    """Per controller and rate per switch: the run with the most switches (repetition 1,
    else the lowest), each switch's outstanding packet-ins at the end of each interval."""
    pts = [p for p in _points(store, study_id) if not p["ceiling"] and p["mode"] == "rate"]
    chosen: dict[tuple[str, float], dict] = {}
    for p in pts:
        if not p["rate"]:
            continue
        k = (p["controller"], float(p["rate"]))
        rank = (p["switches"], -p["run"].repetition)
        if k not in chosen or rank > chosen[k]["_rank"]:
            chosen[k] = {**p, "_rank": rank}
    if len({p["switches"] for p in pts}) < 2:
        return []  # a single-switch rate sweep: Fig 4's runs, not Fig 7's
    paths = []
    for (name, rate), p in sorted(chosen.items()):
        per_switch: dict[str, list] = defaultdict(list)
        for s in store.samples(p["run"].id, metric=m.OUTSTANDING):
            if s.flow and s.t is not None:
                per_switch[s.flow].append(s)
        if not per_switch:
            continue
        fig, ax = _figure()
        for _flow, rows in sorted(per_switch.items()):
            rows.sort(key=lambda s: s.t or 0.0)  # every t is set (filtered above)
            ax.plot([s.t for s in rows], [s.value for s in rows], "-", lw=0.8, alpha=0.7)
        ax.set_xlabel("time since the load started, s (warm-up first)")
        ax.set_ylabel("outstanding packet-ins per switch")
        ax.set_title(
            f"{name}: outstanding packet-ins of each of {p['switches']} switches, "
            f"{rate:g}/s per switch (repetition {p['run'].repetition})",
            fontsize="medium",
        )
        paths.append(_save(fig, out_dir, f"outstanding_per_switch_{name}_{rate:g}pps"))
    return paths


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
    pts = _points(store, study_id)
    for x in ("switches", "rate"):
        for what in VERSUS if x == "switches" else ("rate", "cpu"):
            add(
                versus(store, study_id, out_dir, what, x, pts),
                f"{VERSUS[what][1]} against the "
                + (
                    "number of emulated switches, one line per controller and rate per switch"
                    if x == "switches"
                    else "configured packet-in rate of a single switch, one line per controller"
                )
                + "; mean over repetitions with its 95 % confidence interval (the axes of "
                + ("P4RCProbe Figs 5-6)." if x == "switches" else "P4RCProbe Fig 4)."),
                f"ctlbench: {what} vs {x} — needs rate-mode runs at ≥ 2 "
                + ("switch counts" if x == "switches" else "rates of a single switch"),
            )
    for path in outstanding_per_switch(store, study_id, out_dir):
        add(
            path,
            "Packet-ins each switch has sent and not yet had answered, at the end of each "
            "interval, in the run with the most switches at this rate per switch (the axes "
            "of P4RCProbe Fig 7).",
            "",
        )
