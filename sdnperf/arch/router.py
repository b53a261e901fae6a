"""`router`: the kernel's IPv4 routing — the switch node is a Linux router namespace.

The hosts keep the topology's addressing (one subnet, no gateway), so every workload runs
unchanged: the router answers their ARP for each other on its ports (proxy ARP, no reply
delay) and routes each host by a /32 route out of its port, with a permanent neighbour
entry for the host's MAC — the same state the P4 `ipv4` program gets from the topology
(p4/catalog.py: a /32 LPM entry per host, MAC rewrite, out port). Re-addressing the hosts
per port with default gateways would also route, but the workloads' addresses and the
other chains' results would then differ. TTL decrement and checksum are the kernel's.

On a topology of several switches every switch is a router and the routes come from the
topology graph (`next_hops`: networkx shortest paths over the switch-to-switch links, one
path per destination router, the same on every run): a host on another router gets a /32
route out of the port towards the next router, with a permanent neighbour entry that maps
the host's address to that router's MAC on the link. No ARP or routing protocol runs
between routers; a packet is routed hop by hop (TTL falls by one per router). Reverse-path
filtering is off, since the path back may be another of equal length.
"""

from __future__ import annotations

import re
import shlex

import networkx as nx
from mininet.node import Switch

from sdnperf.arch.base import Architecture, ArchitectureError, attached_hosts, wait_until
from sdnperf.topo.spec import TopoSpec


def next_hops(spec: TopoSpec) -> dict[str, dict[str, str]]:
    """router -> {destination router: the neighbouring router to send towards it}, from
    shortest paths over the switch-to-switch links (networkx; ties broken the same way on
    every run). A destination in another connected part is missing (no route)."""
    core = spec.graph.subgraph(spec.switches())
    hops: dict[str, dict[str, str]] = {}
    for src in sorted(core.nodes):
        paths = nx.single_source_shortest_path(core, src)
        hops[src] = {dst: path[1] for dst, path in paths.items() if len(path) > 1}
    return hops


def router_commands(
    ports: list[str], hosts: list[dict], remote: list[dict] | None = None
) -> list[list[str]]:
    """argv lists that turn a namespace with these interfaces into the router of `hosts`
    ([{"ip", "mac", "intf"}]: each host's address, MAC and the router port it is on) and a
    transit router for `remote` hosts ([{"ip", "intf", "next_mac"}]: the port towards the
    next router and that router's MAC on the link)."""
    cmds = [
        ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"],
        ["sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0"],
    ]
    for port in ports:
        conf = f"net.ipv4.conf.{port}"
        cmds += [
            ["sysctl", "-q", "-w", f"{conf}.rp_filter=0"],
            ["sysctl", "-q", "-w", f"{conf}.proxy_arp=1"],
            # answer at once: a proxied reply is otherwise delayed up to 0.8 s at random
            ["sysctl", "-q", "-w", f"net.ipv4.neigh.{port}.proxy_delay=0"],
            # a host talks to another through the router, never past it: no redirects
            ["sysctl", "-q", "-w", f"{conf}.send_redirects=0"],
            ["ip", "link", "set", port, "up"],
        ]
    for h in hosts:
        cmds += [
            ["ip", "route", "replace", f"{h['ip']}/32", "dev", h["intf"]],
            ["ip", "neigh", "replace", h["ip"], "lladdr", h["mac"], "dev", h["intf"],
             "nud", "permanent"],
        ]  # fmt: skip
    for h in remote or []:
        cmds += [
            ["ip", "route", "replace", f"{h['ip']}/32", "dev", h["intf"]],
            ["ip", "neigh", "replace", h["ip"], "lladdr", h["next_mac"], "dev", h["intf"],
             "nud", "permanent"],
        ]  # fmt: skip
    return cmds


class LinuxRouter(Switch):
    """A Mininet switch node in its own network namespace, forwarding by IPv4 routes."""

    def __init__(self, name, **kwargs):
        kwargs["inNamespace"] = True  # its routing table and sysctls are its own
        super().__init__(name, **kwargs)

    def ports_named(self) -> list[str]:
        return [i.name for i in self.intfList() if i.name != "lo"]

    def configure(self, hosts: list[dict], hops: dict[str, str] | None = None) -> None:
        """Make this node the router of `hosts` (attached_hosts of the net, this switch's)
        and the transit router towards the others (`hops`: destination router -> next)."""
        by_port = {self.ports[i]: i.name for i in self.intfList() if i.name != "lo"}
        mine = [{**h, "intf": by_port[h["port"]]} for h in hosts if h["switch"] == self.name]
        towards = self._links_to_neighbours()
        hops = hops or {}
        remote = []
        for h in hosts:
            if h["switch"] == self.name or h["switch"] not in hops:
                continue
            intf, next_mac = towards[hops[h["switch"]]]
            remote.append({"ip": h["ip"], "intf": intf, "next_mac": next_mac})
        for argv in router_commands(self.ports_named(), mine, remote):
            out = self.cmd(shlex.join(argv) + " 2>&1; echo rc=$?")
            if not out.rstrip().endswith("rc=0"):
                raise ArchitectureError(f"router {self.name}: {' '.join(argv)} failed: {out}")

    def _links_to_neighbours(self) -> dict[str, tuple[str, str]]:
        """neighbouring router -> (our port to it, its MAC on that link); the first link
        where two routers have several."""
        out: dict[str, tuple[str, str]] = {}
        for intf in self.intfList():
            link = getattr(intf, "link", None)
            if intf.name == "lo" or link is None:
                continue
            peer = link.intf2 if link.intf1 is intf else link.intf1
            if isinstance(peer.node, LinuxRouter) and peer.node.name not in out:
                out[peer.node.name] = (intf.name, peer.MAC())
        return out

    def start(self, _controllers):
        pass  # configured once the network exists (RouterArchitecture.network_started)

    def ports_up(self) -> bool:
        out = self.cmd("ip -o link show")
        states = {
            m.group(1): "LOWER_UP" in m.group(2) and ",UP" in m.group(2)
            for m in re.finditer(r"^\d+: ([^:@]+)[^<]*<([^>]*)>", out, re.M)
        }
        return all(states.get(p, False) for p in self.ports_named())

    def connected(self):
        return self.ports_up()


class RouterArchitecture(Architecture):
    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        if not spec.is_connected():
            raise ArchitectureError(
                f"architecture {config.name!r}: topology {spec.name!r} has parts no route "
                "joins (the routes come from its graph)"
            )
        return {}

    def mininet_options(self) -> dict:
        return {"switch": LinuxRouter, "controller": None}

    def network_started(self, net) -> None:
        hosts = attached_hosts(net)
        hops = next_hops(self.spec)
        for sw in net.switches:
            sw.configure(hosts, hops.get(sw.name, {}))

    def wait_ready(self, net, timeout: float) -> None:
        wait_until(
            lambda: all(sw.ports_up() for sw in net.switches),
            timeout,
            "router ports to come up",
            interval=0.05,
        )

    def facts(self) -> dict:
        return {
            "architecture": "router",
            "forwarding": "Linux IPv4 routing (proxy ARP, /32; shortest-path routes "
            "from the topology between routers)",
        }
