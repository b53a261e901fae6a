"""Study-file entries for architectures: `[[architecture]]` tables, checked by pydantic."""
from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


class _ArchBase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$",
                      description="label used in tables and plots")


class BridgeConfig(_ArchBase):
    """Linux bridges with MAC learning; spanning tree on topologies with loops."""
    kind: Literal["bridge"]
    stp: Literal["auto", "on", "off"] = "auto"  # auto: on exactly when the topology has loops
    vlan: int | None = Field(None, ge=1, le=4094, description="VLAN tagging: every host port an "
                             "access port of this VLAN (vlan_filtering bridge); none: plain bridging")


class OvsStandaloneConfig(_ArchBase):
    """Open vSwitch as a plain learning switch (fail_mode=standalone, no controller)."""
    kind: Literal["ovs-standalone"]
    stp: Literal["auto", "on", "off"] = "auto"  # RSTP on loopy topologies
    datapath: Literal["auto", "kernel", "user"] = "auto"


class OpenflowConfig(_ArchBase):
    """Open vSwitch driven by an OpenFlow 1.3 controller that sdnperf starts."""
    kind: Literal["openflow"]
    controller: Literal["osken", "faucet", "ovs-testcontroller"] = "osken"
    app: Literal["l2-learning", "topo-forwarding"] = "l2-learning"  # os-ken only
    idle_timeout: int = Field(30, ge=0, le=3600, description="seconds; 0 = flows never expire")
    datapath: Literal["auto", "kernel", "user"] = "auto"


class P4Config(_ArchBase):
    """Our P4 switch (or BMv2's simple_switch_grpc) under sdnperf's P4Runtime controller."""
    kind: Literal["p4"]
    app: Literal["l2-learning", "topo-forwarding", "proactive", "runtime-json"] = "l2-learning"
    runtime_dir: str | None = Field(None, description="folder of sN-runtime.json files "
                                    "(app = \"runtime-json\"); relative to the study file's folder")
    target: Literal["sdnperf", "bmv2"] = "sdnperf"
    program: str = Field("l2l3", description="a P4 program shipped with sdnperf, by name "
                         "(sdnperf/p4/catalog.py): l2l3, recirc, l2, ipv4, vlan, pipeline8")
    params: dict[str, int | str] = Field(default_factory=dict, validate_default=True,
                                         description="the program's "
                                         "run-time parameters, written over P4Runtime at start")

    @field_validator("program")
    @classmethod
    def _known_program(cls, value: str, info: ValidationInfo) -> str:
        from sdnperf.p4.catalog import program
        prog = program(value)  # ParamError (a ValueError) names the programs there are
        app = info.data.get("app")
        if app is not None and app not in prog.apps:
            raise ValueError(f"program {prog.name!r} cannot be driven by app {app!r} "
                             f"(apps: {', '.join(prog.apps)})")
        return value

    @field_validator("params")
    @classmethod
    def _program_params(cls, value: dict, info: ValidationInfo) -> dict:
        """Every param of the program, checked, defaults filled in (so a stored run says
        exactly what the switch was given)."""
        from sdnperf.p4.catalog import program
        if "program" not in info.data:  # the program itself was refused
            return value
        return program(info.data["program"]).validate(value)


ArchitectureConfig = Annotated[Union[BridgeConfig, OvsStandaloneConfig, OpenflowConfig, P4Config],
                               Field(discriminator="kind")]
