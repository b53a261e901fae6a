"""TopoSpec: the topology contract between generators, `topo show` and the emulation.

A topology is a plain networkx graph. Nodes carry `kind` ("host" | "switch") and may carry
`pos` (x, y), `label` (a human name, e.g. a city) and `opts` (extra Mininet node options from
a user's Topo). Edges carry `bw` (Mbit/s), `delay_ms`, `loss_pct` (None when unset) and may
carry `ports` ({node: port number}) and `opts` (extra Mininet link options).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import networkx as nx

HOST = "host"
SWITCH = "switch"
LINK_ATTRS = ("bw", "delay_ms", "loss_pct", "mtu", "serialise")
MTU_MIN, MTU_MAX = 68, 65535  # IPv4's minimum; a veth's maximum
# Link tiers for per-tier settings ([topology.core_link] / [topology.edge_link]).
CORE = "core"  # switch to switch
EDGE = "edge"  # a host's access link

# Mininet derives a switch's dpid from the digits of its name, so names must be a prefix
# plus a unique number; no leading zeros so that "s1" and "s01" cannot both exist.
NAME_PATTERNS = {
    HOST: re.compile(r"^h([1-9][0-9]*)$"),
    SWITCH: re.compile(r"^s([1-9][0-9]*)$"),
}


class TopologyError(ValueError):
    """A topology cannot be built or is malformed; the message says where and why.

    `field` names the [topology] key at fault when there is one ("file", "class", "args"),
    so a study loader can point at its line.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def natural_key(name: str) -> tuple:
    """Sort key that orders embedded numbers by value: h2 before h10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part
    )


def fits_scheme(name: str, kind: str) -> bool:
    return bool(NAME_PATTERNS[kind].match(name))


@dataclass(frozen=True)
class Link:
    """One link, oriented host-first (as Mininet's addLink(host, switch)), else by name."""

    node1: str
    node2: str
    bw: float | None = None
    delay_ms: float | None = None
    loss_pct: float | None = None
    port1: int | None = None
    port2: int | None = None
    mtu: int | None = None  # bytes, both ends (None: the kernel's 1500)
    # hold every packet for its transmission time at `bw` (netem's `rate`), not only a
    # backlog: a lone packet on an idle link pays size x 8 / bw too
    serialise: bool | None = None


@dataclass
class TopoSpec:
    name: str
    graph: nx.Graph
    # our node name -> the name it had in its source (GraphML label, a user's Topo node name)
    name_map: dict[str, str] = field(default_factory=dict)
    # facts the user should know about how the topology was derived (shown by `topo show`)
    notes: list[str] = field(default_factory=list)
    # links whose settings change during a run: sdnperf.links.schedule.LinkPlan objects
    # (each has needs_netem() and shapes()); the topology only carries them
    schedules: list = field(default_factory=list)

    def __post_init__(self) -> None:
        # Every edge has all three link attributes, so readers never need .get().
        for _, _, data in self.graph.edges(data=True):
            for attr in LINK_ATTRS:
                data.setdefault(attr, None)

    # --- queries -------------------------------------------------------------------------
    def _nodes_of(self, kind: str) -> list[str]:
        return sorted((n for n, k in self.graph.nodes(data="kind") if k == kind), key=natural_key)

    def hosts(self) -> list[str]:
        return self._nodes_of(HOST)

    def switches(self) -> list[str]:
        return self._nodes_of(SWITCH)

    def is_host(self, node: str) -> bool:
        return self.graph.nodes[node].get("kind") == HOST

    def host_switches(self, host: str) -> list[str]:
        """The switches a host is attached to (usually exactly one)."""
        return sorted((n for n in self.graph[host] if not self.is_host(n)), key=natural_key)

    def links(self) -> list[Link]:
        """All links in a stable order (by their oriented endpoint names)."""
        result = []
        for a, b, data in self.graph.edges(data=True):
            a, b = self._orient(a, b)
            ports = data.get("ports") or {}
            result.append(
                Link(
                    a,
                    b,
                    data["bw"],
                    data["delay_ms"],
                    data["loss_pct"],
                    ports.get(a),
                    ports.get(b),
                    data["mtu"],
                    data["serialise"],
                )
            )
        result.sort(key=lambda link: (natural_key(link.node1), natural_key(link.node2)))
        return result

    def _orient(self, a: str, b: str) -> tuple[str, str]:
        if self.is_host(a) != self.is_host(b):
            return (a, b) if self.is_host(a) else (b, a)
        return (a, b) if natural_key(a) <= natural_key(b) else (b, a)

    def switch_graph(self) -> nx.Graph:
        """The switches and the links between them (a copy)."""
        return self.graph.subgraph(self.switches()).copy()

    def has_loops(self) -> bool:
        """True when the switches form a cycle (bridges then need spanning tree)."""
        g = self.switch_graph()
        # A forest has exactly V - C edges; any more closes a cycle.
        return g.number_of_edges() > g.number_of_nodes() - nx.number_connected_components(g)

    def is_connected(self) -> bool:
        return self.graph.number_of_nodes() > 0 and nx.is_connected(self.graph)

    def needs_netem(self) -> bool:
        """True when some link asks for delay, loss or serialisation (which need sch_netem
        in the kernel)."""
        return (
            any((link.delay_ms or 0) > 0 or (link.loss_pct or 0) > 0 for link in self.links())
            or any(plan.needs_netem() for plan in self.schedules)
            or bool(self.serialised_links())
        )

    def serialised_links(self) -> list[Link]:
        """The links that hold every packet for its transmission time (`serialise`). An
        unshaped link (no bw) has no transmission time to hold: not one of them, so a sweep
        of bw may include "unlimited" beside serialise = true."""
        return [link for link in self.links() if link.serialise and link.bw is not None]

    def needs_htb(self) -> bool:
        """True when some link has a bandwidth limit (tc htb)."""
        return any(link.bw is not None for link in self.links()) or any(
            plan.shapes() for plan in self.schedules
        )

    def needs_tc(self) -> bool:
        """True when some link is shaped (bandwidth, delay or loss)."""
        return self.needs_netem() or self.needs_htb()

    def describe(self) -> str:
        loops = "with loops" if self.has_loops() else "no loops"
        text = (
            f"{self.name}: {count_of(len(self.switches()), 'switch')}, "
            f"{count_of(len(self.hosts()), 'host')}, "
            f"{count_of(self.graph.number_of_edges(), 'link')}, {loops}"
        )
        if self.graph.number_of_nodes() and not self.is_connected():
            text += f", {nx.number_connected_components(self.graph)} disconnected parts"
        return text

    # --- derived specs -------------------------------------------------------------------
    def copy(self) -> TopoSpec:
        return TopoSpec(
            self.name,
            copy.deepcopy(self.graph),
            dict(self.name_map),
            list(self.notes),
            list(self.schedules),
        )

    def with_link_defaults(
        self,
        bw: float | None = None,
        delay_ms: float | None = None,
        loss_pct: float | None = None,
        mtu: int | None = None,
        serialise: bool | None = None,
    ) -> TopoSpec:
        """A copy where every link attribute that is unset takes the given default."""
        spec = self.copy()
        defaults = {
            "bw": bw,
            "delay_ms": delay_ms,
            "loss_pct": loss_pct,
            "mtu": mtu,
            "serialise": serialise,
        }
        for _, _, data in spec.graph.edges(data=True):
            for attr, value in defaults.items():
                if data.get(attr) is None:
                    data[attr] = value
        spec.validate()
        return spec

    def link_tier(self, a: str, b: str) -> str:
        """ "edge" for a link with a host end (host access), "core" for switch-to-switch."""
        return EDGE if self.is_host(a) or self.is_host(b) else CORE

    def with_tier_defaults(
        self,
        tier: str,
        bw: float | None = None,
        delay_ms: float | None = None,
        loss_pct: float | None = None,
        serialise: bool | None = None,
    ) -> TopoSpec:
        """A copy where every unset attribute of the links of `tier` ("core" or "edge")
        takes the given value; links of the other tier are left alone. Applied before the
        all-links defaults, so a tier's value wins over `[topology.link]`."""
        if tier not in (CORE, EDGE):
            raise ValueError(f"unknown link tier {tier!r}; tiers: {CORE}, {EDGE}")
        spec = self.copy()
        defaults = {"bw": bw, "delay_ms": delay_ms, "loss_pct": loss_pct, "serialise": serialise}
        for a, b, data in spec.graph.edges(data=True):
            if spec.link_tier(a, b) != tier:
                continue
            for attr, value in defaults.items():
                if data.get(attr) is None:
                    data[attr] = value
        spec.validate()
        return spec

    # --- checks --------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise TopologyError when the graph breaks the contract (names, kinds, link values)."""
        where = f"topology {self.name!r}"
        if self.graph.is_directed() or self.graph.is_multigraph():
            raise TopologyError(f"{where}: graph must be a simple undirected networkx.Graph")
        for node, kind in self.graph.nodes(data="kind"):
            if kind not in NAME_PATTERNS:
                raise TopologyError(
                    f"{where}: node {node!r} has kind {kind!r}, expected 'host' or 'switch'"
                )
            if not isinstance(node, str) or not fits_scheme(node, kind):
                prefix = "h" if kind == HOST else "s"
                raise TopologyError(
                    f"{where}: {kind} {node!r} must be named {prefix}<number> "
                    f"(e.g. {prefix}1; Mininet derives ids from the number)"
                )
        for a, b, data in self.graph.edges(data=True):
            if a == b:
                raise TopologyError(f"{where}: link {a}-{b} connects a node to itself")
            _check_link_value(where, a, b, "bw", data.get("bw"), low_open=True)
            _check_link_value(where, a, b, "delay_ms", data.get("delay_ms"))
            _check_link_value(where, a, b, "loss_pct", data.get("loss_pct"), high=100)
            mtu = data.get("mtu")
            if mtu is not None and (
                isinstance(mtu, bool) or not isinstance(mtu, int) or not MTU_MIN <= mtu <= MTU_MAX
            ):
                raise TopologyError(
                    f"{where}: link {a}-{b}: mtu must be a whole number of bytes in "
                    f"{MTU_MIN}..{MTU_MAX}, got {mtu!r}"
                )
            serialise = data.get("serialise")
            if serialise is not None and not isinstance(serialise, bool):
                raise TopologyError(
                    f"{where}: link {a}-{b}: serialise must be true or false, got {serialise!r}"
                )


def _check_link_value(where, a, b, attr, value, low_open=False, high=None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TopologyError(f"{where}: link {a}-{b}: {attr} must be a number, got {value!r}")
    if value < 0 or (low_open and value == 0):
        bound = "> 0" if low_open else ">= 0"
        raise TopologyError(f"{where}: link {a}-{b}: {attr} must be {bound}, got {value}")
    if high is not None and value > high:
        raise TopologyError(f"{where}: link {a}-{b}: {attr} must be <= {high}, got {value}")


def count_of(n: int, noun: str) -> str:
    """'1 switch', '2 switches', '3 hosts'."""
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{n} {noun if n == 1 else plural}"
