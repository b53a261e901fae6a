"""Topology-aware reactive forwarding for OpenFlow 1.3; safe on topologies with loops.

- Links are discovered by os-ken's LLDP service (run with --observe-links).
- Hosts are learned from packet-ins on edge ports (ports that are not switch-to-switch links).
- A frame to a known host: the shortest switch path is computed and an exact flow
  (eth_src, eth_dst) is written on every switch of the path at once, last hop first, so the
  packet never meets a switch that does not know it yet; then the packet is sent on.
- A frame to an unknown or broadcast address is delivered by the controller to every edge
  port of every switch (never over switch-to-switch links), so loops cannot make storms.
"""

from __future__ import annotations

import networkx as nx
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ether_types, ethernet, packet
from os_ken.topology import event as topo_event

from sdnperf.controllers.flooding import FloodMemory
from sdnperf.controllers.osken_apps.common import (
    FLOW_PRIORITY,
    OFP_VERSIONS,
    StateFile,
    add_flow,
    install_table_miss,
    packet_out,
)

MAX_PHYSICAL_PORT = 0xFFFFFF00  # OpenFlow reserved ports (LOCAL, CONTROLLER, ...) are above


class TopoForwarding(app_manager.OSKenApp):
    OFP_VERSIONS = OFP_VERSIONS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.datapaths = {}
        self.ports: dict[int, set[int]] = {}  # dpid -> physical port numbers
        self.graph = nx.Graph()  # switch graph; edge attr "port" = {dpid: port}
        self.link_ports: set[tuple[int, int]] = set()
        self.hosts: dict[str, tuple[int, int]] = {}  # mac -> (dpid, port)
        self.floods = FloodMemory()
        self.state = StateFile()

    # -- topology ------------------------------------------------------------------------
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev):
        install_table_miss(ev.msg.datapath, self.state)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_barrier_reply(self, ev):
        self.state.barrier_replied(ev.msg)

    @set_ev_cls(topo_event.EventSwitchEnter)
    def on_switch_enter(self, ev):
        sw = ev.switch
        self.datapaths[sw.dp.id] = sw.dp
        self.ports[sw.dp.id] = {p.port_no for p in sw.ports if p.port_no < MAX_PHYSICAL_PORT}
        self.graph.add_node(sw.dp.id)
        self.state.switches.add(sw.dp.id)
        self.state.touch(force=True)

    @set_ev_cls(topo_event.EventPortAdd)
    def on_port_add(self, ev):
        port = ev.port
        if port.port_no < MAX_PHYSICAL_PORT:
            self.ports.setdefault(port.dpid, set()).add(port.port_no)

    @set_ev_cls(topo_event.EventLinkAdd)
    def on_link_add(self, ev):
        src, dst = ev.link.src, ev.link.dst
        self.graph.add_edge(src.dpid, dst.dpid, port={src.dpid: src.port_no, dst.dpid: dst.port_no})
        for end in ((src.dpid, src.port_no), (dst.dpid, dst.port_no)):
            self.link_ports.add(end)
        # A host "seen" on what turned out to be a link port was a flooded copy: forget it.
        self.hosts = {mac: loc for mac, loc in self.hosts.items() if loc not in self.link_ports}
        self.state.links.add((src.dpid, src.port_no, dst.dpid, dst.port_no))
        self.state.touch(force=True)

    @set_ev_cls(topo_event.EventLinkDelete)
    def on_link_delete(self, ev):
        src, dst = ev.link.src, ev.link.dst
        if self.graph.has_edge(src.dpid, dst.dpid):
            self.graph.remove_edge(src.dpid, dst.dpid)
        self.link_ports.discard((src.dpid, src.port_no))
        self.link_ports.discard((dst.dpid, dst.port_no))
        self.state.links.discard((src.dpid, src.port_no, dst.dpid, dst.port_no))
        self.state.touch(force=True)

    # -- forwarding ----------------------------------------------------------------------
    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def on_packet_in(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        dpid, in_port = datapath.id, msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return  # LLDP belongs to the discovery service
        self.state.packet_ins += 1
        if (dpid, in_port) not in self.link_ports:
            self.hosts[eth.src] = (dpid, in_port)
        destination = self.hosts.get(eth.dst)
        path = self._path(dpid, destination[0]) if destination else None
        if path is None or destination is None:
            if (dpid, in_port) not in self.link_ports:
                self._flood_at_edges(msg.data, origin=(dpid, in_port))
        else:
            first_hop_port = self._install_path(path, eth.src, eth.dst, destination[1])
            parser = datapath.ofproto_parser
            packet_out(datapath, in_port, [parser.OFPActionOutput(first_hop_port)], msg=msg)
        self.state.touch()

    def _path(self, src_dpid: int, dst_dpid: int) -> list[int] | None:
        try:
            return nx.shortest_path(self.graph, src_dpid, dst_dpid)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None

    def _install_path(self, path: list[int], eth_src: str, eth_dst: str, dst_port: int) -> int:
        """Write the flow on every switch of `path` (last hop first); return the first out port."""
        out_ports = [self.graph[a][b]["port"][a] for a, b in zip(path, path[1:])] + [dst_port]
        for dpid, out_port in reversed(list(zip(path, out_ports))):
            datapath = self.datapaths.get(dpid)
            if datapath is None:
                continue
            parser = datapath.ofproto_parser
            match = parser.OFPMatch(eth_src=eth_src, eth_dst=eth_dst)
            add_flow(datapath, FLOW_PRIORITY, match, [parser.OFPActionOutput(out_port)])
            self.state.flow_mods += 1
        return out_ports[0]

    def _flood_at_edges(self, data: bytes, origin: tuple[int, int]) -> None:
        if not self.floods.first_time(data):
            return
        for dpid, datapath in self.datapaths.items():
            parser, ofp = datapath.ofproto_parser, datapath.ofproto
            edge = [
                p
                for p in sorted(self.ports.get(dpid, ()))
                if (dpid, p) not in self.link_ports and (dpid, p) != origin
            ]
            if edge:
                actions = [parser.OFPActionOutput(p) for p in edge]
                packet_out(datapath, ofp.OFPP_CONTROLLER, actions, data=data)
