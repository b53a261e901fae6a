"""One study's content checked: the schema, each topology built, host names in pairs; the
result is a LoadedStudy, or StudyError with every problem at once, each file:line:field.

Kept apart from reading files (loader.py) so that sweeps (sweep.py), which validate a
variant of a study for each point, and the loader, which checks a study's sweeps, both
import this module and not each other.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pydantic

from sdnperf.arch.config import OpenflowConfig, P4Config
from sdnperf.links.schedule import ScheduleError, plan_links
from sdnperf.study.locate import format_path, line_of
from sdnperf.study.messages import explain
from sdnperf.study.schema import StudyFile, TopologySection
from sdnperf.topo.registry import build_topology, generator, with_link_settings
from sdnperf.topo.spec import TopoSpec
from sdnperf.workloads.pairs import resolve_pairs


@dataclass
class Problem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"


class StudyError(Exception):
    def __init__(self, problems: list[Problem]):
        # every mistake at once, in the order of the file (those without a line first)
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0))
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class LoadedStudy:
    path: str  # file path, or "<default>" for the embedded study
    text: str
    config: StudyFile
    topology: TopoSpec  # the first (often only) topology
    raw: dict = field(default_factory=dict)
    # label -> topology; the label (a [[topology]]'s name, else the generated name) is
    # what run keys, tables and plots call it, and the TopoSpec carries it as its name
    topologies: dict[str, TopoSpec] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)

    def __post_init__(self) -> None:
        if not self.topologies:
            self.topologies = {self.topology.name: self.topology}

    @property
    def name(self) -> str:
        return self.config.study.name


def validate_raw(
    raw: dict, text: str, source: str, base_dir: Path
) -> tuple[StudyFile, dict[str, TopoSpec]]:
    """Validate a study dict and build its topologies (label -> TopoSpec), or StudyError
    with every problem found at once (schema, each topology, hosts), each file:line:field."""
    problems: list[Problem] = []
    try:
        config = StudyFile.model_validate(raw)
    except pydantic.ValidationError as exc:
        config = None
        problems += _problems(exc, text, source, (), StudyFile)
    entries = raw.get("topology")
    several = isinstance(entries, list)
    seed = raw.get("study", {}).get("seed", 1) if isinstance(raw.get("study"), dict) else 1
    topologies: dict[str, TopoSpec] = {}
    for i, entry in enumerate(entries if isinstance(entries, list) else [entries]):
        prefix = ("topology", i) if several else ("topology",)
        topology = _topology(
            entry,
            prefix,
            seed if isinstance(seed, int) else 1,
            text,
            source,
            base_dir,
            raw,
            problems,
        )
        if topology is None:
            continue
        topologies[topology.name] = topology
        if config is not None:
            problems += _check_hosts(config, topology, text, source, raw)
    if problems or config is None:
        raise StudyError(problems)
    _resolve_paths(config, base_dir)
    return config, topologies


def _topology(
    entry,
    prefix: tuple,
    seed: int,
    text: str,
    source: str,
    base_dir: Path,
    raw: dict,
    problems: list[Problem],
) -> TopoSpec | None:
    """One topology table built by its generator and labelled by its name, or None with its
    problems appended (also when other tables have mistakes: all are reported at once)."""
    try:
        section = TopologySection.model_validate(entry)
    except pydantic.ValidationError:
        return None  # the schema's problems already name it
    try:
        topology = build_topology(section.kind, dict(section.model_extra or {}), seed, base_dir)
    except pydantic.ValidationError as exc:
        model = generator(section.kind).params_model
        problems += _problems(exc, text, source, prefix, model)
        return None
    except ValueError as exc:  # unknown kind, unreadable GraphML, bad custom class ...
        # the field at fault comes from the error (TopologyError.field), never from its text
        field = getattr(exc, "field", None)
        field_path = (*prefix, field) if field else tuple(prefix)
        problems.append(
            Problem(source, line_of(text, field_path), format_path(field_path), str(exc))
        )
        return None
    topology.name = section.name or topology.name
    topology = with_link_settings(topology, **section.link_settings())
    link = section.link
    topology.graph.graph["link_element"] = link.element if link else "off"
    if section.schedule:
        try:
            topology = plan_links(topology, section.schedule, base_dir)
        except ScheduleError as exc:
            field_path = (*prefix, "schedule", *exc.field.split(".", 1))
            problems.append(
                Problem(source, line_of(text, field_path), format_path(field_path), str(exc))
            )
            return None
    return topology


def _resolve_paths(config: StudyFile, base_dir: Path) -> None:
    """Relative paths in the file are relative to its folder, as in other configuration
    formats (the topology generators resolve theirs with base_dir too)."""
    for arch in config.architecture:
        if isinstance(arch, P4Config) and arch.runtime_dir:
            arch.runtime_dir = str(Path(base_dir) / arch.runtime_dir)  # absolute: kept as is
        if isinstance(arch, (OpenflowConfig, P4Config)):
            arch._study_dir = str(Path(base_dir).resolve())  # a command's {study_dir}
            if isinstance(arch, OpenflowConfig) and arch.own_osken_app():
                arch.app = str(Path(base_dir) / arch.app)


def _problems(
    exc: pydantic.ValidationError, text: str, source: str, prefix: tuple, model
) -> list[Problem]:
    """`exc` (raised validating `model` at `prefix` of the file) in the user's words."""
    problems = []
    for path, message in explain(exc, model):
        loc = (*prefix, *path)
        problems.append(Problem(source, line_of(text, loc), format_path(loc), message))
    return problems


