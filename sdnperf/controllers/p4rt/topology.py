"""Pure topology logic shared by the apps (no gRPC): LLDP probes, switch graph, shortest
paths with their out ports, the spanning tree and the proactive entries."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

LLDP_DST = bytes.fromhex("0180c200000e")
LLDP_ETHERTYPE = b"\x88\xcc"
PROBE_SRC = bytes.fromhex("020000000001")  # locally administered: never a host
CHASSIS_PREFIX = b"sdnperf:"


def _tlv(kind: int, value: bytes) -> bytes:
    n = len(value)
    return bytes([(kind << 1) | (n >> 8), n & 0xFF]) + value


def lldp_probe(device_id: int, port: int) -> bytes:
    """An LLDP frame naming (device id, port): chassis id and port id are locally assigned
    (subtype 7) strings, TTL 120 s."""
    return (
        LLDP_DST
        + PROBE_SRC
        + LLDP_ETHERTYPE
        + _tlv(1, b"\x07" + CHASSIS_PREFIX + str(device_id).encode())
        + _tlv(2, b"\x07" + str(port).encode())
        + _tlv(3, (120).to_bytes(2, "big"))
        + _tlv(0, b"")
    )


def parse_lldp_probe(frame: bytes) -> tuple[int, int] | None:
    """(device id, port) of one of our probes, None for any other frame."""
    if len(frame) < 14 or frame[12:14] != LLDP_ETHERTYPE:
        return None
    pos, chassis, port = 14, None, None
    while pos + 2 <= len(frame):
        kind, n = frame[pos] >> 1, ((frame[pos] & 1) << 8) | frame[pos + 1]
        value = frame[pos + 2 : pos + 2 + n]
        pos += 2 + n
        if kind == 0:
            break
        if kind == 1 and value[:1] == b"\x07" and value[1:].startswith(CHASSIS_PREFIX):
            chassis = value[1 + len(CHASSIS_PREFIX) :]
        elif kind == 2 and value[:1] == b"\x07":
            port = value[1:]
    try:
        return (int(chassis), int(port)) if chassis is not None and port is not None else None
    except ValueError:
        return None


@dataclass
class Topology:
    """Switches (device id -> ports), switch links and hosts, as the lab knows them."""

    ports: dict[int, list[int]] = field(default_factory=dict)
    links: list[tuple[int, int, int, int]] = field(default_factory=list)  # (a, a_port, b, b_port)
    hosts: list[tuple[str, int, int]] = field(default_factory=list)  # (mac, device, port)

    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(self.ports)
        for a, pa, b, pb in self.links:
            g.add_edge(a, b, port={a: pa, b: pb})
        return g

    def link_ports(self) -> set[tuple[int, int]]:
        out = set()
        for a, pa, b, pb in self.links:
            out |= {(a, pa), (b, pb)}
        return out


def path_hops(graph: nx.Graph, src: int, dst: int, dst_port: int) -> list[tuple[int, int]] | None:
    """[(device, out port)] along a shortest path from switch src to the host port dst_port
    of switch dst; None when there is no path."""
    try:
        path = nx.shortest_path(graph, src, dst)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None
    ports = [graph[a][b]["port"][a] for a, b in zip(path, path[1:])] + [dst_port]
    return list(zip(path, ports))


FLOOD_GROUP_BASE = 1000  # proactive flood groups: FLOOD_GROUP_BASE + ingress port


def proactive_plan(topo: Topology):
    """Entries that forward every host's MAC along shortest paths and flood broadcasts along
    a spanning tree (so loops are safe):
      dmac:        [(device, mac, out port)]
      flood:       [(device, in_port, group id or None = drop)]
      groups:      [(device, group id, [ports])]
    """
    g = topo.graph()
    link_ports = topo.link_ports()
    dmac = []
    for mac, hdev, hport in topo.hosts:
        for dev in topo.ports:
            hops = path_hops(g, dev, hdev, hport)
            if hops:
                dmac.append((dev, mac, hops[0][1]))
    tree_ports: set[tuple[int, int]] = set()
    for component in nx.connected_components(g):
        root = min(component)
        for a, b in nx.bfs_edges(g, root):
            ports = g[a][b]["port"]
            tree_ports |= {(a, ports[a]), (b, ports[b])}
    flood: list[tuple[int, int, int | None]] = []
    groups: list[tuple[int, int, list[int]]] = []
    for dev, ports in topo.ports.items():
        out_ports = [p for p in ports if (dev, p) not in link_ports or (dev, p) in tree_ports]
        for p in ports:
            if (dev, p) in link_ports and (dev, p) not in tree_ports:
                flood.append((dev, p, None))  # a broadcast over a non-tree link: drop it
                continue
            members = [q for q in out_ports if q != p]
            gid = FLOOD_GROUP_BASE + p
            groups.append((dev, gid, members))
            flood.append((dev, p, gid))
    return {"dmac": dmac, "flood": flood, "groups": groups}
