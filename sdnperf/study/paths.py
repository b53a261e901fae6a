"""Parameter paths of a study (what a `[[sweep]]` names), resolved against the config models.

Grammar (dot-separated; docs/study-format.md, "Sweeps"):

    topology.<field>[.<field>...]                every topology of the study
    topology.<topology name>.<field>[...]        one [[topology]] entry
    architecture.<architecture name>.<field>[...]
    workload.<workload name>.<field>[...]

A field is any field of the entry's pydantic model except `name` and `kind`; a field that
holds a model goes on with that model's fields (`topology.link.bw`,
`workload.w.pairs.permutation`), a field that holds a table of free keys (a dict) goes on
with the keys of the validated entry (`architecture.p4.params.recirc_passes`: those the
study file gives and those the model fills in, so a misspelt key cannot pass). Topology fields are those of the
generator's parameter model plus `link|core_link|edge_link.bw|delay_ms|loss_pct` and the link
schedules' fields, a schedule's points by their time keys (`topology.schedule.NAME.rate_mbps.5`).

Nothing here knows the names of particular fields: the models are walked, so a field added
to an architecture or workload model is sweepable at once.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass

from pydantic import BaseModel

from sdnperf.links.config import LinkSchedule
from sdnperf.study.schema import LINK_SETTINGS, LinkDefaults, StudyFile, TopologySection
from sdnperf.topo.registry import generator

SECTIONS = ("topology", "architecture", "workload")
IDENTITY = ("name", "kind")  # fields that say which entry it is: not parameters
UNSET_WORDS = ("unlimited", "none")  # a sweep value meaning "leave unset" (optional fields)


class PathError(ValueError):
    """A path that names nothing; `nearby` lists valid paths that look like it."""

    def __init__(self, message: str, nearby: list[str]):
        self.nearby = nearby
        hint = f"; valid paths nearby: {', '.join(nearby)}" if nearby else ""
        super().__init__(message + hint)


@dataclass(frozen=True)
class Target:
    """Where a path points: a section, which entry (None: every topology) and the fields."""

    path: str
    section: str
    entry: str | None
    fields: tuple[str, ...]
    optional: bool  # the field may be unset (a sweep value "unlimited"/"none" unsets it)

    def applies(self, topology: str, architecture: str, workload: str) -> bool:
        """Whether a run on this topology × architecture × workload has this parameter."""
        if self.entry is None:
            return True
        return (
            self.entry
            == {"topology": topology, "architecture": architecture, "workload": workload}[
                self.section
            ]
        )

    def set(self, raw: dict, value: object) -> None:
        """Write `value` into one run's raw study dict (its `topology` is a single table)."""
        if self.optional and isinstance(value, str) and value.lower() in UNSET_WORDS:
            value = None
        if self.section == "topology":
            table = raw["topology"]
        else:
            table = next(e for e in raw[self.section] if e.get("name") == self.entry)
        for name in self.fields[:-1]:
            inner = table.get(name)
            if not isinstance(inner, dict):
                inner = table[name] = {}
            table = inner
        table[self.fields[-1]] = value


# -- the tree of parameters ----------------------------------------------------------------


def _model_in(annotation) -> type[BaseModel] | None:
    """The pydantic model a field annotation holds (also inside Optional/Union)."""
    candidates = [annotation, *typing.get_args(annotation)]
    for c in candidates:
        if isinstance(c, type) and issubclass(c, BaseModel):
            return c
    return None


def _optional(annotation) -> bool:
    origin = typing.get_origin(annotation)
    return origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def _tree(model: type[BaseModel], value: object) -> dict[str, object]:
    """name -> subtree (dict) or leaf (a bool: optional) for a model and its current value."""
    out: dict[str, object] = {}
    for name, info in model.model_fields.items():
        if name in IDENTITY:
            continue
        current = getattr(value, name, None) if value is not None else None
        if isinstance(current, BaseModel):
            out[name] = _tree(type(current), current)
        elif isinstance(current, dict):
            out[name] = {
                str(k): _tree(type(v), v) if isinstance(v, BaseModel) else False
                for k, v in current.items()
            }
        elif (inner := _model_in(info.annotation)) is not None and not isinstance(
            current, (list, tuple)
        ):
            out[name] = _tree(inner, None)
        else:
            out[name] = (
                _optional(info.annotation) or info.default is None and not info.is_required()
            )
    return out


