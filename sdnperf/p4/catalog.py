"""The P4 programs sdnperf ships, by name, and the run-time parameters each one reads.

A study picks a program with `program = "recirc"` in a `[[architecture]]` of kind p4 and
sets its parameters with `params = {recirc_passes = 7}`. The controller writes them into
every switch right after pushing the pipeline and before its app starts, so changing a
parameter (a sweep point) never recompiles the program.

    program("recirc").validate({"recirc_passes": 7})  # -> every param, defaults filled in
    program("recirc").writes({...validated...})        # -> P4Runtime writes for the controller

A write is a plain dict (it travels in the controller's JSON config, see
sdnperf/controllers/p4rt/params.py): {"table", "action", "params", and either
"default": true (MODIFY the table's default action) or "match" + "priority" (INSERT one
entry)}.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Callable

ANY = "any"  # the value of a selection parameter that matches every packet


class ParamError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    """One run-time parameter: what it means, the values it takes and where it goes."""

    name: str
    doc: str
    kind: (
        str  # "int": minimum..maximum; "dscp": "any" or 0..63; "ipv4_prefix": "any" or A.B.C.D[/L]
    )
    default: int | str
    p4runtime: str  # the P4Runtime object it is written to, in words (docs, facts)
    minimum: int = 0
    maximum: int = 0

    def check(self, value):
        """The value, normalised; ParamError naming the parameter if it does not fit."""
        what = f"param {self.name!r}"
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError(
                    f"{what}: {value!r} is not an integer ({self.minimum}..{self.maximum})"
                )
            if not self.minimum <= value <= self.maximum:
                raise ParamError(f"{what}: {value} is outside {self.minimum}..{self.maximum}")
            return value
        if value == ANY:
            return ANY
        if self.kind == "dscp":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 63:
                raise ParamError(f'{what}: {value!r} is not a DSCP value (0..63) or "any"')
            return value
        if self.kind == "ipv4_prefix":
            try:
                return str(ipaddress.IPv4Network(str(value), strict=True))
            except ValueError as exc:
                raise ParamError(
                    f'{what}: {value!r} is not an IPv4 address or prefix, nor "any" ({exc})'
                ) from None
        raise AssertionError(f"unknown param kind {self.kind}")

    def describe(self) -> str:
        values = (
            f"{self.minimum}..{self.maximum}"
            if self.kind == "int"
            else '"any" or 0..63'
            if self.kind == "dscp"
            else '"any" or an IPv4 prefix'
        )
        return f"{self.name} ({values}, default {self.default!r}): {self.doc}; {self.p4runtime}"


@dataclass(frozen=True)
class Program:
    name: str
    summary: str
    apps: tuple[str, ...]  # the controller apps that can drive it (see controllers/p4rt/apps.py)
    params: dict[str, Param] = field(default_factory=dict)
    make_writes: Callable[[dict], list[dict]] | None = None
    # Proactive entries from the topology, for programs the controller's own apps do not
    # drive: hosts [{"port", "mac", "ip"}] of one switch -> a runtime document
    # (runtime_json.py's format: table_entries, multicast_group_entries).
    make_entries: Callable[[list[dict]], dict] | None = None

    @property
    def file(self) -> str:
        return f"{self.name}.p4"

    def validate(self, values: dict | None) -> dict:
        """Every parameter of the program, the given ones checked, the others defaulted."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            known = ", ".join(sorted(self.params)) or "none"
            raise ParamError(
                f"program {self.name!r} has no param {unknown[0]!r} (its params: {known})"
            )
        return {
            name: p.check(values[name]) if name in values else p.default
            for name, p in self.params.items()
        }

    def writes(self, values: dict) -> list[dict]:
        """The P4Runtime writes that set `values` (validated) on a switch."""
        return self.make_writes(self.validate(values)) if self.make_writes else []


def _recirc_select(v: dict) -> dict:
    """The one entry of RecircEgress.recirc_select (both recirculation programs)."""
    match = {}
    if v["recirc_dscp"] != ANY:
        match["dscp"] = [v["recirc_dscp"], 0x3F]
    if v["recirc_dst"] != ANY:
        net = ipaddress.IPv4Network(v["recirc_dst"])
        match["dst_addr"] = [str(net.network_address), str(net.netmask)]
    return {
        "table": "RecircEgress.recirc_select",
        "match": match,
        "priority": 1,
        "action": "RecircEgress.select_packet",
        "params": {},
    }


def _recirc_writes(v: dict) -> list[dict]:
    return [
        {
            "table": "RecircEgress.recirc_config",
            "default": True,
            "action": "RecircEgress.set_passes",
            "params": {"passes": v["recirc_passes"]},
        },
        _recirc_select(v),
    ]


