"""`sdnperf topo show`: a topology as text (counts, neighbours, loops, diameter) and as PNG."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import networkx as nx

from .layout import positions
from .registry import TOPOLOGIES, build_topology
from .spec import TopoSpec, count_of, natural_key


def render_text(spec: TopoSpec) -> str:
    g = spec.graph
    lines = [spec.describe()]
    lines.append(f"  loops: {'yes (bridges need spanning tree)' if spec.has_loops() else 'no'}")
    lines.append(f"  diameter: {_diameter_text(spec)}")
    shaped = _link_summary(spec)
    if shaped:
        lines.append(f"  links: {shaped}")
    lines.append("  switches:")
    for switch in spec.switches():
        neighbours = sorted(g[switch], key=natural_key)
        peers = [n for n in neighbours if not spec.is_host(n)]
        hosts = [n for n in neighbours if spec.is_host(n)]
        label = g.nodes[switch].get("label") or spec.name_map.get(switch)
        head = f"    {switch}" + (f" ({label})" if label else "")
        lines.append(f"{head}: switches [{' '.join(peers)}] hosts [{_compact(hosts)}]")
    for note in spec.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _diameter_text(spec: TopoSpec) -> str:
    switches = spec.switch_graph()
    if switches.number_of_nodes() == 0:
        return "n/a (no switches)"
    if not nx.is_connected(switches):
        return f"n/a (switches form {nx.number_connected_components(switches)} separate parts)"
    hops = nx.diameter(switches)
    # the longest host-to-host path also crosses the two host links
    return f"{count_of(hops, 'switch hop')} (host to host: {count_of(hops + 2, 'link')})"


def _link_summary(spec: TopoSpec) -> str:
    parts = []
    for attr, unit in (("bw", "Mbit/s"), ("delay_ms", "ms"), ("loss_pct", "%")):
        values = [getattr(link, attr) for link in spec.links() if getattr(link, attr) is not None]
        if values:
            low, high = min(values), max(values)
            span = f"{low:g}" if low == high else f"{low:g}..{high:g}"
            parts.append(f"{attr.split('_')[0]} {span} {unit} on {count_of(len(values), 'link')}")
    return ", ".join(parts)


def _compact(hosts: list[str]) -> str:
    """h1 h2 h3 h4 -> h1..h4, so big topologies stay readable."""
    numbers = [int(h[1:]) for h in hosts]
    if len(hosts) > 2 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{hosts[0]}..{hosts[-1]}"
    return " ".join(hosts)


def draw_png(spec: TopoSpec, path: Path | str) -> Path:
    """Draw switches (blue squares) and hosts (orange dots) with their links into a PNG."""
    # Figure + Agg canvas directly: no pyplot global state, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    pos = positions(spec)
    size = min(16.0, 5.0 + 0.25 * len(spec.switches()))
    fig = Figure(figsize=(size, size * 0.75))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for link in spec.links():
        (x1, y1), (x2, y2) = pos[link.node1], pos[link.node2]
        host_link = spec.is_host(link.node1) or spec.is_host(link.node2)
        ax.plot(
            [x1, x2],
            [y1, y2],
            color="0.7" if host_link else "0.25",
            linewidth=0.8 if host_link else 1.6,
            zorder=1,
        )
    switches, hosts = spec.switches(), spec.hosts()
    small = len(switches) + len(hosts) <= 80
    ax.scatter(
        [pos[s][0] for s in switches],
        [pos[s][1] for s in switches],
        marker="s",
        s=260 if small else 90,
        color="#2b6cb0",
        edgecolors="black",
        zorder=2,
        label=f"switches ({len(switches)})",
    )
    ax.scatter(
        [pos[h][0] for h in hosts],
        [pos[h][1] for h in hosts],
        marker="o",
        s=70 if small else 25,
        color="#ed8936",
        edgecolors="black",
        zorder=2,
        label=f"hosts ({len(hosts)})",
    )
    for switch in switches:
        ax.annotate(
            switch,
            pos[switch],
            fontsize=7 if small else 5,
            ha="center",
            va="center",
            color="white" if small else "black",
            zorder=3,
        )
    for host in hosts if small else []:
        # below the dot, so the name stays readable
        ax.annotate(
            host,
            pos[host],
            xytext=(0, -7),
            textcoords="offset points",
            fontsize=6,
            ha="center",
            va="top",
            zorder=3,
        )
    ax.set_title(spec.describe(), fontsize=10)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_axis_off()
    ax.margins(0.08)
    fig.legend(loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", dpi=110)
    return out


def show(
    kind_or_spec: str | TopoSpec,
    params: dict[str, Any] | None = None,
    png: Path | None = None,
    seed: int = 1,
    base_dir: Path | None = None,
) -> str:
    """Text for `sdnperf topo show`; also writes a PNG when `png` is given.

    `kind_or_spec` is a topology kind (built from `params` with `seed`) or a ready TopoSpec
    (e.g. the one a study file describes, with its link defaults applied).
    """
    spec = (
        kind_or_spec
        if isinstance(kind_or_spec, TopoSpec)
        else build_topology(kind_or_spec, params or {}, seed, base_dir)
    )
    text = render_text(spec)
    if png is not None:
        text += f"\n  drawing: {draw_png(spec, png)}"
    return text


def render_kinds() -> str:
    """Every topology kind with its parameters and defaults (for help and error messages)."""
    lines = []
    for kind, gen in TOPOLOGIES.items():
        lines.append(f"{kind}: {gen.summary}")
        for name, field in gen.params_model.model_fields.items():
            key = field.alias or name
            facts = (
                ["required"]
                if field.is_required()
                else [f"default {_toml_value(field.get_default(call_default_factory=True))}"]
            )
            facts += _bounds(field)
            about = f": {field.description}" if field.description else ""
            lines.append(f"    {key} ({', '.join(facts)}){about}")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if not isinstance(value, dict) else "{}" if not value else str(value)


def _bounds(field) -> list[str]:
    """'1..64' from the field's ge/le constraints."""
    low = next((m.ge for m in field.metadata if getattr(m, "ge", None) is not None), None)
    high = next((m.le for m in field.metadata if getattr(m, "le", None) is not None), None)
    if low is None and high is None:
        return []
    return [f"{'' if low is None else low}..{'' if high is None else high}"]


def parse_param_args(items: list[str]) -> dict[str, Any]:
    """CLI `key=value` pairs -> params; values are TOML literals (3, 0.5, true, "x"),
    anything else is taken as a plain string (so `file=net.graphml` works unquoted)."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {item!r}")
        try:
            params[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            params[key.strip()] = value.strip()
    return params
