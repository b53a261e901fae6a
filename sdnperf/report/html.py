"""The HTML report: one self-contained file (inline CSS, plots as base64 PNG, no URLs).

Sections: the study and its environment, the comparison table with its marks and
footnotes, the plots (and which could not be drawn, and why), failed and CPU-bound runs,
and "how to read this" with a definition of every metric shown.
"""

from __future__ import annotations

import base64
import json
import tempfile
import time
from html import escape
from pathlib import Path

from sdnperf.fidelity.calibration import render as render_calibration
from sdnperf.report import fmt, metrics, sections
from sdnperf.report.plots import _colors, all_plots
from sdnperf.report.series import conditions
from sdnperf.report.sweep_plots import no_figure_reason, sweep_figure, topology_panels
from sdnperf.report.sweeps import SweepMetric, fit_number, sweep_metrics
from sdnperf.report.table import CPU_MARK, EMU_MARK, LINK_MARK, comparison, footnotes
from sdnperf.store import RunRow, Store, StudyRow

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222;
       line-height: 1.4; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.baseline td { background: #fafafa; }
tr.group-start td { border-top: 2px solid #888; }
.better { color: #137333; } .worse { color: #b3261e; }
.cpu { color: #8a5300; font-weight: bold; white-space: nowrap; } .failed { color: #b3261e; }
.meta { color: #555; } pre { white-space: pre-wrap; margin: 0; font-size: 0.9em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 0.9em; }
dt { font-weight: bold; margin-top: 0.5em; } dd { margin-left: 1.5em; }
"""


def write_report(
    store: Store, study_id: int, out_path: str | Path, baseline: str | None = None
) -> Path:
    """Write the report of one study to `out_path`; returns the path."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    study = store.study(study_id)
    runs = store.runs(study_id)
    rows = comparison(store, study_id, baseline)
    base = next((r.architecture for r in rows if r.is_baseline), baseline)
    curves = sweep_metrics(store, study_id, base)
    with tempfile.TemporaryDirectory(prefix="sdnperf-plots-") as tmp:
        plots = all_plots(store, study_id, tmp, base)
        figures = [(p.stem, caption, _data_uri(p)) for p, caption in plots.figures]
        colors = _colors(store, study_id, base)
        sweep_pngs = [
            sweep_figure(item, tmp, colors, conditions(store, study_id)) for item in curves
        ]
        sweep_parts = [_sweep_section(item, png, base) for item, png in zip(curves, sweep_pngs)]
        first = [base] if base is not None else []  # (a study without runs has none)
        archs = first + [a for a in dict.fromkeys(r.architecture for r in runs) if a != base]
        panel_pngs = topology_panels(
            store, study_id, tmp, colors, conditions(store, study_id), archs
        )
        panels = [
            f'<figure><img alt="{escape(p.stem)}" src="{_data_uri(p)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>"
            for p, caption in panel_pngs
        ]
    # every figure drawn, by stem: the figure map at the opening says which of its items these are
    drawn = [stem for stem, _, _ in figures] + [
        p.stem for p in [*sweep_pngs, *(p for p, _ in panel_pngs)] if p is not None
    ]
    metric_names = _metrics_shown(store, study_id)
    parts = [
        _header(study, runs, store, study_id),
        *sections.render("opening", store, study_id, figure_stems=drawn),  # the figure map
        *sections.render("top", store, study_id),  # e.g. a built-in study's answer
        _environment(study.environment),
        _provenance(study.provenance),
        *(["<h2>Sweeps</h2>", SWEEP_INTRO, *sweep_parts] if curves else []),
        *(["<h2>Topologies</h2>", *panels] if panels else []),
        "<h2>Comparison</h2>",
        _comparison_table(rows, base),
        _footnotes(footnotes(rows)),
        "<h2>Plots</h2>",
        *(
            f'<figure><img alt="{escape(stem)}" src="{uri}"><figcaption>{escape(caption)}'
            f"</figcaption></figure>"
            for stem, caption, uri in figures
        ),
        _not_drawn(plots.skipped),
        _failed_runs(runs),
        _cpu_bound_runs(runs),
        _emulator_bound_runs(runs),
        _datapaths(runs),
        _link_fidelity(runs),
        *sections.render("end", store, study_id),  # e.g. a cluster's per-node table
        _how_to_read(metric_names),
    ]
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>sdnperf — {escape(study.name)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(p for p in parts if p)
        + "\n</body></html>\n"
    )
    out.write_text(page, encoding="utf-8")
    return out


# -- sections ------------------------------------------------------------------------


def _header(study: StudyRow, runs: list[RunRow], store: Store, study_id: int) -> str:
    ok = sum(1 for r in runs if r.status == "ok")
    failed = len(runs) - ok
    bound = sum(1 for r in runs if r.cpu_bound)
    created = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(study.created))
    return (
        f"<h1>{escape(study.name)}</h1>"
        f'<p class="meta">Study created {escape(created)} from <code>{escape(study.source)}</code>; '
        f"report written {escape(time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))}.<br>"
        f"{len(runs)} runs: {ok} ok, "
        f'<span class="{"failed" if failed else ""}">{failed} failed</span>, '
        f"{bound} CPU-bound. Conditions: {escape(conditions(store, study_id))}.<br>"
        f"Raw data: <code>{escape(str(store.path))}</code> (SQLite).</p>"
    )


SWEEP_INTRO = (
    "<p>One figure per swept parameter and metric (none where the parameter took one "
    "value or every run gave the same value: the table says it), one panel per topology. "
    "Lines: mean of "
    "the runs at each value; band: its 95 % confidence interval; dots: the runs; dashed: the "
    "fit the study asked for. A dotted horizontal line is an architecture that does not have "
    "the parameter. In the tables, p compares each architecture with the baseline at the "
    "same point; p (Holm) is the same p adjusted for every comparison of that table "
    "(Holm–Bonferroni), the one to read when scanning many points.</p>"
)


def _sweep_section(item: SweepMetric, png: Path | None, base: str | None) -> str:
    several = len(item.topologies) > 1
    parts = [
        f"<h3>{escape(item.workload)}: {escape(item.metric)} vs "
        f"<code>{escape(item.param)}</code></h3>"
    ]
    if png is not None:
        parts.append(
            f'<figure><img alt="{escape(png.stem)}" src="{_data_uri(png)}">'
            f"<figcaption>{escape(item.label)} ({escape(item.unit)}, "
            f"{escape(item.better)} is better) against {escape(item.param)}."
            "</figcaption></figure>"
        )
    elif item.curves and (reason := no_figure_reason(item)) is not None:
        parts.append(f'<p class="meta">{escape(reason)} The table has its runs.</p>')
    head = (
        "<tr>"
        + ("<th>topology</th>" if several else "")
        + f"<th>architecture</th><th>{escape(item.param)}</th><th>n</th>"
        "<th>mean ± 95 % CI</th><th>unit</th>"
        f"<th>Δ vs {escape(base or 'baseline')}</th><th>p (test)</th><th>p (Holm)</th></tr>"
    )

    def row(topology: str, label: str, x: str, stats, cells: str) -> str:
        return (
            "<tr>"
            + (f"<td>{escape(topology)}</td>" if several else "")
            + f'<td>{escape(label)}</td><td class="num">{escape(x)}</td>'
            f'<td class="num">{stats.n}</td>'
            f'<td class="num">{escape(fmt.mean_pm(stats.mean, stats.half_width))}</td>'
            f"<td>{escape(item.unit)}</td>{cells}</tr>"
        )

    body = []
    for curve in item.curves:
        for p in curve.points:
            verdict = escape(p.diff.verdict) if p.diff else ""
            body.append(
                row(
                    curve.topology,
                    curve.label,
                    str(p.x),
                    p.stats,
                    f'<td class="num {verdict}">{escape(p.diff.words()) if p.diff else ""}</td>'
                    f'<td class="num">{fmt.p_value(p.p) + f" ({escape(p.test)})" if p.test else ""}</td>'
                    f'<td class="num">{fmt.p_value(p.p_holm) if p.test else ""}</td>',
                )
            )
    for flat in item.flats:
        body.append(
            row(
                flat.topology,
                flat.architecture,
                "(not swept)",
                flat.stats,
                "<td></td><td></td><td></td>",
            )
        )
    parts.append(f"<table>{head}{''.join(body)}</table>")
    fits = [c for c in item.curves if c.fit is not None or c.fit_note]
    if fits:
        rows = []
        for c in fits:
            if c.fit is None:
                rows.append(
                    f"<tr><td>{escape(c.topology)}</td><td>{escape(c.label)}</td>"
                    f'<td colspan="5">{escape(c.fit_note)}</td></tr>'
                )
                continue
            half_a, half_b = c.fit.ci()
            rows.append(
                f"<tr><td>{escape(c.topology)}</td><td>{escape(c.label)}</td>"
                f"<td>{escape(c.fit.formula())}</td>"
                f'<td class="num">{escape(fit_number(c.fit.a, half_a))}</td>'
                f'<td class="num">{escape(fit_number(c.fit.b, half_b))}</td>'
                f'<td class="num">{c.fit.r2:.4f}</td><td class="num">{c.fit.n}</td></tr>'
            )
        parts.append(
            "<p>Fits over every run (least squares, scipy.stats.linregress; ± is the "
            "95 % CI, t(n−2) × standard error):</p><table><tr><th>topology</th>"
            "<th>line</th><th>model</th><th>a</th><th>b</th><th>R²</th><th>n</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    return "\n".join(parts)


PROVENANCE_FIELDS = [
    ("study file", "study_file"),
    ("study SHA-256", "study_sha256"),
    ("sdnperf version", "sdnperf_version"),
    ("host", "hostname"),
]


def _provenance(prov: dict) -> str:
    if not prov:
        return (
            "<h2>Provenance</h2><p>No provenance was recorded (a study stored before "
            "sdnperf recorded it).</p>"
        )
    rows = [(label, str(prov.get(key))) for label, key in PROVENANCE_FIELDS]
    git = prov.get("git") or {}
    rows.append(
        (
            "git commit",
            f"{git.get('commit')}" + (" (with uncommitted changes)" if git.get("dirty") else ""),
        )
    )
    for group in ("p4_programs", "architecture_files"):
        for name, digest in (prov.get(group) or {}).items():
            rows.append((f"SHA-256 of {name}", str(digest)))
    rows += [(f"tool {k}", str(v)) for k, v in (prov.get("tools") or {}).items() if v]
    rows += [
        (f"kernel {k}", str(v)) for k, v in (prov.get("kernel") or {}).items() if v is not None
    ]
    order = prov.get("run_order") or {}
    keys = order.get("keys") or []
    rows.append(("run order", f"{order.get('order')} (seed {order.get('seed')}), {len(keys)} runs"))
    if prov.get("resumes"):
        rows.append(("resumed", f"{len(prov['resumes'])} time(s)"))
    calibrated = prov.get("calibration")
    if calibrated:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(calibrated.get("recorded", 0)))
        lines = render_calibration(calibrated)
        rows.append((f"link calibration ({when})", " | ".join(lines) or "(empty)"))
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return (
        "<h2>Provenance</h2><table>" + table + "</table>"
        "<details><summary>run order (planned)</summary><pre>"
        + escape("\n".join(keys))
        + "</pre></details>"
        "<details><summary>study file as run</summary><pre>"
        + escape(prov.get("study_text") or "")
        + "</pre></details>"
    )


def _environment(env: dict) -> str:
    if not env:
        return "<h2>Environment</h2><p>No environment was recorded.</p>"
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in _flatten(env))
    return f"<h2>Environment</h2><table>{rows}</table>"


def _flatten(value, prefix: str = "") -> list[tuple[str, str]]:
    """Nested dicts become dotted keys; lists and scalars are shown as text."""
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out.extend(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = (
            ", ".join(str(v) for v in value)
            if all(isinstance(v, (str, int, float)) for v in value)
            else json.dumps(value, default=str)
        )
    else:
        text = "" if value is None else str(value)
    return [(prefix, text)]


def _comparison_table(rows, base: str | None) -> str:
    if not rows:
        return "<p>No runs were recorded.</p>"
    several = len({r.topology for r in rows}) > 1
    holm_column = any(r.p_holm is not None for r in rows)
    head = (
        "<tr>"
        + ("<th>topology</th>" if several else "")
        + "<th>workload</th><th>metric</th><th>architecture</th><th>n</th>"
        "<th>failed</th><th>mean ± 95 % CI</th><th>unit</th>"
        f"<th>Δ vs {escape(base or 'baseline')}</th><th>p (test)</th>"
        + ("<th>p (Holm)</th>" if holm_column else "")
        + "<th>sig</th>"
        "<th>CPU</th></tr>"
    )
    body, previous = [], None
    for row in rows:
        rec = row.record()
        classes = []
        if row.is_baseline:
            classes.append("baseline")
        group = (row.topology, row.workload, row.metric)
        if previous is not None and group != previous:
            classes.append("group-start")
        previous = group
        cls = f' class="{" ".join(classes)}"' if classes else ""
        metric_title = escape(rec["label"])
        p_cell = (
            f"{rec['p_text']} ({escape(rec['test'])})"
            if rec["test"]
            else (escape(row.test.note) if row.test else "")
        )
        cpu_cell = (
            f'<span class="cpu" title="{escape(", ".join(row.cpu_bound_runs))}">'
            f"{escape(row.cpu_mark)}</span>"
            if row.cpu_mark
            else ""
        )
        body.append(
            f"<tr{cls}>"
            + (f"<td>{escape(row.topology)}</td>" if several else "")
            + f"<td>{escape(row.workload)}</td>"
            f'<td title="{metric_title}">{escape(row.metric or "(no data)")}</td>'
            f"<td>{escape(row.architecture)}{' (baseline)' if row.is_baseline else ''}</td>"
            f'<td class="num">{row.n}</td>'
            f'<td class="num{" failed" if row.failed else ""}">{row.failed}</td>'
            f'<td class="num" title="{escape(row.stats.note)}">'
            f"{escape(rec['mean_ci']) if row.n else '—'}</td>"
            f"<td>{escape(row.unit)}</td>"
            f'<td class="num {escape(rec["verdict"])}">'
            f"{escape('baseline' if row.is_baseline else rec['diff'])}</td>"
            f'<td class="num">{p_cell}</td>'
            + (f'<td class="num">{rec["p_holm_text"]}</td>' if holm_column else "")
            + f"<td>{escape(row.significance)}</td>"
            f"<td>{cpu_cell}</td></tr>"
        )
    return f"<table>{head}{''.join(body)}</table>"


def _footnotes(notes: list[str]) -> str:
    if not notes:
        return ""
    return '<ul class="meta">' + "".join(f"<li>{escape(n.strip())}</li>" for n in notes) + "</ul>"


def _not_drawn(skipped: list[str]) -> str:
    if not skipped:
        return ""
    items = "".join(f"<li>{escape(s)}</li>" for s in skipped)
    return f'<p class="meta">Not drawn:</p><ul class="meta">{items}</ul>'


def _failed_runs(runs: list[RunRow]) -> str:
    failed = [r for r in runs if r.status == "failed"]
    if not failed:
        return "<h2>Failed runs</h2><p>None: every run finished.</p>"
    rows = "".join(
        f"<tr><td>{escape(r.key)}</td><td>{escape(r.architecture)}</td>"
        f'<td>{escape(r.workload)}</td><td class="num">{r.repetition}</td>'
        f"<td><pre>{escape(r.error or '(no error message recorded)')}</pre></td></tr>"
        for r in failed
    )
    return (
        f"<h2>Failed runs</h2><p>{len(failed)} run(s) did not finish. They are counted in "
        "the table's <em>failed</em> column and are not in any mean or plot.</p>"
        "<table><tr><th>run</th><th>architecture</th><th>workload</th><th>rep.</th>"
        f"<th>error</th></tr>{rows}</table>"
    )


def _cpu_bound_runs(runs: list[RunRow]) -> str:
    bound = [r for r in runs if r.cpu_bound]
    if not bound:
        return (
            "<h2>CPU-bound runs</h2><p>None: no run saturated the machine's CPU, so the "
            "numbers measure the network rather than the host.</p>"
        )
    rows = "".join(
        f'<tr><td>{escape(r.key)}</td><td class="num">{r.cpu.peak_total:.0f} %</td>'
        f"<td>{escape(r.cpu.reason or 'no reason recorded')}</td></tr>"
        for r in bound
    )
    return (
        f"<h2>CPU-bound runs</h2><p>{len(bound)} run(s) were marked "
        f'<span class="cpu">{escape(CPU_MARK)}</span>: the machine was saturated, so their '
        "numbers may measure the host rather than the network. They are kept in the means "
        "and flagged in the table.</p>"
        "<table><tr><th>run</th><th>peak machine busy</th><th>reason</th></tr>"
        f"{rows}</table>"
    )


def _emulator_bound_runs(runs: list[RunRow]) -> str:
    bound = [r for r in runs if r.cpu.emulator_bound]
    if not bound:
        return ""  # the CPU section already says the numbers measure the network
    rows = "".join(
        f'<tr><td>{escape(r.key)}</td><td class="num">{r.cpu.switch_ms:.2f} ms</td>'
        f"<td>{escape(r.cpu.emulator_reason)}</td></tr>"
        for r in bound
    )
    return (
        f"<h2>Emulator-bound runs</h2><p>{len(bound)} run(s) were marked "
        f'<span class="cpu">{escape(EMU_MARK)}</span>: one switch took far longer to forward '
        "a packet than on a small topology, so their numbers measure the emulator rather than "
        "the architecture. They are kept in the means and flagged in the table.</p>"
        "<table><tr><th>run</th><th>one switch, one packet</th><th>reason</th></tr>"
        f"{rows}</table>"
    )


def _datapaths(runs: list[RunRow]) -> str:
    """Which data path our P4 switches forwarded with (the p4 architecture's `datapath`):
    the one they were started for, the one their counters say forwarded (a fast path that
    hands the engine every packet is the user path) and the kernel's share; the packets
    each path forwarded are the table's xdp_forwarded / engine_tx."""
    seen: dict[tuple[str, str, str, str, str], list[float]] = {}
    for r in runs:
        facts = r.params.get("facts", {})
        if facts.get("datapath"):
            key = (
                r.architecture,
                str(facts.get("datapath_setting")),
                str(facts.get("datapath_started") or facts["datapath"]),
                str(facts["datapath"]),
                str(facts.get("datapath_reason") or ""),
            )
            share = facts.get("xdp_share")
            seen.setdefault(key, []).append(float("nan") if share is None else float(share))
    if not seen:
        return ""

    def shares(values: list[float]) -> str:
        known = [v for v in values if v == v]  # NaN: not counted (an older run)
        if not known:
            return "not counted"
        lo, hi = 100 * min(known), 100 * max(known)
        return f"{lo:.1f} %" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}–{hi:.1f} %"

    rows = "".join(
        f"<tr><td>{escape(a)}</td><td>{escape(setting)}</td><td>{escape(started)}</td>"
        f'<td>{escape(used)}</td><td class="num">{len(v)}</td>'
        f'<td class="num">{escape(shares(v))}</td><td>{escape(reason)}</td></tr>'
        for (a, setting, started, used, reason), v in sorted(seen.items())
    )
    return (
        "<h2>P4 data paths</h2><p>How our P4 switches forwarded: <em>xdp</em> in the "
        "kernel's XDP hook (the program compiled to eBPF; what it cannot finish goes to the "
        "user-space engine), <em>user</em> through the user-space engine, <em>mixed</em> "
        "both. <em>Forwarded by</em> is what the switches' counters say at the end of each "
        "run (the kernel's share of the packets forwarded, all switches together), not what "
        "they were started for. The table's <em>xdp_forwarded</em> and <em>engine_tx</em> "
        "rows count the packets each path forwarded per run.</p>"
        "<table><tr><th>architecture</th><th>datapath setting</th><th>started for</th>"
        "<th>forwarded by</th><th>runs</th><th>kernel share</th><th>reason</th></tr>"
        f"{rows}</table>"
    )


def _link_fidelity(runs: list[RunRow]) -> str:
    """Every impaired link end a run checked (fidelity/links.py): breaches first, with
    what was configured and what was measured."""
    checked = [(r, c) for r in runs for c in r.cpu.links]
    if not checked:
        return ""
    broken = [(r, c) for r, c in checked if c.get("breach")]

    def numbers(values: dict) -> str:
        units = {"rate_mbit": "Mbit/s", "mean_rate_mbit": "Mbit/s mean", "delay_ms": "ms"}
        units |= {"added_delay_ms": "ms added", "late_ms": "ms late", "loss_pct": "% loss"}
        return ", ".join(
            f"{v:g} {units.get(k, k)}" for k, v in values.items() if isinstance(v, (int, float))
        )

    shown = broken or checked[:20]
    rows = "".join(
        f"<tr><td>{escape(r.key)}</td><td>{escape(c.get('link', ''))}</td>"
        f"<td>{escape(c.get('where', ''))}</td><td>{escape(numbers(c.get('configured', {})))}</td>"
        f"<td>{escape(numbers(c.get('measured', {})))}</td>"
        f"<td>{escape(c.get('reason') or 'as configured')}</td></tr>"
        for r, c in shown
    )
    runs_broken = len({r.key for r, _ in broken})
    verdict = (
        f'{runs_broken} run(s) were marked <span class="cpu">{escape(LINK_MARK)}</span>: an '
        "impaired link did not do what the study configured, so their numbers describe a "
        "different link. They are kept in the means and flagged in the table."
        if broken
        else "Every impaired link did what the study configured, within the tolerances."
    )
    return (
        f"<h2>Link fidelity</h2><p>{len(checked)} impaired link end(s) checked over "
        f"{len({r.key for r, _ in checked})} run(s). {verdict}</p>"
        "<table><tr><th>run</th><th>link</th><th>where</th><th>configured</th>"
        f"<th>measured</th><th>verdict</th></tr>{rows}</table>"
    )


GENERAL_TERMS = [
    ("n", "Number of repetitions (runs that finished ok) the row's numbers are computed from."),
    (
        "mean ± 95 % CI",
        "Mean of the per-run values, with a 95 % confidence interval from "
        "Student's t distribution (mean ± t·s/√n). With n = 1 there is no interval.",
    ),
    (
        "Δ vs baseline",
        "Difference of the means relative to the baseline architecture, in % of "
        "the baseline's mean. 'better' or 'worse' takes into account whether a lower or a higher "
        "value is better for that metric.",
    ),
    (
        "p (test)",
        "Probability of a difference at least this large if both architectures behaved "
        "the same. Welch's t-test by default; Mann–Whitney U when both groups have n ≥ 3 and the "
        "Shapiro–Wilk test doubts normality (with n = 3 per group Mann–Whitney cannot go below "
        "p = 0.1). sig: *** p < 0.001, ** p < 0.01, * p < 0.05, ns not significant.",
    ),
    (CPU_MARK, "At least one run of that cell was CPU-bound (see 'CPU-bound runs')."),
    (
        EMU_MARK,
        (
            "At least one run of that cell was emulator-bound: a switch forwarded far "
            "slower than on a small topology (see 'Emulator-bound runs')."
        ),
    ),
    (
        LINK_MARK,
        "In at least one run of that cell an impaired link did not do what the study "
        "configured: its rate, added delay or loss (see 'Link fidelity').",
    ),
    ("failed", "Runs that did not finish; listed under 'Failed runs' with their errors."),
    (
        "cold / steady",
        "A flow's first packet on a freshly built network is 'cold' (it may pay "
        "for ARP and controller flow setup); the packets after it are the steady state.",
    ),
]


def _how_to_read(metric_names: list[str]) -> str:
    terms = "".join(f"<dt>{escape(t)}</dt><dd>{escape(d)}</dd>" for t, d in GENERAL_TERMS)
    defs = []
    for name in metric_names:
        m = metrics.get(name)
        if m:
            defs.append(
                f"<dt>{escape(name)} ({escape(m.unit)}, {escape(m.better)} is better)</dt>"
                f"<dd>{escape(m.description)}</dd>"
            )
        else:
            defs.append(
                f"<dt>{escape(name)}</dt><dd>No definition registered in "
                "sdnperf.report.metrics.</dd>"
            )
    return (
        "<h2>How to read this</h2><dl>"
        + terms
        + "</dl>"
        + ("<h3>Metrics</h3><dl>" + "".join(defs) + "</dl>" if defs else "")
    )


def _metrics_shown(store: Store, study_id: int) -> list[str]:
    seen: dict[str, None] = {}
    for s in store.summaries(study_id):
        seen.setdefault(s.metric, None)
    plotted = {"rtt_ms", "throughput_mbps"}  # figures are drawn from these samples
    for _, metric in store.sample_metrics(study_id):
        if metric in plotted:
            seen.setdefault(metric, None)
    return list(seen)


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
