"""Study-file entries for architectures: `[[architecture]]` tables, checked by pydantic."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sdnperf.controllers.external import (
    OPENFLOW_PLACEHOLDERS,
    P4RUNTIME_PLACEHOLDERS,
    check_placeholders,
)
from sdnperf.p4.catalog import program


class _ArchBase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="label used in tables and plots"
    )


class BridgeConfig(_ArchBase):
    """Linux bridges with MAC learning; spanning tree on topologies with loops."""

    kind: Literal["bridge"]
    stp: Literal["auto", "on", "off"] = "auto"  # auto: on exactly when the topology has loops
    vlan: int | None = Field(
        None,
        ge=1,
        le=4094,
        description="VLAN tagging: every host port an "
        "access port of this VLAN (vlan_filtering bridge); none: plain bridging",
    )


class OvsStandaloneConfig(_ArchBase):
    """Open vSwitch as a plain learning switch (fail_mode=standalone, no controller)."""

    kind: Literal["ovs-standalone"]
    stp: Literal["auto", "on", "off"] = "auto"  # RSTP on loopy topologies
    datapath: Literal["auto", "kernel", "user"] = "auto"


class RouterConfig(_ArchBase):
    """The kernel's IPv4 routing: the switch node is a Linux router namespace (ip_forward,
    no bridging) that answers the hosts' ARP for each other (proxy ARP) and routes each
    host by a /32 route, so the hosts keep the topology's one subnet."""

    kind: Literal["router"]


class DirectConfig(_ArchBase):
    """No switch at all: the two hosts of a one-switch topology joined by one link (their
    two links' settings, the first host's), the baseline a forwarding element is measured
    against (seed paper 001's "direct connection" between source and sink)."""

    kind: Literal["direct"]


class UserspaceConfig(_ArchBase):
    """IPv4 forwarding by a Linux user-space program (sdnperf/arch/userfwd.py: AF_PACKET
    sockets, a /32 route per host, TTL and checksum): seed paper 001's "Linux user-space"."""

    kind: Literal["userspace"]


OvsFlowProgram = Literal["l2", "ipv4", "vlan", "pipeline8"]


class OvsFlowsConfig(_ArchBase):
    """Open vSwitch with static OpenFlow 1.3 flows sdnperf installs (no controller): the
    equivalent of one of the workload-complexity P4 programs (sdnperf/arch/ovs_flows.py)."""

    kind: Literal["ovs-flows"]
    program: OvsFlowProgram = Field(
        "l2", description="the P4 program the flows are equivalent to: l2, ipv4, vlan, pipeline8"
    )
    datapath: Literal["auto", "kernel", "user"] = "auto"


OSKEN_APP_NAMES = ("l2-learning", "topo-forwarding")
OPENFLOW_VERSIONS = {
    "1.0": "OpenFlow10",
    "1.1": "OpenFlow11",
    "1.2": "OpenFlow12",
    "1.3": "OpenFlow13",
    "1.4": "OpenFlow14",
    "1.5": "OpenFlow15",
}


def host_port(value: str | None) -> str | None:
    """ "host:port" of a controller that is already running."""
    if value is None:
        return value
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f'address {value!r} must be host:port, e.g. "127.0.0.1:6653"')
    return value


