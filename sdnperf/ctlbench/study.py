"""A ctlbench file as a study of the one pipeline: `sdnperf run FILE` (and `sdnperf ctlbench
run`) plan, order, resume, store with provenance and run on `--cluster` a controller
benchmark exactly as a network study (runner.py, cluster/), which hand each run back here.

The plan: the probe's ceiling per switch count and sweep point first (later runs are judged
against it), then repetitions × sweep points × [load] points (switches × rates) × controllers,
in file order ("interleaved") or shuffled by the study seed ("random"; the ceilings stay
first). A `[[sweep]]` varies one `load.FIELD` (window, threads, duration, hosts, ...):

    [[sweep]]
    param = "load.window"
    values = [16, 64, 256]

A run's key is `controller|mode|Nsw[|RATEpps]|rep`, with the sweep point before rep when it
has one (`...|load.window=16|1`); the ceiling's is `ceiling|Nsw[|point]`. Keys name what a run
is, so `--resume` skips the runs stored ok. The blocks of a cluster (cluster/blocks.py) group
the controllers of one switch count × load point × sweep point × repetition on one node.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sdnperf.ctlbench import convert, probe
from sdnperf.ctlbench.config import (
    ConfigError,
    ControllerSpec,
    CtlbenchFile,
    LoadSection,
    load,
    parse,
)
from sdnperf.ctlbench.runner import CEILING_ARCH, CtlbenchRunner, RunSpec
from sdnperf.samples import Point, RunResult, format_point


class StoredRun(Protocol):
    """What observe() reads of a run: just finished (RunResult) or read back from the store
    on --resume (store.RunRow)."""

    @property
    def params(self) -> dict: ...

    @property
    def status(self) -> str: ...

    @property
    def point(self) -> dict: ...


@dataclass(frozen=True)
class Named:
    """What the pipeline shows of a run's architecture and workload: a name."""

    name: str


@dataclass(frozen=True)
class CtlbenchRun:
    key: str
    index: int
    architecture: Named  # the controller (its label), what the report compares
    workload: Named  # the load: mode and rate, as ctlbench's report names it
    repetition: int
    topology: str  # "N switches": the emulated switches, as the report names them
    point: Point = ()
    spec: RunSpec | None = field(default=None, compare=False)  # ctlbench/runner.py's run
    load: LoadSection | None = field(default=None, compare=False)  # the point applied
    study: None = None  # a network study's run carries the study variant it sees; not this

    @property
    def params(self) -> dict[str, object]:
        return dict(self.point)


