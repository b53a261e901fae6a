"""The controller's apps, written against a small `Fabric` interface (packet-out, writes,
state) so that their logic is testable without switches.

- `L2Learning`: per switch, learn source MAC -> ingress port; a frame to an unknown
  destination is flooded by packet-out to the multicast group "all ports but the ingress
  one"; a known destination gets an exact entry (in_port, eth_src, eth_dst) -> forward
  in `flow_port`, and the frame is sent on by packet-out. Floods: loop-free topologies only.
- `TopoForwarding`: links found by LLDP probes (packet-out on every port, packet-in at the
  neighbour, repeated every `probe_interval`); hosts learned at edge ports; a frame to a
  known host gets (eth_src, eth_dst) -> forward entries in `flow_pair` on every switch of a
  shortest path (all written before the frame is sent on); unknown/broadcast frames are
  delivered by the controller to every edge port of every switch, never over links, so
  loops cannot make storms.
- `Proactive`: from the topology the lab gives (hosts, links), `dmac` entries along
  shortest paths and broadcast floods along a spanning tree, all written before traffic.
- `RuntimeFiles`: the entries, groups and clone sessions of `sN-runtime.json` files.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, ContextManager, Protocol

import networkx as nx

from sdnperf.controllers.flooding import FloodMemory
from sdnperf.controllers.p4rt.topology import (
    Topology,
    lldp_probe,
    parse_lldp_probe,
    path_hops,
    proactive_plan,
)

if TYPE_CHECKING:
    # lazy: pulls in finsy and google.protobuf, wanted only for the annotation
    from sdnperf.controllers.p4rt.schema import Schema

log = logging.getLogger("sdnperf.p4rt")
_INSERT, _MODIFY = 1, 2  # p4.v1.Update.Type (checked against the protos in the tests)
ETH_LLDP = b"\x88\xcc"


class FabricState(Protocol):
    """The counters apps keep (controller.StateFile, and fakes in tests)."""

    links: set[tuple]
    packet_ins: int
    flow_mods: int

    @property
    def lock(self) -> ContextManager:  # held by apps that count from the switches' threads
        ...

    def touch(self, force: bool = False) -> None: ...


class Fabric:
    """What apps may do (implemented by controller.Controller, and by fakes in tests)."""

    topology: Topology
    state: FabricState
    schema: Schema | None  # None: a runtime-json controller given no runtime files

    def entry_schema(self) -> Schema:
        """The schema the apps write entries with (every app but runtime-json has one)."""
        if self.schema is None:
            raise ValueError("no P4Info: this app writes entries and needs the controller's p4info")
        return self.schema

    async def packet_out(self, device: int, payload: bytes, port: int = 0, group: int = 0) -> None:
        raise NotImplementedError

    async def write(self, device: int, updates: list, wait: bool = True) -> None:
        raise NotImplementedError


def _entry_update(
    fabric, key_table: dict, device: int, table: str, match: dict, action: str, params: dict
):
    """INSERT the first time a key is written on a device, MODIFY afterwards."""
    # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
    from sdnperf.controllers.p4rt.client import update

    key = (device, table, tuple(sorted(match.items())))
    kind = "MODIFY" if key in key_table else "INSERT"
    if key_table.get(key) == (action, tuple(sorted(params.items()))):
        return None  # already there, same action
    key_table[key] = (action, tuple(sorted(params.items())))
    return update(kind, fabric.entry_schema().table_entry(table, match, action, params))


class App:
    name = "app"

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.written: dict = {}

    async def switch_ready(self, device: int) -> None:
        """After the pipeline is set on a switch."""

    async def start(self) -> None:
        """After every switch is connected and ready."""

    def ready(self) -> bool:
        return True

    async def packet_in(self, device: int, in_port: int, payload: bytes) -> None:
        pass

    async def tick(self) -> None:
        """Called every second."""


class L2Learning(App):
    name = "l2-learning"

    def __init__(self, fabric):
        super().__init__(fabric)
        self.port_of: dict[int, dict[bytes, int]] = {}
        self.flows: dict[tuple, int] = {}  # (device, in_port, src, dst) -> port written
        self._build = None

    def flow_update(self, device: int, in_port: int, src: bytes, dst: bytes, out_port: int):
        """The flow_port Update for this pair: INSERT the first time, MODIFY when the port
        changed, None when the switch has it already (one write per new pair, not per packet)."""
        key = (device, in_port, src, dst)
        prev = self.flows.get(key)
        if prev == out_port:
            return None
        self.flows[key] = out_port
        if self._build is None:
            self._build = self.fabric.entry_schema().exact_entry_builder(
                "flow_port", ("in_port", "eth_src", "eth_dst"), "forward", ("port",)
            )
        return self._build(
            _MODIFY if prev is not None else _INSERT, (in_port, src, dst), (out_port,)
        )

    async def switch_ready(self, device: int) -> None:
        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.client import update

        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.schema import multicast_group

        ports = self.fabric.topology.ports.get(device, [])
        # group p = every port but p: the flood of a frame that came in on p
        await self.fabric.write(
            device,
            [update("INSERT", multicast_group(p, [q for q in ports if q != p])) for p in ports],
        )

    def _learn(self, device: int, in_port: int, payload: bytes):
        """Learn the frame's source port; (port to send it to, None = flood; the flow_port
        Update to write or None), or None for frames the app ignores (runts, LLDP)."""
        if len(payload) < 14 or payload[12:14] == ETH_LLDP:
            return None
        dst, src = payload[0:6], payload[6:12]
        table = self.port_of.setdefault(device, {})
        table[src] = in_port
        out_port = table.get(dst) if not dst[0] & 1 else None
        if out_port is None:
            return None, None
        return out_port, self.flow_update(device, in_port, src, dst, out_port)

    def packet_in_sync(self, device: int, in_port: int, payload: bytes, out) -> None:
        """The same decision without awaiting, for the connection's reader thread:
        out.packet_out(payload, port=, group=) and out.write(updates) queue without waiting.
        Per-switch tables are only touched by that switch's thread; counters under a lock."""
        decision = self._learn(device, in_port, payload)
        if decision is None:
            return
        out_port, upd = decision
        with self.fabric.state.lock:
            self.fabric.state.packet_ins += 1
            self.fabric.state.flow_mods += upd is not None
        if upd is not None:
            out.write([upd])
        if out_port is None:
            out.packet_out(payload, group=in_port)
        else:
            out.packet_out(payload, port=out_port)

    async def packet_in(self, device: int, in_port: int, payload: bytes) -> None:
        decision = self._learn(device, in_port, payload)
        if decision is None:
            return
        out_port, upd = decision
        self.fabric.state.packet_ins += 1
        if out_port is None:
            await self.fabric.packet_out(device, payload, group=in_port)
            return
        if upd is not None:
            self.fabric.state.flow_mods += 1
            await self.fabric.write(device, [upd], wait=False)
        await self.fabric.packet_out(device, payload, port=out_port)


