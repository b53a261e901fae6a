"""What the answer functions share: per-run values from the store, grouped and summarised."""

from __future__ import annotations

import math
from collections import defaultdict

from sdnperf.report.stats import mean_ci


def values(store, study_id: int, metric: str, workload: str | None = None):
    """(run, value) of every ok run's summary `metric` (NaN left out)."""
    runs = {r.id: r for r in store.runs(study_id) if r.status == "ok"}
    out = []
    for s in store.summaries(study_id):
        if (
            s.metric == metric
            and s.run_id in runs
            and (workload is None or s.workload == workload)
            and s.value == s.value
        ):
            out.append((runs[s.run_id], s.value))
    return out


def by(pairs, key) -> dict:
    """Group (run, value) pairs by key(run) -> list of values."""
    groups: dict = defaultdict(list)
    for run, v in pairs:
        groups[key(run)].append(v)
    return dict(groups)


def mean_text(vals, unit: str, digits: int = 3) -> str:
    """'1.23 ms (95 % CI 1.1 .. 1.4, n = 3)', or just the value for one run."""
    m = mean_ci(vals)
    if m.half_width is None or not math.isfinite(m.half_width):
        return f"{m.mean:.{digits}g} {unit} (n = {len(vals)})"
    return f"{m.mean:.{digits}g} {unit} (95 % CI {m.low:.{digits}g} .. {m.high:.{digits}g}, n = {len(vals)})"


def mean(vals) -> float:
    return sum(vals) / len(vals)


def ranking(groups: dict, better: str) -> list:
    """Keys ordered best first by their mean ('lower' or 'higher' is better)."""
    return sorted(groups, key=lambda k: mean(groups[k]), reverse=(better == "higher"))


def point_value(run, path: str):
    return run.point.get(path)


def versus(store, study_id: int, baseline: str, items, per=lambda run: run.topology) -> list[str]:
    """One sentence per group (topology by default): each (workload, metric, label, unit,
    better) in `items` as every architecture's mean, and the others' difference to
    `baseline` ("+12 % (worse)"), e.g. "grid: ping RTT openflow 0.21 ms, p4 0.18 ms
    (-14.3 % (better)); ..."."""
    from sdnperf.report.stats import pct_difference

    sentences: dict = defaultdict(list)
    for workload, metric, label, unit, better in items:
        groups = by(values(store, study_id, metric, workload), lambda r: (per(r), r.architecture))
        for where in sorted({w for w, _ in groups}):
            archs = {a: v for (w, a), v in groups.items() if w == where}
            parts = []
            for arch in ([baseline] if baseline in archs else []) + sorted(
                a for a in archs if a != baseline
            ):
                text = f"{arch} {mean(archs[arch]):.3g}"
                if arch != baseline and baseline in archs:
                    words = pct_difference(mean(archs[arch]), mean(archs[baseline]), better).words()
                    text += f" ({words})" if words else ""
                parts.append(text)
            sentences[where].append(f"{label} [{unit}] " + ", ".join(parts))
    return [f"{where}: " + "; ".join(parts) + "." for where, parts in sorted(sentences.items())]