@dataclass
class CtlbenchStudy:
    path: str
    text: str
    config: CtlbenchFile
    base_dir: Path = field(default_factory=Path.cwd)
    # probe ceilings (switch count, point) -> answered/s, from the ceiling runs as they are
    # stored (observe); a run is marked probe-bound against its own one
    ceilings: dict[tuple[int, Point], float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.config.study.name

    @property
    def raw(self) -> dict:
        return self.config.model_dump(mode="json")

    @property
    def topologies(self) -> dict:
        return {}  # the emulated switches are the probe's, no network is built

    @property
    def topology(self) -> Named:
        return Named("")

    # -- plan ------------------------------------------------------------------------------
    def points(self) -> list[Point]:
        sweeps = self.config.sweep
        if not sweeps:
            return [()]
        combos = itertools.product(*[[(s.param, v) for v in s.values] for s in sweeps])
        return [tuple(sorted(c)) for c in combos]

    def load_at(self, point: Point) -> LoadSection:
        return self.config.load_at(point)

    def plan(self) -> list[CtlbenchRun]:
        cfg = self.config
        ceilings: list[CtlbenchRun] = []
        runs: list[CtlbenchRun] = []
        for point in self.points():
            load_ = self.load_at(point)
            middle = f"|{format_point(point)}" if point else ""
            if load_.ceiling:
                for n in sorted(set(load_.switches)):
                    spec = RunSpec(
                        f"ceiling|{n}sw{middle}",
                        _echo_ceiling(),
                        n,
                        None,
                        "throughput",
                        1,
                        ceiling=True,
                    )
                    ceilings.append(self._run(spec, point, load_))
        for rep in range(1, cfg.study.repetitions + 1):
            for point in self.points():
                load_ = self.load_at(point)
                middle = f"{format_point(point)}|" if point else ""
                for n, rate in load_.points():
                    for c in cfg.controller:
                        r = f"|{rate:g}pps" if rate else ""
                        key = f"{c.label}|{load_.mode}|{n}sw{r}|{middle}{rep}"
                        spec = RunSpec(key, c, n, rate, load_.mode, rep)
                        runs.append(self._run(spec, point, load_))
        if cfg.study.order == "random":
            random.Random(cfg.study.seed).shuffle(runs)
        return [
            CtlbenchRun(
                r.key,
                i,
                r.architecture,
                r.workload,
                r.repetition,
                r.topology,
                r.point,
                r.spec,
                r.load,
            )
            for i, r in enumerate(ceilings + runs)
        ]

    def _run(self, spec: RunSpec, point: Point, load_: LoadSection) -> CtlbenchRun:
        workload = "ceiling" if spec.ceiling else convert.workload_name(spec.mode, spec.rate)
        return CtlbenchRun(
            spec.key,
            0,
            Named(spec.controller.label),
            Named(workload),
            spec.repetition,
            convert.topology_name(spec.switches),
            point,
            spec,
            load_,
        )

    def matrix_text(self, plan: list) -> str:
        cfg = self.config
        parts = [
            f"{len(cfg.controller)} controller(s)",
            f"{len(cfg.load.points())} load point(s)",
            *([f"{len(self.points())} sweep point(s)"] if cfg.sweep else []),
            f"{cfg.study.repetitions} repetition(s)",
        ]
        return (
            " × ".join(parts) + f" → {len(plan)} runs (ceiling runs included), {cfg.load.mode} mode"
        )

    # -- run -------------------------------------------------------------------------------
    def preflight_problems(self) -> list[str]:
        try:
            probe.binary()
        except probe.ProbeError as exc:
            return [str(exc)]
        return []

    def observe(self, result: StoredRun) -> None:
        """A stored run: a ceiling measured ok becomes the ceiling of its later runs."""
        if result.params.get("ceiling") and result.status == "ok":
            switches = int(result.params["switches"])
            point = tuple(sorted(result.point.items()))
            self.ceilings[(switches, point)] = float(result.params.get("answered_rate") or 0)

    def execute(self, run: CtlbenchRun, results_dir: Path, log) -> RunResult:
        """One run: a fresh controller against the probe (ctlbench/runner.py run_one)."""
        assert run.spec is not None and run.load is not None
        cfg = self.config.model_copy(update={"load": run.load})
        runner = CtlbenchRunner(cfg, results_dir, log=log)
        runner.ceiling = {n: c for (n, point), c in self.ceilings.items() if point == run.point}
        started = time.time()
        try:
            return runner.run_one(run.spec, probe.binary())
        except Exception as exc:  # one broken run must not cost the study
            params = {"switches": run.spec.switches, "mode": run.spec.mode}
            return runner.failed(run.spec, params, f"run failed: {exc!r}", started)


def _echo_ceiling() -> ControllerSpec:
    return ControllerSpec(kind="echo", name=CEILING_ARCH)


def is_ctlbench_text(raw: dict) -> bool:
    """A ctlbench file has [load] or [[controller]] tables and no [topology]."""
    return "topology" not in raw and ("load" in raw or "controller" in raw)


def load_ctlbench_study(path: str | Path) -> CtlbenchStudy:
    """The file as a study; ConfigError naming file:line:field otherwise."""
    path = Path(path)
    cfg = load(path)
    return CtlbenchStudy(str(path), path.read_text(), cfg, path.parent)


def ctlbench_study(cfg: CtlbenchFile, source: str | None) -> CtlbenchStudy:
    """A configuration built from a file and command-line options, as a study."""
    text = Path(source).read_text() if source else ""
    base = Path(source).parent if source else Path.cwd()
    return CtlbenchStudy(source or "<options>", text, cfg, base)


__all__ = [
    "ConfigError",
    "CtlbenchRun",
    "CtlbenchStudy",
    "ctlbench_study",
    "is_ctlbench_text",
    "load_ctlbench_study",
    "parse",
]