class TopoForwarding(App):
    name = "topo-forwarding"

    def __init__(self, fabric, probe_interval: float = 1.0):
        super().__init__(fabric)
        self.graph = nx.Graph()
        self.link_ports: set[tuple[int, int]] = set()
        self.links: set[tuple[int, int, int, int]] = set()
        self.hosts: dict[bytes, tuple[int, int]] = {}
        self.floods = FloodMemory()
        self.probe_interval = probe_interval
        self._last_probe = 0.0
        self.started = False

    async def start(self) -> None:
        self.graph.add_nodes_from(self.fabric.topology.ports)
        self.started = True
        await self.probe()

    async def tick(self) -> None:
        if self.started and time.monotonic() - self._last_probe >= self.probe_interval:
            await self.probe()

    async def probe(self) -> None:
        self._last_probe = time.monotonic()
        for device, ports in self.fabric.topology.ports.items():
            for port in ports:
                await self.fabric.packet_out(device, lldp_probe(device, port), port=port)

    def add_link(self, a: int, pa: int, b: int, pb: int) -> bool:
        """A probe sent on a:pa arrived at b:pb. True when the link is new."""
        if (a, pa, b, pb) in self.links:
            return False
        self.links.add((a, pa, b, pb))
        self.graph.add_edge(a, b, port={a: pa, b: pb})
        self.link_ports |= {(a, pa), (b, pb)}
        # A host "seen" on what turned out to be a link port was a flooded copy: forget it.
        self.hosts = {m: loc for m, loc in self.hosts.items() if loc not in self.link_ports}
        self.fabric.state.links.add((a, pa, b, pb))
        self.fabric.state.touch(force=True)
        return True

    async def packet_in(self, device: int, in_port: int, payload: bytes) -> None:
        if len(payload) < 14:
            return
        if payload[12:14] == ETH_LLDP:
            origin = parse_lldp_probe(payload)
            if origin is not None:
                self.add_link(origin[0], origin[1], device, in_port)
            return
        self.fabric.state.packet_ins += 1
        dst, src = payload[0:6], payload[6:12]
        here = (device, in_port)
        if here not in self.link_ports:
            self.hosts[src] = here
        destination = self.hosts.get(dst) if not dst[0] & 1 else None
        hops = (
            path_hops(self.graph, device, destination[0], destination[1]) if destination else None
        )
        if hops is None:
            if here not in self.link_ports:
                await self.flood_at_edges(payload, here)
            return
        await self.install_path(hops, src, dst)
        await self.fabric.packet_out(device, payload, port=hops[0][1])

    async def install_path(self, hops, src: bytes, dst: bytes) -> None:
        """(eth_src, eth_dst) -> forward on every switch of the path, all acknowledged."""
        import asyncio

        pending = []
        for device, out_port in reversed(hops):
            upd = _entry_update(
                self.fabric,
                self.written,
                device,
                "flow_pair",
                {"eth_src": src, "eth_dst": dst},
                "forward",
                {"port": out_port},
            )
            if upd is not None:
                self.fabric.state.flow_mods += 1
                pending.append(self.fabric.write(device, [upd], wait=True))
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for r in results:
                if isinstance(r, Exception):
                    log.warning("path entry: %s", r)

    async def flood_at_edges(self, payload: bytes, origin: tuple[int, int]) -> None:
        if not self.floods.first_time(payload):
            return
        for device, ports in self.fabric.topology.ports.items():
            for port in ports:
                if (device, port) not in self.link_ports and (device, port) != origin:
                    await self.fabric.packet_out(device, payload, port=port)


