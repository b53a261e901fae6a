"""What a workload gets from the runner (`WorkloadContext`) and what it gives back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..samples import Sample, Summary


@runtime_checkable
class WorkloadContext(Protocol):
    """The runner's view of a built network, as a workload needs it.

    `host(name)` returns a Mininet host (anything with `.cmd`, `.popen` and `.IP()`).
    A runner may also define `on_process(pid: int) -> None`; workloads call it for every
    traffic process they start (e.g. to hand the PID to `CpuSampler.watch("traffic", pid)`).
    """

    host_names: list[str]
    seed: int

    def host(self, name: str) -> Any: ...

    def log(self, msg: str) -> None: ...


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
