"""Load a study file: TOML -> validated StudyFile + built topology, or StudyError(s).

Every error names the file, the line and the field path, e.g.
    examples/campus.toml:23: workload[0].count: Input should be greater than or equal to 1
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pydantic

from sdnperf.study.locate import format_path, line_of
from sdnperf.study.schema import StudyFile
from sdnperf.topo.registry import build_topology
from sdnperf.topo.spec import TopoSpec

DEFAULT_STUDY = "default.toml"


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
        self.problems = problems
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


def default_study_text() -> str:
    return resources.files("sdnperf.study").joinpath(DEFAULT_STUDY).read_text()


def load_study(path: str | Path | None) -> LoadedStudy:
    if path is None:
        return load_study_text(default_study_text(), "<default study>", base_dir=Path.cwd())
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise StudyError([Problem(str(path), None, "", f"cannot read: {exc.strerror}")]) from None
    return load_study_text(text, str(path), base_dir=path.parent)


def load_study_text(text: str, source: str, base_dir: Path) -> LoadedStudy:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))  # 3.11's error has no lineno attribute
        line = int(found.group(1)) if found else None
        raise StudyError([Problem(source, line, "", f"not valid TOML: {exc}")]) from None
    config, topologies = validate_raw(raw, text, source, base_dir)
    study = LoadedStudy(source, text, config, next(iter(topologies.values())), raw, topologies,
                        base_dir)
    from sdnperf.study.sweep import check_sweeps  # it builds study variants with this module
    problems = check_sweeps(study)
    if problems:
        raise StudyError(problems)
    return study


def validate_raw(raw: dict, text: str, source: str,
                 base_dir: Path) -> tuple[StudyFile, dict[str, TopoSpec]]:
    """Validate a study dict and build its topologies (label -> TopoSpec), or StudyError."""
    try:
        config = StudyFile.model_validate(raw)
    except pydantic.ValidationError as exc:
        raise StudyError(_problems(exc, text, source, (), raw)) from None
    several = isinstance(config.topology, list)
    topologies: dict[str, TopoSpec] = {}
    for i, entry in enumerate(config.topologies()):
        prefix = ("topology", i) if several else ("topology",)
        topology = _build_topology(config, entry, prefix, text, source, base_dir, raw)
        topology.name = entry.name or topology.name
        topologies[topology.name] = topology
        problems = _check_hosts(config, topology, text, source)
        if problems:
            raise StudyError(problems)
    return config, topologies


def _build_topology(config: StudyFile, entry, prefix: tuple, text: str, source: str,
                    base_dir: Path, raw: dict) -> TopoSpec:
    try:
        topology = build_topology(entry.kind, config.topology_params(entry),
                                  config.study.seed, base_dir)
    except pydantic.ValidationError as exc:
        raise StudyError(_problems(exc, text, source, prefix, raw)) from None
    except ValueError as exc:  # unknown kind, unreadable GraphML, bad custom class ...
        field_path = (*prefix, getattr(exc, "field", None) or
                      ("kind" if "kind" in str(exc) else ""))
        field_path = tuple(p for p in field_path if p != "")
        raise StudyError([Problem(source, line_of(text, field_path), format_path(field_path),
                                  str(exc))]) from None
    link = entry.link
    if link:
        topology = topology.with_link_defaults(link.bw, link.delay_ms, link.loss_pct)
    return topology


def _without_union_tag(loc: tuple, raw: dict) -> tuple:
    """pydantic puts the union tag in the path (workload.0.ping.count): drop it for humans."""
    if len(loc) >= 2 and loc[0] == "topology" and loc[1] in ("table", "list"):
        loc = (loc[0], *loc[2:])
    if len(loc) >= 3 and isinstance(loc[1], int):
        try:
            if raw[loc[0]][loc[1]].get("kind") == loc[2]:
                return loc[:2] + loc[3:]
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
    return loc


def _problems(exc: pydantic.ValidationError, text: str, source: str, prefix: tuple,
              raw: dict) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = _without_union_tag(tuple(prefix) + tuple(err["loc"]), raw)
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc = (*loc, "kind")
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; see docs/study-format.md)"
        problems.append(Problem(source, line_of(text, loc), format_path(loc), message))
    return problems


def _check_hosts(config: StudyFile, topology: TopoSpec, text: str, source: str) -> list[Problem]:
    """Host names in explicit pairs must exist in the topology."""
    from sdnperf.workloads.pairs import resolve_pairs

    problems = []
    for i, wl in enumerate(config.workload):
        try:
            resolve_pairs(wl.pairs, topology.hosts(), config.study.seed)
        except ValueError as exc:
            loc = ("workload", i, "pairs")
            problems.append(Problem(source, line_of(text, loc), format_path(loc), str(exc)))
    return problems
