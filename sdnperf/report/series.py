"""Shape stored samples into what the plots draw, without drawing anything.

Only runs with status "ok" are used: a failed run's partial samples would bias the
figures (failed runs are listed separately in the report). Samples whose phase is
"cold" are a flow's first packet; every other sample counts as steady state.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdnperf.store import Store

COLD = "cold"


@dataclass(frozen=True)
class TimeSeries:
    t: np.ndarray  # seconds since the workload started
    mean: np.ndarray  # across runs
    low: np.ndarray  # min across runs
    high: np.ndarray  # max across runs
    runs: int
    flows: int
    unit: str


def architectures(store: Store, study_id: int, baseline: str | None = None) -> list[str]:
    """Architectures in the order they were run, the baseline first."""
    seen: dict[str, None] = {}
    for r in store.runs(study_id):
        seen.setdefault(r.architecture, None)
    archs = list(seen)
    if baseline in archs:
        archs.remove(baseline)
        archs.insert(0, baseline)
    return archs


def workloads_with(store: Store, study_id: int, metric: str) -> list[str]:
    """Workloads that have ok samples of this metric, in the order they were stored."""
    return [w for w, m in store.sample_metrics(study_id) if m == metric]


def throughput_over_time(
    store: Store,
    study_id: int,
    workload: str,
    metric: str = "throughput_mbps",
    combine: str = "sum",
    topology: str | None = None,
) -> dict[str, TimeSeries]:
    """Per architecture: the flows' values summed per reporting interval in each run
    (aggregate throughput; `combine = "mean"`: their mean, for per-flow quantities such as
    jitter or RTT), then mean, min and max across the runs per interval. `topology`: that
    topology's runs only (default: every run).

    Intervals are matched by their index (`seq`), not their time stamp: concurrent
    clients start a few ms apart, so their interval ends differ slightly. The time shown
    for an interval is the mean of its stamps. Samples without seq fall back to t.
    """
    # per_run[arch][run_id][interval] = summed value; stamps[arch][interval] = t values
    per_run: dict[str, dict[int, dict[float, float]]] = defaultdict(lambda: defaultdict(dict))
    stamps: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    flows: dict[str, set[str]] = defaultdict(set)
    units: dict[str, str] = {}
    counts: dict[tuple[str, int, float], int] = defaultdict(int)
    where: dict[str, Any] = {} if topology is None else {"topology": topology}  # Store filters
    for s in store.samples(
        study_id=study_id, workload=workload, metric=metric, status="ok", **where
    ):
        if s.t is None or not math.isfinite(s.value):
            continue
        interval = float(s.seq) if s.seq is not None else round(s.t, 3)
        bucket = per_run[s.architecture][s.run_id]
        bucket[interval] = bucket.get(interval, 0.0) + s.value
        counts[s.architecture, s.run_id, interval] += 1
        stamps[s.architecture][interval].append(s.t)
        flows[s.architecture].add(s.flow)
        units.setdefault(s.architecture, s.unit)
    if combine == "mean":
        for (arch, run_id, interval), n in counts.items():
            per_run[arch][run_id][interval] /= n
    out = {}
    for arch, runs in per_run.items():
        intervals = sorted({i for run in runs.values() for i in run})
        # an interval some runs lack (a run ended early) is averaged over those that have it
        columns = [[run[i] for run in runs.values() if i in run] for i in intervals]
        out[arch] = TimeSeries(
            t=np.array([np.mean(stamps[arch][i]) for i in intervals]),
            mean=np.array([np.mean(c) for c in columns]),
            low=np.array([np.min(c) for c in columns]),
            high=np.array([np.max(c) for c in columns]),
            runs=len(runs),
            flows=len(flows[arch]),
            unit=units[arch],
        )
    return out


def per_run_means(
    store: Store, study_id: int, workload: str, metric: str, cold: bool
) -> tuple[dict[str, list[float]], str]:
    """Per architecture, one value per run: the mean of that run's cold (first-packet)
    or steady samples. Returns (values by architecture, unit)."""
    values: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    unit = ""
    for s in store.samples(study_id=study_id, workload=workload, metric=metric, status="ok"):
        if (s.phase == COLD) != cold or not math.isfinite(s.value):
            continue
        values[s.architecture][s.run_id].append(s.value)
        unit = unit or s.unit
    return {arch: [float(np.mean(v)) for v in runs.values()] for arch, runs in values.items()}, unit


def pooled(
    store: Store, study_id: int, workload: str, metric: str, cold: bool = False
) -> tuple[dict[str, list[float]], str]:
    """Per architecture, every steady (or cold) sample of every ok run."""
    values: dict[str, list[float]] = defaultdict(list)
    unit = ""
    for s in store.samples(study_id=study_id, workload=workload, metric=metric, status="ok"):
        if (s.phase == COLD) == cold and math.isfinite(s.value):
            values[s.architecture].append(s.value)
            unit = unit or s.unit
    return dict(values), unit


def cpu_per_role(store: Store, study_id: int) -> dict[str, dict[str, list[float]]]:
    """Per architecture and role (switch, controller, iperf...), the runs' mean CPU %."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in store.runs(study_id):
        if r.status != "ok":
            continue
        for role, pct in r.cpu.per_role.items():
            out[r.architecture][role].append(float(pct))
    return {arch: dict(roles) for arch, roles in out.items()}


def conditions(store: Store, study_id: int) -> str:
    """The line every figure carries: topology, repetitions, CPU-bound and failed runs."""
    runs = store.runs(study_id)
    topologies = sorted({r.topology for r in runs})
    # repetitions actually run (the spec may have changed on a resume): the largest
    # number of runs of any topology × architecture × workload cell
    cells: dict[tuple, int] = defaultdict(int)
    for r in runs:  # a sweep point is part of the cell
        cells[
            (r.topology, r.architecture, r.workload, tuple(sorted(map(str, r.point.items()))))
        ] += 1
    reps = max(cells.values(), default=0)
    parts = [", ".join(topologies), f"n={reps} repetition{'s' if reps != 1 else ''}"]
    bound = sum(1 for r in runs if r.cpu_bound)
    failed = sum(1 for r in runs if r.status == "failed")
    if bound:
        parts.append(f"{bound} CPU-bound run{'s' if bound != 1 else ''}")
    emulator = sum(1 for r in runs if r.cpu.emulator_bound)
    if emulator:
        parts.append(f"{emulator} emulator-bound run{'s' if emulator != 1 else ''}")
    links = sum(1 for r in runs if r.cpu.link_breach)
    if links:
        parts.append(f"{links} run{'s' if links != 1 else ''} with a link-fidelity breach")
    if failed:
        parts.append(f"{failed} failed run{'s' if failed != 1 else ''} excluded")
    # our P4 switches' data path where a study asked for the XDP fast path (p4 datapath)
    paths: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        facts = r.params.get("facts", {})
        if facts.get("datapath") and facts.get("datapath_setting") != "user":
            paths[r.architecture].add(str(facts["datapath"]))
    for arch, used in sorted(paths.items()):
        parts.append(f"{arch} datapath {'/'.join(sorted(used))}")
    # a controller sdnperf did not start (controller = "remote") had no CPU sampled
    unmeasured = sorted(
        {r.architecture for r in runs if r.params.get("facts", {}).get("controller_cpu")}
    )
    if unmeasured:
        parts.append(f"controller CPU not measured for {', '.join(unmeasured)} (remote)")
    return ", ".join(p for p in parts if p)
