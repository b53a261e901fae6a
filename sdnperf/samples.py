"""The data that flows from a run to the store: samples, summaries and run results.

Workloads produce `Sample`s (raw measurements) and `Summary`s (one value per metric per
run, the unit the statistics work on). The runner wraps them in a `RunResult` together
with the fidelity marks (CPU use) and hands that to the store. Nothing here knows about
Mininet, SQLite or plots: it is the common vocabulary of every seam.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Better = Literal["lower", "higher"]
RunStatus = Literal["ok", "failed"]
# A run's sweep point: ((parameter path, value), ...) sorted by path (study/sweep.py makes
# them; run keys, --only, tables and plots spell them with format_point).
Point = tuple[tuple[str, object], ...]


def format_value(value: object) -> str:
    """A sweep value as written in run keys and --only expressions (stable across versions)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def format_point(point: Point) -> str:
    return ",".join(f"{path}={format_value(value)}" for path, value in point)


@dataclass(frozen=True)
class Sample:
    """One raw measurement, e.g. the RTT of one ping or one 1-s throughput interval."""

    workload: str  # the workload's name in the study (e.g. "ping")
    metric: str  # e.g. "rtt_ms", "throughput_mbps"
    value: float
    unit: str
    flow: str = ""  # "h1->h28"; empty when the sample is not per flow
    phase: str = ""  # e.g. "cold" (first packet on a fresh network) or "steady"
    t: float | None = None  # seconds since the workload started, for time series
    seq: int | None = None  # packet sequence number / interval index where it exists


@dataclass(frozen=True)
class Summary:
    """One number per (run, workload, metric): what repetitions are compared on."""

    workload: str
    metric: str
    value: float
    unit: str
    better: Better = "lower"


@dataclass
class CpuReport:
    """CPU use during a run, from the fidelity sampler, the emulator's per-switch pace and
    whether the impaired links did what they were configured to do."""

    per_role: dict[str, float] = field(default_factory=dict)  # role -> mean % of one core
    per_core: list[float] = field(default_factory=list)  # mean busy % per core
    peak_total: float = 0.0  # highest whole-machine busy % over any sampling interval
    cpu_bound: bool = False
    reason: str = ""  # why the run was marked CPU-bound, in words
    # who waited for a CPU (fidelity/procstat.py): the % of the run in which a runnable
    # task had none (PSI "some", whole machine; None: the kernel keeps no such account),
    # and per role the ms its threads waited on run queues and the times they were run
    cpu_wait_pct: float | None = None
    queued_ms: dict[str, float] = field(default_factory=dict)
    queued_runs: dict[str, int] = field(default_factory=dict)
    # fidelity/hops.py: one switch's forwarding time, probed after the workload, and
    # whether it was far above a small topology's (the emulator, not the architecture)
    switch_ms: float | None = None
    emulator_bound: bool = False
    emulator_reason: str = ""
    # fidelity/links.py: every impaired link end's configured and measured rate, delay and
    # loss (LinkCheck records), and whether one of them broke what the study configured
    links: list[dict] = field(default_factory=list)
    link_breach: bool = False
    link_reason: str = ""


@dataclass
class RunResult:
    """Everything one run produced; the store commits it in one transaction."""

    key: str  # stable identity inside the study, used by --resume
    topology: str
    architecture: str
    workload: str
    repetition: int
    params: dict
    status: RunStatus
    error: str = ""
    started: float = 0.0  # unix time
    finished: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    cpu: CpuReport = field(default_factory=CpuReport)
    point: dict = field(default_factory=dict)  # swept parameter path -> value (study/sweep.py)
    position: int | None = None  # the run's place in the study's planned order
