"""The study file schema: `[study]`, `[topology]`, `[[architecture]]`, `[[workload]]`.

Architectures and workloads bring their own models (arch/config.py, workloads/config.py);
topology parameters are checked by the chosen generator (topo/registry.py).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdnperf.arch.config import ArchitectureConfig
from sdnperf.workloads.config import WorkloadConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StudySection(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    repetitions: int = Field(3, ge=1, le=1000)
    seed: int = 1
    baseline: str | None = None  # architecture name; default: the first architecture
    description: str = ""
    # Off by default: hosts' IPv6 router/neighbour solicitations and MLD reports would reach
    # reactive controllers as packet-ins no workload sent.
    ipv6: bool = False
    # Hosts' TX checksum/segmentation offload. "auto": off when an architecture of the study
    # sends first packets through a controller (they would arrive with partial checksums and
    # be dropped), else on. Applied to every architecture alike, so the comparison is fair.
    host_offloads: Literal["auto", "on", "off"] = "auto"


class LinkDefaults(_Strict):
    # Mininet's tc shaping tops out at 1000 Mbit/s; leave bw unset for an unshaped link.
    bw: float | None = Field(None, gt=0, le=1000, description="Mbit/s")
    delay_ms: float | None = Field(None, ge=0, le=10_000)
    loss_pct: float | None = Field(None, ge=0, le=100)


class TopologySection(BaseModel):
    # Generator parameters sit beside `kind`; the generator validates them.
    model_config = ConfigDict(extra="allow")
    kind: str
    link: LinkDefaults | None = None


class StudyFile(_Strict):
    study: StudySection
    topology: TopologySection
    architecture: list[ArchitectureConfig] = Field(min_length=1)
    workload: list[WorkloadConfig] = Field(min_length=1)

    @model_validator(mode="after")
    def _names_and_baseline(self):
        for section, items in (("architecture", self.architecture), ("workload", self.workload)):
            seen = set()
            for item in items:
                if item.name in seen:
                    raise ValueError(f"two {section} entries are named {item.name!r}; names must be unique")
                seen.add(item.name)
        names = [a.name for a in self.architecture]
        if self.study.baseline is None:
            self.study.baseline = names[0]
        elif self.study.baseline not in names:
            raise ValueError(f"study.baseline {self.study.baseline!r} is not one of the "
                             f"architectures: {', '.join(names)}")
        return self