class OpenflowConfig(_ArchBase):
    """Open vSwitch driven by an OpenFlow controller: one sdnperf ships and starts, the
    study's own (`command`, an os-ken app file, POX), or one already running (`remote`)."""

    kind: Literal["openflow"]
    controller: Literal["osken", "faucet", "ovs-testcontroller", "command", "remote", "pox"] = (
        "osken"
    )
    app: str = Field(
        "l2-learning",
        min_length=1,
        description="os-ken: one of ours by name "
        "(l2-learning, topo-forwarding) or the path of an app file (.py, relative "
        'to the study file); pox: its components, e.g. "forwarding.l2_learning"',
    )
    command: list[str] | None = Field(
        None,
        min_length=1,
        description='controller = "command": program and arguments, with placeholders',
    )
    address: str | None = Field(None, description='controller = "remote": host:port')
    openflow: list[Literal["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"]] | None = Field(
        None, min_length=1, description="versions the switches offer; default 1.3 (POX: 1.0)"
    )
    idle_timeout: int = Field(30, ge=0, le=3600, description="seconds; 0 = flows never expire")
    datapath: Literal["auto", "kernel", "user"] = "auto"
    # the study file's folder, for a command's {study_dir} (set by the loader)
    _study_dir: str = PrivateAttr(".")

    @field_validator("address")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        return host_port(value)

    @model_validator(mode="after")
    def _fields_of_the_controller(self):
        c = self.controller
        if (c == "command") != (self.command is not None):
            raise ValueError('command = [...] goes with controller = "command" (and only there)')
        if (c == "remote") != (self.address is not None):
            raise ValueError(
                'address = "host:port" goes with controller = "remote" (and only there)'
            )
        if self.command is not None:  # controller = "command" (checked above)
            check_placeholders(self.command, OPENFLOW_PLACEHOLDERS)  # PlaceholderError: ValueError
        if c == "osken" and self.app not in OSKEN_APP_NAMES and not self.app.endswith(".py"):
            raise ValueError(
                f"app {self.app!r}: os-ken runs one of ours "
                f"({', '.join(OSKEN_APP_NAMES)}) or an app file ending in .py"
            )
        if c == "pox" and "app" not in self.model_fields_set:
            raise ValueError(
                'controller = "pox" needs app = "<components>", e.g. "forwarding.l2_learning"'
            )
        return self

    def own_osken_app(self) -> bool:
        """An os-ken app file of the study's (not one of ours)."""
        return self.controller == "osken" and self.app not in OSKEN_APP_NAMES

    def switch_protocols(self) -> str:
        """OVS's protocols= for the switches (POX speaks OpenFlow 1.0 only)."""
        versions = self.openflow or (["1.0"] if self.controller == "pox" else ["1.3"])
        return ",".join(OPENFLOW_VERSIONS[v] for v in versions)


# how our P4 switches run when a study does not say (docs/study-format.md): the mode
# measured cheaper (bench/lab/README.md)
SWITCH_PROCESSES_DEFAULT: Literal["shared", "per-switch"] = "shared"


