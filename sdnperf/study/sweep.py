"""Sweeps: which points a study visits, and each point's own validated study.

A `[[sweep]]` names a parameter (study/paths.py) and its values. Sweeps combine as a grid
(cartesian product) except those with mode = "zip", which advance together as one group.
A point is applied to a deep copy of the study's raw TOML dict, which is then validated
again like a study file (the same models, the same topology generators), so a value that
is wrong at one point is refused with the file:line of the sweep before anything runs.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

from sdnperf.samples import Point, format_point
from sdnperf.study.locate import format_path, line_of
from sdnperf.study.paths import PathError, Target, resolve
from sdnperf.study.validate import (
    LoadedStudy,
    Problem,
    StudyError,
    for_topology,
    validate_raw,
)


@dataclass(frozen=True)
class Sweep:
    target: Target
    values: tuple
    mode: str
    fit: str
    index: int  # position in the study file's [[sweep]] list


def sweeps_of(study: LoadedStudy) -> list[Sweep]:
    """The study's sweeps with their resolved targets (paths were checked at load)."""
    return [
        Sweep(resolve(s.param, study.config), tuple(s.values), s.mode, s.fit, i)
        for i, s in enumerate(study.config.sweep)
    ]


def groups(sweeps: list[Sweep]) -> list[list[Sweep]]:
    """Each grid sweep is a group of its own; all zip sweeps form one group (at the place
    of the first of them)."""
    out: list[list[Sweep]] = []
    zipped: list[Sweep] | None = None
    for s in sweeps:
        if s.mode == "zip":
            if zipped is None:
                zipped = []
                out.append(zipped)
            zipped.append(s)
        else:
            out.append([s])
    return out


def points(study_groups: list[list[Sweep]], applies) -> list[Point]:
    """Every point over the sweeps for which `applies(target)` holds, in file order,
    without repeats (a zip group with no applicable member contributes nothing)."""
    per_group = []
    for group in study_groups:
        members = [s for s in group if applies(s.target)]
        if not members:
            continue
        count = len(members[0].values)
        choices: list[tuple] = []
        for i in range(count):
            choice = tuple((s.target.path, s.values[i]) for s in members)
            if choice not in choices:
                choices.append(choice)
        per_group.append(choices)
    out: list[Point] = []
    for combo in itertools.product(*per_group):
        point = tuple(sorted((pair for part in combo for pair in part), key=lambda p: p[0]))
        if point not in out:
            out.append(point)
    return out


def variant(study: LoadedStudy, topology: str, point: Point) -> LoadedStudy:
    """The study one run sees: one topology (by label) and the point applied, validated.

    Raises StudyError naming the sweep's line and the point when the point is invalid."""
    by_path = {s.target.path: s for s in sweeps_of(study)}
    assignments = [(by_path[path].target, value) for path, value in point]
    where = by_path[point[0][0]].index if point else None
    return _validated(
        study, topology, assignments, where, f"at {format_point(point)} on topology {topology!r}"
    )


def _validated(
    study: LoadedStudy,
    topology: str,
    assignments: list[tuple[Target, object]],
    sweep_index: int | None,
    describe: str,
) -> LoadedStudy:
    """Apply the assignments to a copy of the raw study (one topology), validate it again;
    problems are reported at the sweep's `values` line, prefixed with `describe`."""
    raw = copy.deepcopy(study.raw)
    raw.pop("sweep", None)
    if isinstance(raw["topology"], list):
        raw["topology"] = raw["topology"][list(study.topologies).index(topology)]
        raw = for_topology(raw, topology)
    for target, value in assignments:
        target.set(raw, value)
    try:
        config, topologies = validate_raw(raw, study.text, study.path, study.base_dir)
    except StudyError as exc:
        if sweep_index is None:
            raise
        loc = ("sweep", sweep_index, "values")
        raise StudyError(
            [
                Problem(
                    p.file,
                    line_of(study.text, loc),
                    format_path(loc),
                    f"{describe}: {p.field + ': ' if p.field else ''}{p.message}",
                )
                for p in exc.problems
            ]
        ) from None
    spec = next(iter(topologies.values()))
    spec.name = topology  # the label, whatever the point did to the generated name
    return LoadedStudy(study.path, study.text, config, spec, raw, {topology: spec}, study.base_dir)


def check_sweeps(study: LoadedStudy) -> list[Problem]:
    """Every sweep names a parameter this study has, with values of the right type.

    Each value is tried on its own (applied to the base study and validated), on every
    topology it applies to, so the error names the one value at fault."""
    problems: list[Problem] = []
    text, source = study.text, study.path
    zipped = [s for s in study.config.sweep if s.mode == "zip"]
    for i, sweep in enumerate(study.config.sweep):
        try:
            target = resolve(sweep.param, study.config)
        except PathError as exc:
            loc = ("sweep", i, "param")
            problems.append(Problem(source, line_of(text, loc), format_path(loc), str(exc)))
            continue
        if sweep.mode == "zip" and len(sweep.values) != len(zipped[0].values):
            loc = ("sweep", i, "values")
            problems.append(
                Problem(
                    source,
                    line_of(text, loc),
                    format_path(loc),
                    f"zipped sweeps advance together and need the same number of values: "
                    f"{zipped[0].param} has {len(zipped[0].values)}, {sweep.param} has "
                    f"{len(sweep.values)}",
                )
            )
            continue
        for value in sweep.values:
            for label in study.topologies:
                if target.section == "topology" and not target.applies(label, "", ""):
                    continue
                where = f" on topology {label!r}" if len(study.topologies) > 1 else ""
                try:
                    _validated(
                        study, label, [(target, value)], i, f"{target.path} = {value!r}{where}"
                    )
                except StudyError as exc:
                    problems.extend(exc.problems[:1])
                    break
                if target.section != "topology":
                    break  # one topology suffices for an architecture/workload value
    return problems
