"""OpenFlow 1.3 flows equivalent to the workload-complexity P4 programs (sdnperf/p4/*.p4).

Pure functions: the hosts of one switch ([{"port", "mac", "ip"}], the same topology-derived
list the P4 programs' proactive entries are built from, p4/catalog.py) -> a FlowSet of
`ovs-ofctl add-groups` / `add-flows` lines. The ovs-flows architecture (arch/ovs.py) feeds
them to ovs-ofctl on stdin; no shell is involved.

    flows_for("pipeline8", [{"port": 1, "mac": "00:..:01", "ip": "10.0.0.1"}, ...])

The tables mirror the P4 programs' tables one to one where OpenFlow can:
  l2         0 bridge: eth_dst -> output; broadcast -> flood group (type all)
  ipv4       0 IPv4 -> table 1, else bridge; 1 LPM (priority = prefix length): set source and
             destination MAC, dec_ttl (the switch updates the checksum), output
  vlan       0 port_vlan: push the access VLAN; 1 vlan_dmac: (VLAN, MAC) -> out port in xreg0,
             broadcast -> flood group whose buckets untag; 2 egress_vlan: untag, output
  pipeline8  0 port class (xreg1), else bridge; 1 ACL (permit by default); 2 LPM -> ECMP group
             id (xreg2); 3 ECMP: the select group hashes the flow to a next-hop id (xreg3), then
             resubmits to 4 (a bucket cannot goto_table); 4 next hop: destination MAC, dec_ttl,
             out port (xreg0); 5 flow counters (the flows' own counters); 6 source MAC per out
             port; 7 DSCP remark (none by default, like dscp_remark's NoAction), output xreg0
Metadata between tables lives in OVS's 64-bit xreg registers, the ones OpenFlow 1.3 flows
can match (ONF extension; the 32-bit reg0..15 are NXM only). A flow whose actions need a
header says so in its match (OpenFlow's prerequisites: pop_vlan a VLAN, dec_ttl IPv4). OVS does not check the IPv4
header checksum on input (the P4 programs drop bad ones).
"""

from __future__ import annotations

from dataclasses import dataclass

from sdnperf.p4.catalog import BROADCAST, FLOOD_GROUP, ROUTER_MAC, VLAN_ID

PROTOCOLS = "OpenFlow13"
OFPVID_PRESENT = 0x1000  # OpenFlow 1.3 vlan_vid: a tagged frame's VID | 0x1000
BRIDGE_PRIORITY, IPV4_PRIORITY, LPM_BASE_PRIORITY = 10, 100, 1000


@dataclass(frozen=True)
class FlowSet:
    groups: list[str]  # ovs-ofctl add-groups lines (before the flows that use them)
    flows: list[str]  # ovs-ofctl add-flows lines
    tables: int  # how many tables the chain uses (0..tables-1 each hold a flow)


def _bridge(hosts: list[dict], table: int = 0) -> list[str]:
    """include/bridge.p4: each host's MAC to its port, broadcast to the flood group."""
    return [
        f"table={table},priority={BRIDGE_PRIORITY},dl_dst={h['mac']},actions=output:{h['port']}"
        for h in hosts
    ] + [f"table={table},priority={BRIDGE_PRIORITY},dl_dst={BROADCAST},actions=group:{FLOOD_GROUP}"]


def _flood_group(hosts: list[dict], untag: bool = False) -> str:
    """One bucket per host port, as the P4 flood multicast group; OpenFlow never sends a
    packet back out of its ingress port (the P4 programs' NoEcho)."""
    pop = "pop_vlan," if untag else ""
    buckets = ",".join(f"bucket=actions={pop}output:{h['port']}" for h in hosts)
    return f"group_id={FLOOD_GROUP},type=all,{buckets}"


def _lpm_priority(prefix_len: int) -> int:
    """Longest prefix first: OpenFlow tables match by priority, not by prefix length."""
    return LPM_BASE_PRIORITY + prefix_len


def _l2(hosts: list[dict]) -> FlowSet:
    return FlowSet([_flood_group(hosts)], _bridge(hosts), tables=1)


