"""The run plan: the matrix of (architecture, workload, repetition) in execution order.

Architectures alternate inside each repetition (rep 1: A, B; rep 2: A, B; ...) so that a
slow drift of the machine (thermal, background load) spreads over all of them instead of
biasing the one that happened to run last.
"""
from __future__ import annotations

from dataclasses import dataclass

from sdnperf.study.loader import LoadedStudy


@dataclass(frozen=True)
class RunSpec:
    key: str
    index: int
    architecture: object  # an ArchitectureConfig
    workload: object  # a WorkloadConfig
    repetition: int


def plan_runs(study: LoadedStudy) -> list[RunSpec]:
    cfg = study.config
    runs = []
    for rep in range(1, cfg.study.repetitions + 1):
        for wl in cfg.workload:
            for arch in cfg.architecture:
                key = f"{study.topology.name}|{arch.name}|{wl.name}|{rep}"
                runs.append(RunSpec(key, len(runs), arch, wl, rep))
    return runs
