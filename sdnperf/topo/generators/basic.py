"""Mininet's classic shapes: single switch, linear chain, tree (same numbering as Mininet)."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..builder import SpecBuilder
from ..spec import TopoSpec
from .base import Generator, Params, check_size


class SingleParams(Params):
    hosts: int = Field(2, ge=1, le=1000, description="hosts on the one switch")


def build_single(p: SingleParams, seed: int, base_dir=None) -> TopoSpec:
    b = SpecBuilder()
    s1 = b.switch(pos=(0.0, 0.0))
    b.hosts(s1, p.hosts)
    return b.spec(f"single-{p.hosts}")


class LinearParams(Params):
    switches: int = Field(2, ge=1, le=1000, description="switches in the chain")
    hosts_per_switch: int = Field(1, ge=1, le=64, description="hosts on each switch")

    @model_validator(mode="after")
    def _size(self):
        check_size(self.switches, self.switches * self.hosts_per_switch)
        return self


def build_linear(p: LinearParams, seed: int, base_dir=None) -> TopoSpec:
    b = SpecBuilder()
    previous = None
    for i in range(p.switches):
        switch = b.switch(pos=(float(i), 0.0))
        b.hosts(switch, p.hosts_per_switch)
        if previous is not None:
            b.link(previous, switch)
        previous = switch
    return b.spec(f"linear-{p.switches}x{p.hosts_per_switch}")


class TreeParams(Params):
    depth: int = Field(2, ge=1, le=10, description="switch levels")
    fanout: int = Field(2, ge=1, le=32, description="children of every switch")

    @model_validator(mode="after")
    def _size(self):
        switches = sum(self.fanout**level for level in range(self.depth))
        check_size(switches, self.fanout**self.depth)
        return self


def build_tree(p: TreeParams, seed: int, base_dir=None) -> TopoSpec:
    # Depth-first like Mininet's TreeTopo, so s1 is the root and names match `mn --topo tree`.
    b = SpecBuilder()

    def subtree(depth: int) -> str:
        if depth == 0:
            return b.host()
        node = b.switch()
        for _ in range(p.fanout):
            b.link(node, subtree(depth - 1))
        return node

    subtree(p.depth)
    return b.spec(f"tree-d{p.depth}-f{p.fanout}")


GENERATORS = [
    Generator("single", SingleParams, build_single, "one switch with `hosts` hosts"),
    Generator(
        "linear",
        LinearParams,
        build_linear,
        "a chain of `switches` switches, `hosts_per_switch` hosts on each",
    ),
    Generator(
        "tree",
        TreeParams,
        build_tree,
        "a tree of switches (`depth` levels, `fanout` children each), hosts at the leaves",
    ),
]