def _hold_writes(v: dict) -> list[dict]:
    return [
        {
            "table": "RecircEgress.hold_config",
            "default": True,
            "action": "RecircEgress.set_hold",
            "params": {"hold_us": v["recirc_hold_us"]},
        },
        _recirc_select(v),
    ]


# Our switch cuts a packet's passes at its --max-passes (default 2**24, rust/switch exec.rs
# MAX_PASSES); the params stay below it so that both switches run the same program the same
# way (BMv2 has no such limit). docs/recirculation.md: what bounds N.
MAX_RECIRC_PASSES = 2**24 - 1
MAX_HOLD_US = 5_000_000  # 5 s: 2**24 passes of 0.3 µs, our switch's fastest measured pass


def held_selection(program_name: str | None, params: dict | None) -> str | None:
    """The IPv4 destinations (a prefix, or ANY) whose packets `program_name` with `params`
    holds back on purpose (recirculation passes or a hold by time), None when it holds
    none: their added delay is the experiment, not a slow emulator (fidelity/hops.py).
    The DSCP selection is left aside: a destination some of whose packets are held counts
    as held (nothing is claimed about it rather than a wrong claim)."""
    if program_name not in ("recirc", "recirc_hold"):
        return None
    v = program(program_name).validate(params)
    holding = v["recirc_passes"] > 0 if program_name == "recirc" else v["recirc_hold_us"] > 0
    return v["recirc_dst"] if holding else None


def _selection_params() -> tuple[Param, ...]:
    return (
        Param(
            "recirc_dscp",
            "DSCP of the packets to recirculate",
            "dscp",
            ANY,
            "key dscp (ternary) of the one entry of RecircEgress.recirc_select",
        ),
        Param(
            "recirc_dst",
            "IPv4 destination of the packets to recirculate",
            "ipv4_prefix",
            ANY,
            "key dst_addr (ternary) of the one entry of RecircEgress.recirc_select",
        ),
    )


_FORWARDING_APPS = ("l2-learning", "topo-forwarding", "proactive", "runtime-json")

# -- proactive entries of the workload-complexity programs (one switch, hosts on its ports) --
ROUTER_MAC = "00:00:00:00:00:fe"  # the source MAC the routing programs rewrite to
BROADCAST = "ff:ff:ff:ff:ff:ff"
FLOOD_GROUP = 1
VLAN_ID = 10  # the access VLAN of every host port (vlan.p4)


def _entry(table: str, action: str, params: dict | None = None, match: dict | None = None) -> dict:
    e: dict[str, object] = {"table": table, "action_name": action, "action_params": params or {}}
    if match is None:
        e["default_action"] = True
    else:
        e["match"] = match
    return e


def _document(entries: list[dict], hosts: list[dict]) -> dict:
    """A runtime document: the entries and one flood group over every host port."""
    return {
        "target": "sdnperf",
        "table_entries": entries,
        "multicast_group_entries": [
            {
                "multicast_group_id": FLOOD_GROUP,
                "replicas": [{"egress_port": h["port"], "instance": 1} for h in hosts],
            }
        ],
    }


def _bridge(control: str, hosts: list[dict]) -> list[dict]:
    """include/bridge.p4: each host's MAC to its port, broadcast to the flood group (ARP
    crosses every chain this way, so the routing chains need no gateway on the hosts)."""
    t = f"{control}.bridge.dmac"
    return [
        _entry(t, f"{control}.bridge.forward", {"port": h["port"]}, {"eth_dst": h["mac"]})
        for h in hosts
    ] + [_entry(t, f"{control}.bridge.flood", {"group": FLOOD_GROUP}, {"eth_dst": BROADCAST})]


def _l2_entries(hosts: list[dict]) -> dict:
    return _document(_bridge("L2Ingress", hosts), hosts)


def _ipv4_entries(hosts: list[dict]) -> dict:
    """A /32 route per host (LPM): the switch routes every IPv4 packet (TTL, checksum, MAC
    rewrite to ROUTER_MAC -> host) while the hosts keep one subnet."""
    return _document(
        _bridge("Ipv4Ingress", hosts)
        + [
            _entry(
                "Ipv4Ingress.ipv4_lpm",
                "Ipv4Ingress.route",
                {"src_mac": ROUTER_MAC, "dst_mac": h["mac"], "port": h["port"]},
                {"dst_addr": [h["ip"], 32]},
            )
            for h in hosts
        ],
        hosts,
    )


