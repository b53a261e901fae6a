"""`router`: the kernel's IPv4 routing — the switch node is a Linux router namespace.

The hosts keep the topology's addressing (one subnet, no gateway), so every workload runs
unchanged: the router answers their ARP for each other on its ports (proxy ARP, no reply
delay) and routes each host by a /32 route out of its port, with a permanent neighbour
entry for the host's MAC — the same state the P4 `ipv4` program gets from the topology
(p4/catalog.py: a /32 LPM entry per host, MAC rewrite, out port). Re-addressing the hosts
per port with default gateways would also route, but the workloads' addresses and the
other chains' results would then differ. TTL decrement and checksum are the kernel's.
"""

from __future__ import annotations

import re
import shlex

from mininet.node import Switch

from sdnperf.arch.base import Architecture, ArchitectureError, attached_hosts, wait_until
from sdnperf.topo.spec import TopoSpec


def router_commands(ports: list[str], hosts: list[dict]) -> list[list[str]]:
    """argv lists that turn a namespace with these interfaces into the router of `hosts`
    ([{"ip", "mac", "intf"}]: each host's address, MAC and the router port it is on)."""
    cmds = [["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]]
    for port in ports:
        conf = f"net.ipv4.conf.{port}"
        cmds += [
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
    return cmds


class LinuxRouter(Switch):
    """A Mininet switch node in its own network namespace, forwarding by IPv4 routes."""

    def __init__(self, name, **kwargs):
        kwargs["inNamespace"] = True  # its routing table and sysctls are its own
        super().__init__(name, **kwargs)

    def ports_named(self) -> list[str]:
        return [i.name for i in self.intfList() if i.name != "lo"]

    def configure(self, hosts: list[dict]) -> None:
        """Make this node the router of `hosts` (attached_hosts of the net, this switch's)."""
        by_port = {self.ports[i]: i.name for i in self.intfList() if i.name != "lo"}
        mine = [{**h, "intf": by_port[h["port"]]} for h in hosts if h["switch"] == self.name]
        for argv in router_commands(self.ports_named(), mine):
            out = self.cmd(shlex.join(argv) + " 2>&1; echo rc=$?")
            if not out.rstrip().endswith("rc=0"):
                raise ArchitectureError(f"router {self.name}: {' '.join(argv)} failed: {out}")

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
        switches = spec.switches()
        if len(switches) != 1:
            raise ArchitectureError(
                f"architecture {config.name!r}: the kernel router routes the hosts on its own "
                f"ports (one router, /32 routes); topology {spec.name!r} has {len(switches)} "
                "switches"
            )
        return {}

    def mininet_options(self) -> dict:
        return {"switch": LinuxRouter, "controller": None}

    def network_started(self, net) -> None:
        hosts = attached_hosts(net)
        for sw in net.switches:
            sw.configure(hosts)

    def wait_ready(self, net, timeout: float) -> None:
        wait_until(
            lambda: all(sw.ports_up() for sw in net.switches),
            timeout,
            "router ports to come up",
            interval=0.05,
        )

    def facts(self) -> dict:
        return {"architecture": "router", "forwarding": "Linux IPv4 routing (proxy ARP, /32)"}
