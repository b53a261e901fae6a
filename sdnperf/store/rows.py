"""What the store hands back when read: plain rows that carry their run's identity.

The report never sees SQL; it works on these. Samples and summaries carry the run's
architecture, topology and repetition so callers need not join by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sdnperf.samples import Better, CpuReport


@dataclass(frozen=True)
class StudyRow:
    id: int
    name: str
    source: str
    spec: dict
    created: float  # unix time
    environment: dict
    provenance: dict = field(default_factory=dict)  # sdnperf/fidelity/provenance.py


@dataclass(frozen=True)
class RunRow:
    id: int
    study_id: int
    key: str
    topology: str
    architecture: str
    workload: str
    repetition: int
    params: dict
    status: str  # "ok" | "failed"
    error: str
    started: float
    finished: float
    cpu_bound: bool
    cpu: CpuReport = field(default_factory=CpuReport)
    point: dict = field(default_factory=dict)  # swept parameter path -> value
    position: int | None = None  # place in the planned run order

    @property
    def duration(self) -> float:
        return max(0.0, self.finished - self.started)


@dataclass(frozen=True)
class SampleRow:
    run_id: int
    architecture: str
    topology: str
    repetition: int
    workload: str
    metric: str
    value: float  # NaN when the workload recorded NaN
    unit: str
    flow: str
    phase: str
    t: float | None
    seq: int | None


@dataclass(frozen=True)
class SummaryRow:
    run_id: int
    run_key: str
    architecture: str
    topology: str
    repetition: int
    status: str  # of the run
    cpu_bound: bool  # of the run
    workload: str
    metric: str
    value: float
    unit: str
    better: Better
