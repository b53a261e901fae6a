"""The run plan: the matrix of topology × sweep point × architecture × workload ×
repetition, in execution order, each run with its own validated study (study/sweep.py).

order = "interleaved" (default): architectures alternate at every point inside each
repetition (rep 1: A, B; rep 2: A, B; ...), so a slow drift of the machine (thermal,
background load) spreads over all of them instead of biasing the one that ran last.
order = "random": the same matrix shuffled by a generator seeded with the study seed, so
drift lines up with neither an architecture nor a sweep point; the same seed gives the
same order.

A run's key is `topology|architecture|workload|rep`, with the run's sweep point between
workload and rep when it has one: `topology|arch|workload|path=value,...|rep` (paths in
alphabetical order, only the parameters this run has). Keys name what a run is, not where
it sits in the plan, so they stay the same when values are added to a study file, and
stores written before sweeps existed resume as they are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sdnperf.arch.config import ArchitectureConfig
from sdnperf.samples import Point, format_point
from sdnperf.study.loader import LoadedStudy
from sdnperf.study.sweep import groups, points, sweeps_of, variant
from sdnperf.workloads.config import WorkloadConfig


@dataclass(frozen=True)
class RunSpec:
    key: str
    index: int
    architecture: ArchitectureConfig  # with the point applied
    workload: WorkloadConfig  # with the point applied
    repetition: int
    topology: str = ""  # the topology's label
    point: Point = ()  # ((param path, value), ...), sorted by path
    # The study this run sees: its one topology, its config with the point applied.
    study: LoadedStudy | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def params(self) -> dict[str, object]:
        return dict(self.point)


def run_key(topology: str, architecture: str, workload: str, point: Point, rep: int) -> str:
    middle = f"{format_point(point)}|" if point else ""
    return f"{topology}|{architecture}|{workload}|{middle}{rep}"


def plan_runs(study: LoadedStudy) -> list[RunSpec]:
    cfg = study.config
    study_groups = groups(sweeps_of(study))
    variants: dict[tuple[str, Point], LoadedStudy] = {}

    def study_for(topology: str, point: Point) -> LoadedStudy:
        if (topology, point) not in variants:
            variants[(topology, point)] = (
                variant(study, topology, point)
                if point or isinstance(study.raw.get("topology"), list)
                else study
            )
        return variants[(topology, point)]

    runs: list[RunSpec] = []
    seen: set[str] = set()
    for rep in range(1, cfg.study.repetitions + 1):
        for topology in study.topologies:
            for wl in cfg.workload:
                if wl.topologies is not None and topology not in wl.topologies:
                    continue  # the workload runs on other topologies only
                # The points of this topology × workload, over every architecture's sweeps;
                # each architecture then visits the part of the point it has.
                for full in points(
                    study_groups,
                    lambda t, topology=topology, wl=wl: t.applies(
                        topology, t.entry if t.section == "architecture" else "", wl.name
                    ),
                ):
                    for arch in cfg.architecture:
                        point = tuple(
                            (path, value)
                            for path, value in full
                            if _target(study_groups, path).applies(topology, arch.name, wl.name)
                        )
                        key = run_key(topology, arch.name, wl.name, point, rep)
                        if key in seen:
                            continue  # a parameter of another architecture: same run
                        seen.add(key)
                        own = study_for(topology, point)
                        runs.append(
                            RunSpec(
                                key,
                                0,
                                _named(own.config.architecture, arch.name),
                                _named(own.config.workload, wl.name),
                                rep,
                                topology,
                                point,
                                own,
                            )
                        )
    if cfg.study.order == "random":
        random.Random(cfg.study.seed).shuffle(runs)
    return [
        RunSpec(r.key, i, r.architecture, r.workload, r.repetition, r.topology, r.point, r.study)
        for i, r in enumerate(runs)
    ]


def _target(study_groups, path: str):
    return next(s.target for group in study_groups for s in group if s.target.path == path)


def _named(entries, name: str):
    return next(e for e in entries if e.name == name)