def _topology_tree(entry: TopologySection) -> dict[str, object]:
    try:
        params = generator(entry.kind).params_model
    except ValueError:  # an unknown kind is reported by the loader
        params = None
    tree = _tree(params, None) if params else {}
    for key in LINK_SETTINGS:
        tree[key] = _tree(LinkDefaults, getattr(entry, key))
    # a schedule's points are its keys: topology.schedule.NAME.rate_mbps.5
    tree["schedule"] = {name: _tree(LinkSchedule, s) for name, s in entry.schedule.items()}
    return tree


def parameter_trees(config: StudyFile) -> dict[str, dict[str, dict]]:
    """section -> entry name -> parameter tree (topology: also "" for every topology)."""
    topologies = {t.name or "": _topology_tree(t) for t in config.topologies()}
    common = _common(list(topologies.values()))
    trees = {
        "topology": {"": common}
        if isinstance(config.topology, list)
        else {"": next(iter(topologies.values()))},
        "architecture": {a.name: _tree(type(a), a) for a in config.architecture},
        "workload": {w.name: _tree(type(w), w) for w in config.workload},
    }
    if isinstance(config.topology, list):
        trees["topology"].update({name: tree for name, tree in topologies.items()})
    return trees


def _common(trees: list[dict]) -> dict:
    """The parameters every tree has (a path over every topology needs them all)."""
    first, rest = trees[0], trees[1:]
    out = {}
    for key, sub in first.items():
        if all(key in t for t in rest):
            out[key] = _common([sub] + [t[key] for t in rest]) if isinstance(sub, dict) else sub
    return out


def _leaves(tree: dict, prefix: str) -> list[str]:
    out = []
    for key, sub in tree.items():
        path = f"{prefix}.{key}"
        out.extend(_leaves(sub, path) if isinstance(sub, dict) else [path])
    return out


def valid_paths(config: StudyFile) -> list[str]:
    """Every path a sweep may name in this study."""
    out = []
    for section, entries in parameter_trees(config).items():
        for name, tree in entries.items():
            out.extend(_leaves(tree, f"{section}.{name}" if name else section))
    return out


# -- resolving one path --------------------------------------------------------------------


def resolve(path: str, config: StudyFile) -> Target:
    """The Target a path names, or PathError naming what is wrong and the paths nearby."""
    parts = path.split(".")
    every = valid_paths(config)

    def fail(message: str, prefix: str = "") -> PathError:
        near = difflib.get_close_matches(path, every, n=5, cutoff=0.6)
        if not near and prefix:
            near = [p for p in every if p.startswith(prefix + ".")][:8]
        return PathError(message, near or every[:8])

    if any(not p for p in parts):
        raise fail(f"{path!r} is not a dotted path like workload.<name>.<field>")
    section = parts[0]
    if section not in SECTIONS:
        raise fail(
            f"{path!r} must start with one of: {', '.join(SECTIONS)}"
            + (" (study settings are not swept)" if section == "study" else "")
        )
    trees = parameter_trees(config)[section]
    rest = parts[1:]
    entry = None
    if section == "topology":
        if rest and rest[0] in trees and rest[0] != "":
            entry, rest = rest[0], rest[1:]
        elif isinstance(config.topology, list) and rest and rest[0] not in trees[""]:
            names = [n for n in trees if n]
            raise fail(
                f"{path!r}: no topology named {rest[0]!r} and no parameter of that name "
                f"that every topology has; topologies: {', '.join(names)}",
                "topology",
            )
    else:
        if not rest or rest[0] not in trees:
            what = rest[0] if rest else ""
            raise fail(
                f"{path!r}: no {section} named {what!r}; {section}s: {', '.join(trees)}", section
            )
        entry, rest = rest[0], rest[1:]
    tree: object = trees[entry or ""]
    walked = f"{section}.{entry}" if entry else section
    if not rest:
        raise fail(f"{path!r} names a whole {section}, not one of its parameters", walked)
    for _i, name in enumerate(rest):
        if not isinstance(tree, dict):
            raise fail(f"{path!r}: {walked} is a single value, it has no {name!r}", walked)
        if name not in tree:
            keys = ", ".join(tree) or "none"
            raise fail(f"{path!r}: {walked} has no parameter {name!r} (it has: {keys})", walked)
        tree, walked = tree[name], f"{walked}.{name}"
    if isinstance(tree, dict):
        raise fail(f"{path!r} names a group of parameters; name one of them", walked)
    return Target(path, section, entry, tuple(rest), bool(tree))