def _ipv4(hosts: list[dict]) -> FlowSet:
    flows = [f"table=0,priority={IPV4_PRIORITY},ip,actions=goto_table:1", *_bridge(hosts)]
    flows += [
        f"table=1,priority={_lpm_priority(32)},ip,nw_dst={h['ip']}/32,"
        f"actions=set_field:{ROUTER_MAC}->eth_src,set_field:{h['mac']}->eth_dst,dec_ttl,"
        f"output:{h['port']}"
        for h in hosts
    ]
    return FlowSet([_flood_group(hosts)], flows, tables=2)


def _vlan(hosts: list[dict]) -> FlowSet:
    vid = OFPVID_PRESENT | VLAN_ID
    flows = [
        f"table=0,priority={BRIDGE_PRIORITY},in_port={h['port']},vlan_tci=0x0000/0x1fff,"
        f"actions=push_vlan:0x8100,set_field:{vid}->vlan_vid,goto_table:1"
        for h in hosts
    ]
    flows += [
        f"table=1,priority={BRIDGE_PRIORITY},dl_vlan={VLAN_ID},dl_dst={h['mac']},"
        f"actions=set_field:{h['port']}->xreg0,goto_table:2"
        for h in hosts
    ]
    flows.append(
        f"table=1,priority={BRIDGE_PRIORITY},dl_vlan={VLAN_ID},dl_dst={BROADCAST},"
        f"actions=group:{FLOOD_GROUP}"
    )
    flows += [
        f"table=2,priority={BRIDGE_PRIORITY},dl_vlan={VLAN_ID},xreg0={h['port']},actions=pop_vlan,output:{h['port']}"
        for h in hosts
    ]
    return FlowSet([_flood_group(hosts, untag=True)], flows, tables=3)


def _pipeline8(hosts: list[dict]) -> FlowSet:
    groups = [_flood_group(hosts)]
    flows = [
        # 0 port class (P4 default class 0 on every port); non-IPv4 frames are bridged
        *(
            f"table=0,priority={IPV4_PRIORITY},ip,in_port={h['port']},"
            "actions=set_field:0->xreg1,goto_table:1"
            for h in hosts
        ),
        *_bridge(hosts),
        # 1 ACL: no deny entries, permit (P4 default action)
        "table=1,priority=0,actions=goto_table:2",
    ]
    for i, h in enumerate(hosts, 1):
        # 2 LPM -> ECMP group; 3 the group; 4 its one next hop; 6 source MAC of the out port
        flows.append(
            f"table=2,priority={_lpm_priority(32)},ip,nw_dst={h['ip']}/32,"
            f"actions=set_field:{i}->xreg2,goto_table:3"
        )
        flows.append(
            f"table=3,priority={BRIDGE_PRIORITY},xreg2={i},actions=group:{FLOOD_GROUP + i}"
        )
        groups.append(
            f"group_id={FLOOD_GROUP + i},type=select,bucket=actions=set_field:{i}->xreg3,resubmit(,4)"
        )
        flows.append(
            f"table=4,priority={BRIDGE_PRIORITY},ip,xreg3={i},"
            f"actions=set_field:{h['mac']}->eth_dst,dec_ttl,set_field:{h['port']}->xreg0,"
            "goto_table:5"
        )
        flows.append(
            f"table=6,priority={BRIDGE_PRIORITY},xreg0={h['port']},"
            f"actions=set_field:{ROUTER_MAC}->eth_src,goto_table:7"
        )
    flows += [
        "table=5,priority=0,actions=goto_table:6",  # flow counters: every flow counts packets
        "table=7,priority=0,actions=output:xreg0[0..31]",  # DSCP remark: none, out
    ]
    return FlowSet(groups, flows, tables=8)


BUILDERS = {"l2": _l2, "ipv4": _ipv4, "vlan": _vlan, "pipeline8": _pipeline8}


def flows_for(program: str, hosts: list[dict]) -> FlowSet:
    """The flows equivalent to P4 program `program` for the hosts on one switch."""
    return BUILDERS[program](sorted(hosts, key=lambda h: h["port"]))
