"""Transit-stub "Internet" in the style of GT-ITM (Calvert, Doar, Zegura).

Transit domains form the backbone; every transit node has stub domains hanging off it; hosts
sit on stub nodes only. Inside every domain the nodes are joined by a random spanning tree
(so each domain is connected) plus extra edges, each present with `extra_edge_prob`. Transit
domains are joined by a random tree of inter-domain links. All choices come from one
random.Random(seed), in a fixed order, so the same parameters and seed give the same graph.
"""

from __future__ import annotations

import random

from pydantic import Field, model_validator

from ..builder import SpecBuilder
from ..spec import TopoSpec
from .base import Generator, Params, check_size


class TransitStubParams(Params):
    transit_domains: int = Field(1, ge=1, le=16, description="transit (backbone) domains")
    transit_nodes: int = Field(3, ge=1, le=32, description="switches per transit domain")
    stubs_per_transit: int = Field(2, ge=1, le=16, description="stub domains per transit node")
    nodes_per_stub: int = Field(2, ge=1, le=32, description="switches per stub domain")
    hosts_per_stub_node: int = Field(1, ge=1, le=16, description="hosts on every stub switch")
    extra_edge_prob: float = Field(
        0.2, ge=0.0, le=1.0, description="chance of each extra intra-domain edge"
    )

    @model_validator(mode="after")
    def _size(self):
        transit = self.transit_domains * self.transit_nodes
        stub = transit * self.stubs_per_transit * self.nodes_per_stub
        check_size(transit + stub, stub * self.hosts_per_stub_node)
        return self


def _connect_domain(b: SpecBuilder, nodes: list[str], rng: random.Random, prob: float) -> None:
    """Random spanning tree (keeps the domain connected), then extra edges with `prob`."""
    for i in range(1, len(nodes)):
        b.link(nodes[i], nodes[rng.randrange(i)])
    for i in range(len(nodes)):
        for j in range(i + 1, len(nodes)):
            # Draw for every pair, linked or not, so later draws don't depend on the tree.
            if rng.random() < prob and not b.graph.has_edge(nodes[i], nodes[j]):
                b.link(nodes[i], nodes[j])


def build_transit_stub(p: TransitStubParams, seed: int, base_dir=None) -> TopoSpec:
    rng = random.Random(seed)
    b = SpecBuilder()
    domains = []
    for d in range(1, p.transit_domains + 1):
        nodes = [b.switch(role="transit", domain=f"T{d}") for _ in range(p.transit_nodes)]
        _connect_domain(b, nodes, rng, p.extra_edge_prob)
        domains.append(nodes)
    for i in range(1, len(domains)):
        b.link(rng.choice(domains[i]), rng.choice(domains[rng.randrange(i)]))
    for d, nodes in enumerate(domains, start=1):
        for t, transit in enumerate(nodes, start=1):
            for k in range(1, p.stubs_per_transit + 1):
                domain = f"T{d}.{t}.S{k}"
                stub = [b.switch(role="stub", domain=domain) for _ in range(p.nodes_per_stub)]
                _connect_domain(b, stub, rng, p.extra_edge_prob)
                b.link(transit, rng.choice(stub))
                for switch in stub:
                    b.hosts(switch, p.hosts_per_stub_node)
    return b.spec(f"transit-stub-seed{seed}")


GENERATORS = [
    Generator(
        "transit-stub",
        TransitStubParams,
        build_transit_stub,
        "GT-ITM-style Internet: transit domains with stub domains, hosts on stubs",
    ),
]
