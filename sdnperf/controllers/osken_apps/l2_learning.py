"""Reactive L2 learning switch for OpenFlow 1.3 (the classic one).

Per switch: learn which port each source MAC sits behind; flood frames whose destination is
unknown; once the destination is known, install an exact flow (in_port, eth_src, eth_dst)
with an idle timeout so the following packets never reach the controller. It floods, so it
is only for loop-free topologies (the lab refuses it on loops).
"""

from __future__ import annotations

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ether_types, ethernet, packet

from sdnperf.controllers.osken_apps.common import (
    FLOW_PRIORITY,
    OFP_VERSIONS,
    StateFile,
    add_flow,
    install_table_miss,
    packet_out,
)


class L2Learning(app_manager.OSKenApp):
    OFP_VERSIONS = OFP_VERSIONS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.port_of: dict[int, dict[str, int]] = {}  # dpid -> mac -> port
        self.state = StateFile()

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev):
        datapath = ev.msg.datapath
        install_table_miss(datapath, self.state)
        self.port_of.setdefault(datapath.id, {})
        self.state.switches.add(datapath.id)
        self.state.touch(force=True)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_barrier_reply(self, ev):
        self.state.barrier_replied(ev.msg)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def on_packet_in(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        parser, ofp = datapath.ofproto_parser, datapath.ofproto
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ether_types.ETH_TYPE_LLDP:
            return
        self.state.packet_ins += 1
        table = self.port_of.setdefault(datapath.id, {})
        table[eth.src] = in_port
        out_port = table.get(eth.dst)
        if out_port is None:
            actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)]
        else:
            actions = [parser.OFPActionOutput(out_port)]
            match = parser.OFPMatch(in_port=in_port, eth_src=eth.src, eth_dst=eth.dst)
            add_flow(datapath, FLOW_PRIORITY, match, actions)
            self.state.flow_mods += 1
        packet_out(datapath, in_port, actions, msg=msg)
        self.state.touch()
