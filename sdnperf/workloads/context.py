"""What a workload gets from the runner (`WorkloadContext`) and what it gives back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..samples import Sample, Summary


@runtime_checkable
class WorkloadContext(Protocol):
    """The runner's view of a built network, as a workload needs it.

    `host(name)` returns a Mininet host (anything with `.cmd`, `.popen` and `.IP()`).
    Workloads call `on_process(pid)` for every traffic process they start (the runner hands
    the PID to `CpuSampler.watch("traffic", pid)`). `results_dir` is this run's folder for
    files a workload keeps (pcaps); None sends them to the study's `capture_dir`.
    """

    host_names: list[str]
    seed: int
    results_dir: Path | None

    def host(self, name: str) -> Any: ...

    def log(self, msg: str) -> None: ...

    def on_process(self, pid: int) -> None: ...


@dataclass
class WorkloadOutput:
    samples: list[Sample] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    processes_started: int = 0


class WorkloadError(RuntimeError):
    """A workload could not measure what it was asked to (tool failed, hung, bad output).

    The message names the workload and every failing pair, so the runner can store it as
    the run's error as is.
    """
