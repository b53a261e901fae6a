"""A user's own `mininet.topo.Topo` subclass, given as `class = "module:Class"`.

The module is looked up first as a file next to the study (`module.py`, or a path ending in
`.py`), then on the Python path; `Class` may also be a key of the module's `topos` dict (files
written for `mn --custom`). The Topo is built with `args` as keyword arguments and converted
to a TopoSpec, keeping link options (bw, delay, loss), port numbers and node options.
Node names that fit our scheme (hosts h<n>, switches s<n>) are kept; the others are
renumbered after the highest kept number, in natural name order, and `TopoSpec.name_map`
records every new name's original.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import ConfigDict, Field, field_validator

from ..spec import HOST, NAME_PATTERNS, SWITCH, TopologyError, TopoSpec, natural_key
from .base import Generator, Params

# Node options the architecture, not the user's Topo, decides.
ARCHITECTURE_OWNED_OPTS = ("cls",)
_LINK_KEYS = {"node1", "node2", "port1", "port2", "bw", "delay", "loss"}


class CustomParams(Params):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)

    class_: str = Field(alias="class", description='"module:Class" or "path/file.py:Class"')
    args: dict[str, Any] = Field(default_factory=dict, description="keyword arguments")

    @field_validator("class_")
    @classmethod
    def _module_and_class(cls, value: str) -> str:
        module, sep, name = value.rpartition(":")
        if not sep or not module.strip() or not name.strip():
            raise ValueError(f'must be "module:Class" (e.g. "mytopo:MyTopo"), got {value!r}')
        return value


def load_target(target: str, base_dir: Path | None):
    """The class (or factory) that `target` names.

    Besides attributes, a name in the module's `topos` dict is accepted, the convention of
    files written for `mn --custom FILE --topo NAME`.
    """
    module_name, _, attr = target.rpartition(":")
    module = _load_module(module_name, base_dir, target)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    topos = getattr(module, "topos", None)
    if obj is None and isinstance(topos, dict):
        obj = topos.get(attr)
    if obj is None:
        raise TopologyError(
            f"custom topology {target!r}: no {attr!r} in "
            f"{getattr(module, '__file__', None) or module_name}",
            field="class",
        )
    return obj


def _load_module(module_name: str, base_dir: Path | None, target: str):
    # "pkg.mod" -> pkg/mod.py next to the study first; "dir/file.py" always names a file.
    is_file = module_name.endswith(".py")
    relative = Path(module_name) if is_file else Path(*module_name.split(".")).with_suffix(".py")
    path = relative if relative.is_absolute() or base_dir is None else Path(base_dir) / relative
    if path.is_file():
        return _load_file(path)
    if is_file:
        raise TopologyError(f"custom topology {target!r}: file {path} not found", field="class")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        where = f" next to the study ({base_dir}) or" if base_dir else ""
        raise TopologyError(
            f"custom topology {target!r}: cannot import {module_name!r}"
            f"{where} on the Python path: {exc}",
            field="class",
        ) from None


def _load_file(path: Path):
    # A unique module name per file, so two studies' "topo.py" never shadow each other.
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"sdnperf_custom_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # not a Python source file
        raise TopologyError(f"{path}: not a Python file (a custom topology is a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The file may import its neighbours (helpers.py beside it): let it, while it loads.
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise TopologyError(
            f"{path}: importing it failed: {type(exc).__name__}: {exc}", field="class"
        ) from None
    finally:
        sys.path.remove(folder)
    return module


def _mininet_topo_class():
    try:
        from mininet.topo import Topo
    except ImportError:
        raise TopologyError(
            "custom topologies need Mininet (Debian's python3-mininet, which "
            "imports only under /usr/bin/python3 or a venv made from it with "
            "--system-site-packages)",
            field="class",
        ) from None
    return Topo


def scheme_names(names: list[str], kind: str) -> dict[str, str]:
    """Original name -> our name: fitting names kept, others numbered after the highest."""
    pattern, prefix = NAME_PATTERNS[kind], "h" if kind == HOST else "s"
    kept = {n for n in names if pattern.match(n)}
    mapping = {n: n for n in kept}
    number = max((int(m.group(1)) for n in kept if (m := pattern.match(n))), default=0)
    for name in sorted((n for n in names if n not in kept), key=natural_key):
        number += 1
        mapping[name] = f"{prefix}{number}"
    return mapping


def parse_delay_ms(value: Any, where: str) -> float | None:
    """Mininet delays are strings like '5ms', '100us', '1s' (a bare number means ms)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(us|ms|s)?\s*", str(value))
    if not match:
        raise TopologyError(f"{where}: cannot understand delay {value!r} (use e.g. '5ms')")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0, None: 1.0}[match.group(2)]
    return float(match.group(1)) * scale


