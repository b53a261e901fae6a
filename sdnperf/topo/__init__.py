"""Topologies: generators -> TopoSpec (a networkx graph), Mininet adapter, `topo show`."""

from .generators.base import Generator
from .registry import TOPOLOGIES, build_topology, topology_from_table
from .spec import Link, TopologyError, TopoSpec, natural_key

__all__ = [
    "TOPOLOGIES",
    "Generator",
    "Link",
    "TopoSpec",
    "TopologyError",
    "build_topology",
    "natural_key",
    "topology_from_table",
]