class Proactive(App):
    name = "proactive"

    def __init__(self, fabric):
        super().__init__(fabric)
        self.done: set[int] = set()

    def updates_for(self, plan: dict, device: int) -> list:
        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.client import update

        # lazy: pulls in finsy, google.protobuf, grpc, wanted only here
        from sdnperf.controllers.p4rt.schema import multicast_group

        schema = self.fabric.entry_schema()
        out = [
            update("INSERT", multicast_group(gid, members))
            for dev, gid, members in plan["groups"]
            if dev == device
        ]
        for dev, in_port, gid in plan["flood"]:
            if dev == device:
                action, params = ("flood", {"group": gid}) if gid is not None else ("drop", {})
                out.append(
                    update(
                        "INSERT",
                        schema.table_entry("flood_table", {"in_port": in_port}, action, params),
                    )
                )
        for dev, mac, port in plan["dmac"]:
            if dev == device:
                out.append(
                    update(
                        "INSERT",
                        schema.table_entry("dmac", {"eth_dst": mac}, "forward", {"port": port}),
                    )
                )
        return out

    async def switch_ready(self, device: int) -> None:
        updates = self.updates_for(proactive_plan(self.fabric.topology), device)
        await self.fabric.write(device, updates)
        self.fabric.state.flow_mods += len(updates)
        self.done.add(device)

    def ready(self) -> bool:
        return self.done >= set(self.fabric.topology.ports)

    async def packet_in(self, device: int, in_port: int, payload: bytes) -> None:
        if payload[12:14] != ETH_LLDP:
            self.fabric.state.packet_ins += 1  # proactive: should not happen; counted


class RuntimeFiles(App):
    """Writes each switch's runtime file (the pipeline was pushed from it already)."""

    name = "runtime-json"

    def __init__(self, fabric, files: dict):
        super().__init__(fabric)
        self.files = files  # device -> (RuntimeFile, Schema)
        self.done: set[int] = set()

    async def switch_ready(self, device: int) -> None:
        rf, schema = self.files[device]
        updates = rf.build_updates(schema)
        await self.fabric.write(device, updates)
        self.fabric.state.flow_mods += len(updates)
        self.done.add(device)

    def ready(self) -> bool:
        return self.done >= set(self.files)

    async def packet_in(self, device: int, in_port: int, payload: bytes) -> None:
        self.fabric.state.packet_ins += 1