class P4Config(_ArchBase):
    """Our P4 switch (or BMv2's simple_switch_grpc) under a P4Runtime controller: sdnperf's,
    the study's own (`command`) or one already running (`remote`)."""

    kind: Literal["p4"]
    # before app/program: their checks are about sdnperf's own controller
    controller: Literal["sdnperf", "command", "remote"] = Field(
        "sdnperf",
        description="who programs the switches: sdnperf's P4Runtime controller, "
        "the study's command (started per run), or one already running that dials them",
    )
    app: Literal["l2-learning", "topo-forwarding", "proactive", "runtime-json"] = "l2-learning"
    runtime_dir: str | None = Field(
        None,
        description="folder of sN-runtime.json files "
        '(app = "runtime-json"); relative to the study file\'s folder',
    )
    target: Literal["sdnperf", "bmv2"] = "sdnperf"
    datapath: Literal["auto", "xdp", "user"] = Field(
        "user",
        description="how our switches forward: user (the user-space engine), xdp (the "
        "program compiled to eBPF forwards in the ports' XDP hooks; what it cannot finish, "
        "e.g. packets to the controller, still goes through the engine; refused where it "
        "cannot run) or auto (xdp where the program fits, no switch port delays, drops or "
        "follows a rate schedule (a bw alone is shaped in the kernel too) and hosts send "
        "no offloaded super-packets, else user; the choice and the reason "
        "are recorded with each run)",
    )
    port_burst: Literal["htb", "packet"] = Field(
        "htb",
        description="how our switch's ports shape a link's bw: htb (a token bucket with "
        "the burst Mininet's htb has at that rate, sdnperf/links/htb.py, so the bridge, "
        "OVS and p4 links are one model) or packet (strict pacing: a packet starts only "
        "once the previous one's serialisation is over); recorded with each run "
        "(facts: port_burst, port_burst_bytes)",
    )
    switch_processes: Literal["shared", "per-switch"] | None = Field(
        None,
        description="how our switches run: shared (one sdnperf-switch-grpc process for "
        "all the switches of a network, one data-plane thread serving every port) or "
        'per-switch (one process each); default: shared for target = "sdnperf", '
        "per-switch for bmv2 (the only choice there)",
    )
    cpu_priority: Literal["normal", "high", "realtime"] = Field(
        "normal",
        description="scheduling of the switch processes (ours and BMv2's alike), so the "
        "switch under test gets the CPU its work needs on a busy machine: normal (as "
        "started), high (nice -10 on every thread) or realtime (SCHED_RR at priority 1, "
        "bounded by the kernel's real-time throttle, refused when that is off); recorded "
        "with each run (facts: cpu_priority, switch_scheduling)",
    )
    recirc_pace_us: int = Field(
        0,
        ge=0,
        le=1_000_000,
        description="our switch's recirculation path latency (µs): a recirculated packet "
        "re-enters ingress this long after it left, so the data-plane thread sleeps while "
        "packets loop instead of keeping a core busy; each pass then lasts at least this "
        "long (a hold of N passes is about N times it). 0 (default): at once",
    )
    program: str = Field(
        "l2l3",
        description="a P4 program shipped with sdnperf, by name "
        "(sdnperf/p4/catalog.py): l2l3, recirc, recirc_hold, l2, ipv4, vlan, pipeline8",
    )
    params: dict[str, int | str] = Field(
        default_factory=dict,
        validate_default=True,
        description="the program's run-time parameters, written over P4Runtime at start",
    )
    command: list[str] | None = Field(
        None,
        min_length=1,
        description='controller = "command": program and arguments, with placeholders',
    )
    grpc_base_port: int | None = Field(
        None,
        ge=1024,
        le=65000,
        description="switch sN "
        "listens on 127.0.0.1:(grpc_base_port + N - 1); "
        "default: free ports (remote: 50051, as the P4 tutorials)",
    )
    # the study file's folder, for a command's {study_dir} (set by the loader)
    _study_dir: str = PrivateAttr(".")

    @model_validator(mode="after")
    def _fields_of_the_controller(self):
        if (self.controller == "command") != (self.command is not None):
            raise ValueError('command = [...] goes with controller = "command" (and only there)')
        if self.command is not None:  # controller = "command" (checked above)
            check_placeholders(self.command, P4RUNTIME_PLACEHOLDERS)
        if self.datapath != "user" and self.target != "sdnperf":
            raise ValueError(
                f'datapath = "{self.datapath}" needs target = "sdnperf" (our switch); '
                'BMv2 has no XDP fast path: use datapath = "user"'
            )
        if self.port_burst != "htb" and self.target != "sdnperf":
            raise ValueError(
                f'port_burst = "{self.port_burst}" needs target = "sdnperf" (our switch); '
                "BMv2's ports are shaped by Mininet's htb"
            )
        if self.recirc_pace_us and self.target != "sdnperf":
            raise ValueError(
                'recirc_pace_us needs target = "sdnperf" (our switch); BMv2 has no '
                "recirculation path latency"
            )
        if self.controller == "remote" and self.grpc_base_port is None:
            self.grpc_base_port = 50051
        if self.switch_processes == "shared" and self.target != "sdnperf":
            raise ValueError(
                'switch_processes = "shared" needs target = "sdnperf" (our switch); '
                'simple_switch_grpc runs one switch per process: use "per-switch"'
            )
        if self.switch_processes is None:
            self.switch_processes = (
                SWITCH_PROCESSES_DEFAULT if self.target == "sdnperf" else "per-switch"
            )
        return self

    @field_validator("program")
    @classmethod
    def _known_program(cls, value: str, info: ValidationInfo) -> str:

        prog = program(value)  # ParamError (a ValueError) names the programs there are
        app = info.data.get("app")
        ours = info.data.get("controller", "sdnperf") == "sdnperf"  # else `app` is unused
        if ours and app is not None and app not in prog.apps:
            raise ValueError(
                f"program {prog.name!r} cannot be driven by app {app!r} "
                f"(apps: {', '.join(prog.apps)})"
            )
        return value

    @field_validator("params")
    @classmethod
    def _program_params(cls, value: dict, info: ValidationInfo) -> dict:
        """Every param of the program, checked, defaults filled in (so a stored run says
        exactly what the switch was given)."""
        if "program" not in info.data:  # the program itself was refused
            return value
        return program(info.data["program"]).validate(value)


ArchitectureConfig = Annotated[
    Union[
        BridgeConfig,
        RouterConfig,
        DirectConfig,
        UserspaceConfig,
        OvsStandaloneConfig,
        OvsFlowsConfig,
        OpenflowConfig,
        P4Config,
    ],
    Field(discriminator="kind"),
]
