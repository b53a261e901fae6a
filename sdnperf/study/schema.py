"""The study file schema: `[study]`, `[topology]` (or several `[[topology]]`),
`[[architecture]]`, `[[workload]]` and `[[sweep]]`.

Architectures and workloads bring their own models (arch/config.py, workloads/config.py);
topology parameters are checked by the chosen generator (topo/registry.py); sweep paths
are resolved against all of these by study/paths.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from sdnperf.arch.config import ArchitectureConfig
from sdnperf.links.config import LinkSchedule
from sdnperf.userinput import SafeName
from sdnperf.workloads.config import WorkloadConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StudySection(_Strict):
    name: SafeName  # results/<name>/: one safe folder name
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
    # "random": the whole matrix shuffled with the study seed, so the drift of a shared
    # machine does not line up with one architecture or one sweep point.
    order: Literal["interleaved", "random"] = "interleaved"


class LinkDefaults(_Strict):
    # Mininet's tc shaping tops out at 1000 Mbit/s; leave bw unset for an unshaped link.
    bw: float | None = Field(None, gt=0, le=1000, description="Mbit/s")
    delay_ms: float | None = Field(None, ge=0, le=10_000)
    loss_pct: float | None = Field(None, ge=0, le=100)
    # both ends of every link (e.g. 2000 so 2000-byte frames pass); unset: the kernel's 1500
    mtu: int | None = Field(None, ge=68, le=65535, description="bytes")
    # Hold every packet for its transmission time at bw (netem's `rate`; our switch's ports
    # do the same), so a lone ping on an idle 1 Mbit/s link pays 12 ms per 1500 bytes as on
    # a wire. Unset/false: htb's token bucket, which lets a lone packet through at once.
    # Without bw there is nothing to hold; on kernel links it needs sch_netem.
    serialise: bool | None = None
    # The sdnperf link element (links/element.py: our switch as a two-port wire in the
    # host's namespace) on host links with delay/loss/jitter: "auto" where the kernel lacks
    # sch_netem and the architecture does not impair links itself; "always" on every host
    # link (also to measure the element itself); "off": never.
    element: Literal["off", "auto", "always"] = "off"


class TopologySection(BaseModel):
    # Generator parameters sit beside `kind`; the generator validates them.
    model_config = ConfigDict(extra="allow")
    kind: str
    # Label of the topology in run keys, tables and plots. Required for [[topology]]
    # entries; a single [topology] without it is labelled by its generated name.
    name: SafeName | None = None
    link: LinkDefaults | None = None
    # links that change during a run: name -> schedule (links/config.py)
    schedule: dict[str, LinkSchedule] = Field(default_factory=dict)
    # Per-tier settings, taking precedence over `link`: switch-to-switch links ("core") and
    # hosts' access links ("edge"), e.g. 000's 1 Gbit/s core and 100 Mbit/s edge links.
    core_link: LinkDefaults | None = None
    edge_link: LinkDefaults | None = None

    def link_settings(self) -> dict[str, dict]:
        """{"link"|"core_link"|"edge_link": {bw, delay_ms, loss_pct}} for those given."""
        out = {}
        for key in LINK_SETTINGS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value.model_dump()
        return out


LINK_SETTINGS = ("link", "core_link", "edge_link")


class SweepSection(_Strict):
    """One swept parameter: its path in the study (study/paths.py) and its values."""

    param: str = Field(min_length=1)
    values: list[Any] = Field(min_length=1)
    # Sweeps with mode = "zip" advance together (equal lengths); that group and every
    # "grid" sweep are then combined as a cartesian product.
    mode: Literal["grid", "zip"] = "grid"
    fit: Literal["linear", "log", "none"] = "none"  # curve fitted in the report

    @model_validator(mode="after")
    def _distinct_values(self):
        seen = []
        for value in self.values:
            if value in seen:
                raise ValueError(f"value {value!r} is listed twice")
            seen.append(value)
        return self


# One [topology] table or several [[topology]] entries; told apart by shape so an error
# names one form only (loader.py drops the tag from error locations).
TopologyTables = Annotated[
    Union[Annotated[TopologySection, Tag("table")], Annotated[list[TopologySection], Tag("list")]],
    Discriminator(lambda v: "list" if isinstance(v, list) else "table"),
]


class StudyFile(_Strict):
    study: StudySection
    topology: TopologyTables
    architecture: list[ArchitectureConfig] = Field(min_length=1)
    workload: list[WorkloadConfig] = Field(min_length=1)
    sweep: list[SweepSection] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names_and_baseline(self):
        if isinstance(self.topology, list):
            if not self.topology:
                raise ValueError("[[topology]] needs at least one entry")
            names = [t.name for t in self.topology]
            if None in names:
                raise ValueError(
                    "every [[topology]] entry needs a `name` (its label in keys and plots)"
                )
            if len(set(names)) != len(names):
                raise ValueError(
                    "two [[topology]] entries have the same name; names must be unique"
                )
        for section, items in (("architecture", self.architecture), ("workload", self.workload)):
            seen = set()
            for item in items:
                if item.name in seen:
                    raise ValueError(
                        f"two {section} entries are named {item.name!r}; names must be unique"
                    )
                seen.add(item.name)
        for arch in self.architecture:
            if getattr(arch, "datapath", "user") == "xdp" and self.study.host_offloads == "on":
                raise ValueError(
                    f'architecture {arch.name!r}: datapath = "xdp" needs hosts without '
                    "offloaded super-packets (AF_XDP ports carry MTU-sized frames): set "
                    'study.host_offloads = "auto" or "off", or datapath = "auto"'
                )
        topology_names = {t.name for t in self.topologies()}
        for wl in self.workload:
            for entry in [wl, *getattr(wl, "members", [])]:
                for field, given in (
                    ("per_topology", entry.per_topology or {}),
                    ("topologies", entry.topologies or []),
                ):
                    unknown = sorted(set(given) - topology_names)
                    if unknown and not isinstance(self.topology, list):
                        raise ValueError(
                            f"workload {entry.name!r}: {field} is for studies with several "
                            "named [[topology]] entries"
                        )
                    if unknown:
                        raise ValueError(
                            f"workload {entry.name!r}: {field} names no [[topology]] entry: "
                            f"{', '.join(unknown)} (topologies: "
                            f"{', '.join(sorted(n for n in topology_names if n))})"
                        )
        arch_names = [a.name for a in self.architecture]
        if self.study.baseline is None:
            self.study.baseline = arch_names[0]
        elif self.study.baseline not in arch_names:
            raise ValueError(
                f"study.baseline {self.study.baseline!r} is not one of the "
                f"architectures: {', '.join(arch_names)}"
            )
        return self

    def topologies(self) -> list[TopologySection]:
        """The topology entries: the single [topology] table or every [[topology]]."""
        return list(self.topology) if isinstance(self.topology, list) else [self.topology]
