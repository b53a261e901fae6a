"""SpecBuilder: adds switches and hosts with Mininet-style sequential names (s1.., h1..)."""

from __future__ import annotations

import networkx as nx

from .spec import HOST, LINK_ATTRS, SWITCH, TopoSpec


class SpecBuilder:
    def __init__(self) -> None:
        self.graph = nx.Graph()
        self._next = {HOST: 1, SWITCH: 1}

    def _add(self, kind: str, attrs: dict) -> str:
        name = f"{'h' if kind == HOST else 's'}{self._next[kind]}"
        self._next[kind] += 1
        self.graph.add_node(name, kind=kind, **attrs)
        return name

    def switch(self, **attrs) -> str:
        return self._add(SWITCH, attrs)

    def host(self, switch: str | None = None, **attrs) -> str:
        """Add a host, linked to `switch` when given."""
        name = self._add(HOST, attrs)
        if switch is not None:
            self.link(name, switch)
        return name

    def hosts(self, switch: str, count: int) -> list[str]:
        return [self.host(switch) for _ in range(count)]

    def link(self, a: str, b: str, **attrs) -> None:
        data = {attr: None for attr in LINK_ATTRS}
        data.update(attrs)
        self.graph.add_edge(a, b, **data)

    def spec(self, name: str) -> TopoSpec:
        return TopoSpec(name=name, graph=self.graph)
