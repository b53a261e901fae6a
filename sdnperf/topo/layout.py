"""Node positions for drawing: a node's own `pos`, else a layout that suits the shape."""

from __future__ import annotations

import math

import networkx as nx

from .spec import TopoSpec, natural_key


def positions(spec: TopoSpec) -> dict[str, tuple[float, float]]:
    switches = spec.switches()
    given = {
        n: tuple(spec.graph.nodes[n]["pos"])
        for n in switches
        if spec.graph.nodes[n].get("pos") is not None
    }
    if switches and len(given) == len(switches):
        pos = given
    else:
        pos = _switch_layout(spec, switches)
    return {**pos, **_host_positions(spec, pos)}


def _switch_layout(spec: TopoSpec, switches: list[str]) -> dict:
    g = spec.switch_graph()
    if not switches:
        return {}
    if nx.is_tree(g):
        return _layered(g, switches[0])
    # Seeded, so the same topology is always drawn the same way.
    return {n: tuple(xy) for n, xy in nx.spring_layout(g, seed=1).items()}


def _layered(tree: nx.Graph, root: str) -> dict:
    """Root on top, leaves side by side, each parent centred above its children."""
    pos, next_x = {}, [0.0]

    def place(node: str, parent: str | None, depth: int) -> float:
        children = sorted((c for c in tree[node] if c != parent), key=natural_key)
        if children:
            xs = [place(c, node, depth + 1) for c in children]
            x = (xs[0] + xs[-1]) / 2
        else:
            x, next_x[0] = next_x[0], next_x[0] + 1
        pos[node] = (x, -float(depth))
        return x

    place(root, None, 0)
    return pos


def _host_positions(spec: TopoSpec, switch_pos: dict) -> dict:
    """Hosts fanned out in a small arc below their switch, scaled to the switch spacing."""
    if not switch_pos:
        return {h: (float(i), 0.0) for i, h in enumerate(spec.hosts())}
    radius = 0.3 * _closest_switch_distance(switch_pos)
    result: dict[str, tuple[float, ...]] = {}
    by_switch: dict[str | None, list[str]] = {}
    for host in spec.hosts():
        own = spec.graph.nodes[host].get("pos")
        if own is not None:
            result[host] = tuple(own)
            continue
        attached = spec.host_switches(host)
        by_switch.setdefault(attached[0] if attached else None, []).append(host)
    for switch, hosts in by_switch.items():
        cx, cy = switch_pos.get(switch, (0.0, 0.0))
        for i, host in enumerate(hosts):
            if len(hosts) == 1:
                angle = -math.pi / 3  # down and to the side: off grid and chain lines
            else:  # spread over 90 degrees below the switch
                angle = -math.pi * 3 / 4 + i * (math.pi / 2) / (len(hosts) - 1)
            result[host] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    return result


def _closest_switch_distance(switch_pos: dict) -> float:
    """Smallest positive distance between two switches (1.0 with fewer than two)."""
    points = list(switch_pos.values())
    distances = [math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1 :]]
    positive = [d for d in distances if d > 0]
    return min(positive) if positive else 1.0