UNSET = "none"  # a per_topology value that unsets an optional field on that topology


def for_topology(raw: dict, label: str) -> dict:
    """A copy of a raw study as topology `label` sees it: every workload (and mixed member)
    takes its `per_topology` values for that topology ("none" unsets a field), and no
    workload has `per_topology` or `topologies` any more (the plan applies the latter)."""
    out = copy.deepcopy(raw)

    def apply(entry: object) -> None:
        if not isinstance(entry, dict):
            return
        entry.pop("topologies", None)  # the plan has applied it; the copy has one topology
        table = entry.pop("per_topology", None)
        if isinstance(table, dict) and isinstance(table.get(label), dict):
            for key, value in table[label].items():
                if isinstance(value, str) and value.lower() == UNSET:
                    entry.pop(key, None)
                else:
                    entry[key] = value
        for member in entry.get("members") or []:
            apply(member)
        if entry.get("kind") == "mixed":
            entry.pop("pairs", None)  # gathered again from the members' own pairs

    if isinstance(out.get("workload"), list):
        out["workload"] = [e for e in out["workload"] if runs_on(e, label)]
    for entry in out.get("workload") or []:
        apply(entry)
    return out


def runs_on(raw_workload: object, label: str) -> bool:
    """Whether a raw workload entry runs on topology `label` (its `topologies`, if any)."""
    names = raw_workload.get("topologies") if isinstance(raw_workload, dict) else None
    return not isinstance(names, list) or label in names


def _has_per_topology(raw: dict) -> bool:
    def has(entry: object) -> bool:
        return isinstance(entry, dict) and (
            "per_topology" in entry or any(has(m) for m in entry.get("members") or [])
        )

    return any(has(e) for e in raw.get("workload") or [])


def _check_hosts(
    config: StudyFile, topology: TopoSpec, text: str, source: str, raw: dict | None = None
) -> list[Problem]:
    """Host names in explicit pairs must exist in the topology (with its `per_topology`
    values, which are validated here for that topology)."""
    names = [wl.name for wl in config.workload]  # the file's order: locations by index
    skip = {
        wl.name for wl in config.workload if wl.topologies and topology.name not in wl.topologies
    }
    if raw is not None and (_has_per_topology(raw) or skip):
        try:
            config = StudyFile.model_validate(for_topology(raw, topology.name))
        except pydantic.ValidationError as exc:
            return [
                dataclasses.replace(p, message=f"on topology {topology.name!r}: {p.message}")
                for p in _problems(exc, text, source, (), raw)
            ]
    problems = []
    for wl in config.workload:
        if wl.name in skip:
            continue  # the workload's `topologies` leave this one out
        i = names.index(wl.name)
        try:
            resolve_pairs(wl.pairs, topology.hosts(), config.study.seed)
        except ValueError as exc:
            loc = ("workload", i, "pairs")
            problems.append(Problem(source, line_of(text, loc), format_path(loc), str(exc)))
    return problems