def _number(value: Any, attr: str, where: str) -> float | None:
    if value is None:
        return None
    try:
        return float(str(value).rstrip("%"))
    except ValueError:
        raise TopologyError(f"{where}: {attr} {value!r} is not a number") from None


def topo_to_spec(topo, label: str) -> TopoSpec:
    """Convert a built Mininet Topo (anything with hosts()/switches()/links()) to a TopoSpec."""
    hosts, switches = list(topo.hosts()), list(topo.switches())
    rename = {**scheme_names(hosts, HOST), **scheme_names(switches, SWITCH)}
    graph, notes = nx.Graph(), []
    for original, kind in [(h, HOST) for h in hosts] + [(s, SWITCH) for s in switches]:
        opts = {k: v for k, v in dict(topo.nodeInfo(original)).items() if k != "isSwitch"}
        for owned in ARCHITECTURE_OWNED_OPTS:
            if opts.pop(owned, None) is not None:
                notes.append(
                    f"ignored {owned}= on {original}: the architecture decides the node class"
                )
        node_attrs: dict[str, object] = {"kind": kind, "opts": opts} if opts else {"kind": kind}
        graph.add_node(rename[original], **node_attrs)
    for node1, node2, info in topo.links(withInfo=True):
        a, z = rename[node1], rename[node2]
        where = f"{label}: link {node1}-{node2}"
        if graph.has_edge(a, z):
            raise TopologyError(
                f"{where}: parallel links between the same two nodes are not "
                f"supported (a topology holds one link per pair)"
            )
        ports = {n: info.get(k) for n, k in ((a, "port1"), (z, "port2")) if info.get(k) is not None}
        extra = {k: v for k, v in info.items() if k not in _LINK_KEYS}
        attrs: dict[str, object] = {
            "bw": _number(info.get("bw"), "bw", where),
            "delay_ms": parse_delay_ms(info.get("delay"), where),
            "loss_pct": _number(info.get("loss"), "loss", where),
        }
        if ports:
            attrs["ports"] = ports
        if extra:
            attrs["opts"] = extra
        graph.add_edge(a, z, **attrs)
    name_map = {new: old for old, new in rename.items() if new != old}
    if name_map:
        notes.append(
            f"renamed {len(name_map)} node(s) to the h<n>/s<n> scheme: "
            + ", ".join(
                f"{old}->{new}"
                for new, old in sorted(name_map.items(), key=lambda kv: natural_key(kv[0]))
            )
        )
    return TopoSpec(name=label, graph=graph, name_map=name_map, notes=notes)


def build_custom(p: CustomParams, seed: int, base_dir: Path | None = None) -> TopoSpec:
    topo_base = _mininet_topo_class()
    target = load_target(p.class_, base_dir)
    if isinstance(target, type) and not issubclass(target, topo_base):
        raise TopologyError(
            f"custom topology {p.class_!r}: not a mininet.topo.Topo subclass", field="class"
        )
    if not callable(target):
        raise TopologyError(f"custom topology {p.class_!r}: not a class or function", field="class")
    try:
        topo = target(**p.args)
    except Exception as exc:
        raise TopologyError(
            f"custom topology {p.class_!r} with args {p.args}: building it "
            f"failed: {type(exc).__name__}: {exc}",
            field="args",
        ) from None
    if not isinstance(topo, topo_base):
        raise TopologyError(
            f"custom topology {p.class_!r}: returned a "
            f"{type(topo).__name__}, not a mininet.topo.Topo",
            field="class",
        )
    return topo_to_spec(topo, p.class_.rpartition(":")[2])


GENERATORS = [
    Generator(
        "custom",
        CustomParams,
        build_custom,
        'your own mininet.topo.Topo subclass: class = "module:Class", args = {...}',
    ),
]
