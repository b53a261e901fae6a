"""TOPOLOGIES (kind -> Generator) and build_topology: how the rest of sdnperf gets a topology."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .generators import basic, campus, custom, fabric, graphml, transit_stub
from .generators.base import Generator
from .spec import CORE, EDGE, TopologyError, TopoSpec

TOPOLOGIES: dict[str, Generator] = {
    g.kind: g
    for module in (basic, campus, fabric, transit_stub, graphml, custom)
    for g in module.GENERATORS
}


def generator(kind: str) -> Generator:
    try:
        return TOPOLOGIES[kind]
    except KeyError:
        raise TopologyError(
            f"unknown topology kind {kind!r}; valid kinds: " + ", ".join(TOPOLOGIES), field="kind"
        ) from None


def build_topology(
    kind: str, params: dict[str, Any], seed: int, base_dir: Path | None = None
) -> TopoSpec:
    """Build a topology of `kind` from its study-file parameters (without `kind`/`link`).

    Raises TopologyError (field "kind") for an unknown kind, pydantic.ValidationError for bad parameters
    (locations are parameter names) and TopologyError (a ValueError) when the topology
    cannot be built, e.g. a missing GraphML file; messages name the file.
    """
    gen = generator(kind)
    validated = gen.params_model.model_validate(dict(params or {}))
    spec = gen.build(validated, seed, base_dir)
    spec.validate()
    return spec


def topology_from_table(table: dict[str, Any], seed: int, base_dir: Path | None = None) -> TopoSpec:
    """Build from a whole [topology] table: `kind`, its parameters and optional `link` defaults."""
    params = dict(table)
    kind = params.pop("kind", None)
    if kind is None:
        raise ValueError("topology: `kind` is missing; valid kinds: " + ", ".join(TOPOLOGIES))
    settings = {key: params.pop(key, None) or {} for key in ("link", "core_link", "edge_link")}
    return with_link_settings(build_topology(kind, params, seed, base_dir), **settings)


def with_link_settings(
    spec: TopoSpec,
    link: dict | None = None,
    core_link: dict | None = None,
    edge_link: dict | None = None,
) -> TopoSpec:
    """Apply a topology table's link settings: a generator's own per-link values first,
    then the tier's (`core_link`: switch to switch, `edge_link`: a host's link), then `link`
    for every link still unset."""
    for tier, values in ((CORE, core_link), (EDGE, edge_link)):
        if values:
            spec = spec.with_tier_defaults(
                tier,
                values.get("bw"),
                values.get("delay_ms"),
                values.get("loss_pct"),
                values.get("serialise"),
            )
    if link:
        spec = spec.with_link_defaults(
            link.get("bw"),
            link.get("delay_ms"),
            link.get("loss_pct"),
            link.get("mtu"),
            link.get("serialise"),
        )
    return spec
