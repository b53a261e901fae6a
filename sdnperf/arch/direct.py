"""`direct`: no forwarding element at all — the two hosts of a one-switch topology joined
by one veth link, the baseline seed paper 001 measures its switches against ("direct
connections among source and sink laptops without the UUT", its Table 2).

The study keeps its topology (`single`, 2 hosts) so every architecture of the study runs
the same workloads; this architecture builds the network from `network_spec`: the switch
left out and the two host links merged into one that keeps the first host's link settings
(bandwidth, delay, loss, MTU), so a shaped study shapes this baseline the same way.
"""

from __future__ import annotations

import networkx as nx

from sdnperf.arch.base import Architecture, ArchitectureError
from sdnperf.topo.spec import TopoSpec


def direct_spec(spec: TopoSpec) -> TopoSpec:
    """`spec` (one switch, two hosts on it) with the switch taken out and the hosts linked."""
    (switch,) = spec.switches()
    h1, h2 = spec.hosts()
    graph = nx.Graph()
    for host in (h1, h2):
        graph.add_node(host, **spec.graph.nodes[host])
    settings = {k: v for k, v in spec.graph.edges[h1, switch].items() if k != "ports"}
    graph.add_edge(h1, h2, **settings)
    out = TopoSpec(spec.name, graph, dict(spec.name_map), list(spec.notes))
    out.validate()
    return out


class DirectArchitecture(Architecture):
    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        switches, hosts = spec.switches(), spec.hosts()
        attached = all(spec.host_switches(h) == switches for h in hosts)
        others = [n for n in spec.graph[switches[0]] if n not in hosts] if switches else []
        if len(switches) != 1 or len(hosts) != 2 or not attached or others:
            raise ArchitectureError(
                f"architecture {config.name!r}: a direct connection replaces the one switch "
                f"between two hosts by a link; topology {spec.name!r} has "
                f'{len(switches)} switch(es) and {len(hosts)} host(s) (use kind = "single", '
                "hosts = 2)"
            )
        return {}

    @classmethod
    def network_spec(cls, config, spec: TopoSpec) -> TopoSpec:
        return direct_spec(spec)

    def mininet_options(self) -> dict:
        return {"controller": None}

    def facts(self) -> dict:
        return {"architecture": "direct", "forwarding": "none: the hosts share one link"}
