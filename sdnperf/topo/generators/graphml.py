"""GraphML import (Internet Topology Zoo style): every node becomes a switch with one host.

Zoo nodes carry `label` (a city), `Latitude` and `Longitude`. With
`delay_from_coordinates = true`, a link's delay is the great-circle distance between its
ends divided by the speed of light in fibre (about 2/3 c); links with an end lacking
coordinates keep no delay, so the study's [topology.link] default applies to them.
"""

from __future__ import annotations

import math
from pathlib import Path
from xml.etree.ElementTree import ParseError

import networkx as nx
from pydantic import Field

from ..builder import SpecBuilder
from ..spec import TopologyError, TopoSpec, natural_key
from .base import MAX_SWITCHES, Generator, Params

EARTH_RADIUS_KM = 6371.0
FIBRE_KM_PER_MS = 299_792.458 * 2 / 3 / 1000  # ~199.9 km per millisecond


class GraphmlParams(Params):
    file: str = Field(min_length=1, description="GraphML file, relative to the study file")
    delay_from_coordinates: bool = Field(False, description="link delay from node coordinates")
    # Dropped by default: hosts outside the largest part could reach nobody in it.
    keep_disconnected: bool = Field(
        False, description="keep nodes outside the largest connected part"
    )


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance on a spherical Earth."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlam = phi2 - phi1, math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlam / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def propagation_delay_ms(km: float) -> float:
    return round(km / FIBRE_KM_PER_MS, 3)


def resolve_path(file: str, base_dir: Path | None) -> Path:
    path = Path(file).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    return path


def read_graph(path: Path) -> nx.Graph:
    """Read a GraphML file as a simple undirected graph; errors name the file."""
    try:
        raw = nx.read_graphml(path)
    except FileNotFoundError:
        raise TopologyError(f"{path}: GraphML file not found", field="file") from None
    except (ParseError, nx.NetworkXError, ValueError, KeyError, TypeError) as exc:
        raise TopologyError(f"{path}: not a valid GraphML file: {exc}", field="file") from None
    except OSError as exc:
        raise TopologyError(
            f"{path}: cannot read GraphML file: {exc.strerror}", field="file"
        ) from None
    # Zoo files may hold parallel or directed edges and self-loops; we model one link per pair.
    graph = nx.Graph(raw.to_undirected() if raw.is_directed() else raw)
    graph.remove_edges_from(list(nx.selfloop_edges(graph)))
    if graph.number_of_nodes() == 0:
        raise TopologyError(f"{path}: the graph has no nodes", field="file")
    return graph


def coordinates(data: dict) -> tuple[float, float] | None:
    """(lat, lon) when the node has both as finite numbers, else None."""
    try:
        lat, lon = float(data["Latitude"]), float(data["Longitude"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    return lat, lon


def _node_label(node, data: dict) -> str:
    label = data.get("label")
    return str(label) if label not in (None, "") else str(node)


def build_graphml(p: GraphmlParams, seed: int, base_dir: Path | None = None) -> TopoSpec:
    path = resolve_path(p.file, base_dir)
    graph = read_graph(path)
    notes = []
    if not p.keep_disconnected and not nx.is_connected(graph):
        parts = sorted(
            nx.connected_components(graph),
            key=lambda part: (-len(part), min(natural_key(str(n)) for n in part)),
        )
        dropped = sorted(
            (_node_label(n, graph.nodes[n]) for part in parts[1:] for n in part), key=natural_key
        )
        graph = graph.subgraph(parts[0]).copy()
        notes.append(
            f"dropped {len(dropped)} node(s) outside the largest connected part: "
            + ", ".join(dropped)
        )
    if graph.number_of_nodes() > MAX_SWITCHES:
        raise TopologyError(
            f"{path}: {graph.number_of_nodes()} nodes; at most "
            f"{MAX_SWITCHES} switches are supported",
            field="file",
        )

    b = SpecBuilder()
    switch_of, coords, name_map = {}, {}, {}
    for node in sorted(graph.nodes, key=lambda n: natural_key(str(n))):
        data = graph.nodes[node]
        where = coordinates(data)
        label = _node_label(node, data)
        attrs: dict[str, object] = {"label": label}
        if where is not None:
            attrs["pos"] = (where[1], where[0])  # (x, y) = (lon, lat)
        switch = b.switch(**attrs)
        b.host(switch)
        switch_of[node], coords[switch], name_map[switch] = switch, where, label

    missing = []
    for u, v in sorted(graph.edges, key=lambda e: sorted(natural_key(str(n)) for n in e)):
        a, z = switch_of[u], switch_of[v]
        delay = None
        if p.delay_from_coordinates:
            ca, cz = coords[a], coords[z]
            if ca is not None and cz is not None:
                delay = propagation_delay_ms(great_circle_km(*ca, *cz))
            else:
                missing.append(f"{a}-{z}")
        b.link(a, z, delay_ms=delay)

    no_coords = [name_map[s] for s, c in coords.items() if c is None]
    if no_coords:
        notes.append(f"{len(no_coords)} node(s) without coordinates: " + ", ".join(no_coords))
    if missing:
        notes.append(
            f"{len(missing)} link(s) got no delay from coordinates (an end lacks "
            f"them; the [topology.link] delay applies): " + ", ".join(missing)
        )
    spec = b.spec(path.stem)
    spec.name_map, spec.notes = name_map, notes
    return spec


GENERATORS = [
    Generator(
        "graphml",
        GraphmlParams,
        build_graphml,
        "a GraphML file (e.g. Topology Zoo): nodes become switches with one host each",
    ),
]