def _vlan_entries(hosts: list[dict]) -> dict:
    """Every host port an access port of VLAN_ID: tagged on ingress, forwarded per
    (VLAN, MAC), untagged on egress."""
    return _document(
        [
            e
            for h in hosts
            for e in (
                _entry(
                    "VlanIngress.port_vlan",
                    "VlanIngress.access",
                    {"vid": VLAN_ID},
                    {"in_port": h["port"]},
                ),
                _entry("VlanEgress.egress_vlan", "VlanEgress.untag", {}, {"out_port": h["port"]}),
                _entry(
                    "VlanIngress.vlan_dmac",
                    "VlanIngress.forward",
                    {"port": h["port"]},
                    {"vid": VLAN_ID, "eth_dst": h["mac"]},
                ),
            )
        ]
        + [
            _entry(
                "VlanIngress.vlan_dmac",
                "VlanIngress.flood",
                {"group": FLOOD_GROUP},
                {"vid": VLAN_ID, "eth_dst": BROADCAST},
            )
        ],
        hosts,
    )


def _pipeline8_entries(hosts: list[dict]) -> dict:
    """Per host: a /32 LPM entry to a one-member ECMP group, its next hop (MAC, port) and
    the egress source-MAC rewrite; the other tables run their defaults."""
    return _document(
        _bridge("P8Ingress", hosts)
        + [
            e
            for i, h in enumerate(hosts, 1)
            for e in (
                _entry(
                    "P8Ingress.ipv4_lpm",
                    "P8Ingress.set_group",
                    {"group": i, "size": 1},
                    {"dst_addr": [h["ip"], 32]},
                ),
                _entry(
                    "P8Ingress.ecmp_group",
                    "P8Ingress.set_nexthop_id",
                    {"id": i},
                    {"group": i, "index": 0},
                ),
                _entry(
                    "P8Ingress.nexthop",
                    "P8Ingress.set_nexthop",
                    {"dst_mac": h["mac"], "port": h["port"]},
                    {"id": i},
                ),
                _entry(
                    "P8Egress.smac_rewrite",
                    "P8Egress.set_smac",
                    {"mac": ROUTER_MAC},
                    {"out_port": h["port"]},
                ),
            )
        ],
        hosts,
    )


_CHAIN_APPS = ("proactive", "runtime-json")

PROGRAMS: dict[str, Program] = {
    p.name: p
    for p in (
        Program(
            "l2l3",
            "L2/L3 fabric: learning, topology and proactive forwarding, LPM routing "
            "for runtime files",
            _FORWARDING_APPS,
        ),
        Program(
            "recirc",
            "l2l3's forwarding; selected IPv4 packets recirculated N times before they "
            "leave (delay control by recirculation)",
            _FORWARDING_APPS,
            params={
                p.name: p
                for p in (
                    Param(
                        "recirc_passes",
                        "times a selected packet goes round the pipeline again",
                        "int",
                        0,
                        "default action of table RecircEgress.recirc_config: "
                        "RecircEgress.set_passes(passes)",
                        minimum=0,
                        maximum=MAX_RECIRC_PASSES,
                    ),
                    *_selection_params(),
                )
            },
            make_writes=_recirc_writes,
        ),
        Program(
            "recirc_hold",
            "l2l3's forwarding; selected IPv4 packets recirculated until their time in "
            "the switch reaches a hold time (delay control by recirculation, held by time)",
            _FORWARDING_APPS,
            params={
                p.name: p
                for p in (
                    Param(
                        "recirc_hold_us",
                        "µs a selected packet stays in the switch (it leaves on the first "
                        "pass that finds them reached)",
                        "int",
                        0,
                        "default action of table RecircEgress.hold_config: "
                        "RecircEgress.set_hold(hold_us)",
                        minimum=0,
                        maximum=MAX_HOLD_US,
                    ),
                    *_selection_params(),
                )
            },
            make_writes=_hold_writes,
        ),
        # Workload complexity (seed 001): runtime files, or proactive entries built from the
        # topology (one switch) by make_entries.
        Program(
            "l2",
            "L2 bridging: one exact table on the destination MAC",
            _CHAIN_APPS,
            make_entries=_l2_entries,
        ),
        Program(
            "ipv4",
            "IPv4 routing: checksum check, TTL, LPM, MAC rewrite, checksum update",
            _CHAIN_APPS,
            make_entries=_ipv4_entries,
        ),
        Program(
            "vlan",
            "802.1Q: tag on access ports, forward per (VLAN, MAC), untag toward access ports",
            _CHAIN_APPS,
            make_entries=_vlan_entries,
        ),
        Program(
            "pipeline8",
            "eight tables per IPv4 packet: port class, ACL, LPM, ECMP hash, "
            "next hop, flow counters, source MAC, DSCP remark",
            _CHAIN_APPS,
            make_entries=_pipeline8_entries,
        ),
    )
}


def program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise ParamError(
            f"no P4 program {name!r} ships with sdnperf (programs: {', '.join(PROGRAMS)})"
        ) from None
