"""Link schedules expanded: which links a `[topology.schedule.NAME]` table names, and for
each direction of each such link the setting at any time t (`DirectionPlan.setting_at`,
what the applier sets and what a fidelity check compares against) and the times at which
it changes (`DirectionPlan.change_times`, what the scheduler waits for).

Directions: "up" is what a link's first node sends (the host of a host link, else the
lower-numbered switch; topo/spec.py Link), "down" the other way. A quantity a schedule does
not give keeps the link's static setting ([topology.link] or the topology's own).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator, Protocol

from sdnperf.links.config import QUANTITIES, LinkSchedule, point_time
from sdnperf.links.trace import MTU_BYTES, Trace, TraceError, load_trace
from sdnperf.topo.spec import Link, TopoSpec

DIRECTIONS = ("up", "down")
# A trace bin without a delivery opportunity cannot get rate 0 (that means "unshaped" to
# tc and our switch). It gets the rate at which one Ethernet frame of an MTU-sized packet
# takes the whole bin (at most one frame leaves in it; a frame still on the link when the
# next bin's rate comes in finishes at that rate, in htb and in our switch alike).
FRAME_BYTES = MTU_BYTES + 14


def floor_mbps(bin_ms: int) -> float:
    """The rate of a bin without delivery opportunity (0.12 Mbit/s for 100-ms bins)."""
    return FRAME_BYTES * 8 / (bin_ms * 1000.0)


class ScheduleError(ValueError):
    """A schedule that names a link that is not there, a trace that cannot be read, ...;
    `field` is the schedule's key at fault (the loader turns it into file:line: field)."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Setting:
    """One direction of a link at one moment. rate None: unshaped."""

    rate_mbps: float | None = None
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0

    def impairs(self) -> bool:
        """True when it delays or drops (what needs sch_netem or a switch's port)."""
        return self.delay_ms > 0 or self.jitter_ms > 0 or self.loss_pct > 0

    def describe(self) -> str:
        parts = [] if self.rate_mbps is None else [f"rate {self.rate_mbps:g} Mbit/s"]
        parts += [
            f"{name} {value:g}{unit}"
            for name, value, unit in (
                ("delay", self.delay_ms, " ms"),
                ("jitter", self.jitter_ms, " ms"),
                ("loss", self.loss_pct, " %"),
            )
            if value
        ]
        return ", ".join(parts) or "unshaped"


class Curve(Protocol):
    """One quantity over time."""

    def value_at(self, t: float) -> float: ...

    def times(self) -> Iterator[float]:
        """The times (s, increasing) at which the value changes; may be endless."""
        ...


@dataclass(frozen=True)
class PointCurve:
    """Points (t, value) sorted by t, t0 = 0; steps, or linear ramps between points."""

    points: tuple[tuple[float, float], ...]
    ramp: bool = False
    step_s: float = 0.5

    def value_at(self, t: float) -> float:
        times = [p[0] for p in self.points]
        i = bisect.bisect_right(times, t) - 1
        t0, v0 = self.points[max(i, 0)]
        if not self.ramp or i + 1 >= len(self.points) or i < 0:
            return v0
        t1, v1 = self.points[i + 1]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)

    def times(self) -> Iterator[float]:
        for (t0, _), (t1, _) in itertools.pairwise(self.points):
            yield t0
            if self.ramp:
                n = math.ceil((t1 - t0) / self.step_s)
                for k in range(1, n):
                    yield round(t0 + k * (t1 - t0) / n, 6)
        yield self.points[-1][0]


@dataclass(frozen=True)
class TraceCurve:
    """A Mahimahi trace as a rate per bin (Mbit/s): the bytes of the bin's delivery
    opportunities (MTU-sized each), floor_mbps(bin) where there are none. Unlooped, the
    link delivers (nearly) nothing after the trace's end."""

    trace: Trace
    bin_ms: int
    loop: bool

    def _count(self, start_ms: int, end_ms: int) -> int:
        """Opportunities in [start_ms, end_ms) of the (looped) trace."""
        return self.trace.count_before(end_ms, self.loop) - self.trace.count_before(
            start_ms, self.loop
        )

    def value_at(self, t: float) -> float:
        i = int(t * 1000 // self.bin_ms)
        count = self._count(i * self.bin_ms, (i + 1) * self.bin_ms)
        mbps = count * MTU_BYTES * 8 / (self.bin_ms * 1000.0)
        return max(mbps, floor_mbps(self.bin_ms))

    def times(self) -> Iterator[float]:
        end = None if self.loop else self.trace.period_ms + self.bin_ms
        for i in itertools.count():
            if end is not None and i * self.bin_ms > end:
                return
            yield round(i * self.bin_ms / 1000.0, 6)


@dataclass
class DirectionPlan:
    """One direction of one scheduled link: its static setting and what changes."""

    node1: str
    node2: str
    direction: str  # "up" | "down"
    base: Setting
    curves: dict[str, Curve] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # schedule names, for the record

    @property
    def label(self) -> str:
        return f"{self.node1}-{self.node2} {self.direction}"

    def setting_at(self, t: float) -> Setting:
        """The configured setting at t seconds from traffic start."""
        values = {q: round(c.value_at(t), 6) for q, c in self.curves.items()}
        return replace(self.base, **values)

    def change_times(self) -> Iterator[float]:
        """Every time (s, increasing, no repeats) its setting may change; starts at 0."""
        last = None
        for t in heapq.merge(*(c.times() for c in self.curves.values())):
            if t != last:
                yield t
                last = t


@dataclass
class LinkPlan:
    """Both directions of one scheduled link."""

    node1: str
    node2: str
    up: DirectionPlan
    down: DirectionPlan

    def directions(self) -> list[DirectionPlan]:
        return [self.up, self.down]

    def shapes(self) -> bool:
        return any("rate_mbps" in d.curves or d.base.rate_mbps for d in self.directions())

    def traced(self) -> bool:
        """True when a direction follows a trace."""
        return any(isinstance(c, TraceCurve) for d in self.directions() for c in d.curves.values())

    def needs_netem(self) -> bool:
        """True when some direction delays or drops at some time."""
        return any(
            d.base.impairs() or any(q != "rate_mbps" for q in d.curves) for d in self.directions()
        )


def direction_plan(spec: TopoSpec, flow: str) -> DirectionPlan | None:
    """The scheduled direction `flow` ("h1-s1 up", the flow of its link_* samples); None
    when that direction has no schedule."""
    for plan in spec.schedules:
        for d in plan.directions():
            if d.label == flow and d.curves:
                return d
    return None


def flow_of(spec: TopoSpec, sender: str, receiver: str) -> str | None:
    """The flow label of what `sender` sends to `receiver` when that direction of their link
    is scheduled, else None."""
    for plan in spec.schedules:
        if {plan.node1, plan.node2} == {sender, receiver}:
            d = plan.up if sender == plan.node1 else plan.down
            return d.label if d.curves else None
    return None


def configured(spec: TopoSpec, flow: str, t: float) -> Setting | None:
    """The setting the study configured for the link direction `flow` ("h1-s1 up", the
    flow of its link_* samples) at t seconds from traffic start; None when that direction
    has no schedule. What a fidelity check compares achieved rate/delay/loss with."""
    d = direction_plan(spec, flow)
    return None if d is None else d.setting_at(t)


def steps_between(
    spec: TopoSpec, flow: str, start: float, end: float
) -> list[tuple[float, Setting]]:
    """The settings in force over [start, end] s from traffic start as (from time, setting)
    steps, the first at `start`: the setting changes only at the plan's change times (the
    scheduler applies a ramp in steps too). Before traffic starts (t < 0) the link holds its
    setting at 0. Empty when `flow` has no schedule."""
    d = direction_plan(spec, flow)
    if d is None:
        return []
    steps = [(start, d.setting_at(max(start, 0.0)))]
    for t in d.change_times():
        if t > end:
            break
        setting = d.setting_at(t)
        if t > start and setting != steps[-1][1]:
            steps.append((t, setting))
    return steps


def select_links(spec: TopoSpec, links: str | list[str]) -> list[Link]:
    """The links a schedule's `links` names; ScheduleError for a name not in the topology."""
    every = spec.links()
    if links == "all":
        return every
    if links == "hosts":
        return [x for x in every if spec.is_host(x.node1) or spec.is_host(x.node2)]
    if links == "core":
        return [x for x in every if not (spec.is_host(x.node1) or spec.is_host(x.node2))]
    by_name = {}
    for x in every:
        by_name[f"{x.node1}-{x.node2}"] = by_name[f"{x.node2}-{x.node1}"] = x
    out = []
    for name in links:
        if name not in by_name:
            known = ", ".join(f"{x.node1}-{x.node2}" for x in every[:8])
            raise ScheduleError(
                f"no link {name!r} in topology {spec.name!r} (links: {known}...)", "links"
            )
        if by_name[name] not in out:
            out.append(by_name[name])
    return out


def _base(link: Link) -> Setting:
    return Setting(link.bw, link.delay_ms or 0.0, 0.0, link.loss_pct or 0.0)


def _trace(path: str | None, key: str, base_dir: Path, cfg: LinkSchedule) -> Curve | None:
    if path is None:
        return None
    full = Path(path) if Path(path).is_absolute() else Path(base_dir) / path
    try:
        return TraceCurve(load_trace(full), cfg.trace_bin_ms, cfg.trace_loop)
    except TraceError as exc:
        raise ScheduleError(str(exc), key) from None


def plan_links(spec: TopoSpec, schedules: dict[str, LinkSchedule], base_dir: Path) -> TopoSpec:
    """A copy of `spec` carrying the schedules' LinkPlans (spec.schedules), its scheduled
    links' static settings set to their values at t = 0 (so the network is built with the
    shaping a change then modifies in place). ScheduleError(field = "NAME.key")."""
    plans: dict[tuple[str, str], LinkPlan] = {}
    for name, cfg in schedules.items():
        try:
            curves = {
                q: PointCurve(
                    tuple(sorted((point_time(k), float(v)) for k, v in points.items())),
                    q in cfg.ramp,
                    cfg.ramp_step_s,
                )
                for q in QUANTITIES
                if (points := getattr(cfg, q)) is not None
            }
            traced = {
                "up": _trace(cfg.trace_up, "trace_up", base_dir, cfg),
                "down": _trace(cfg.trace_down, "trace_down", base_dir, cfg),
            }
            links = select_links(spec, cfg.links)
        except ScheduleError as exc:
            raise ScheduleError(str(exc), f"{name}.{exc.field}") from None
        for link in links:
            key = (link.node1, link.node2)
            plan = plans.get(key) or LinkPlan(
                *key,
                DirectionPlan(*key, "up", _base(link)),
                DirectionPlan(*key, "down", _base(link)),
            )
            plans[key] = plan
            for d in plan.directions():
                wanted: dict[str, Curve] = (
                    dict(curves) if cfg.direction in ("both", d.direction) else {}
                )
                trace = traced[d.direction]
                if trace is not None:
                    wanted["rate_mbps"] = trace
                for q, curve in wanted.items():
                    if q in d.curves:
                        raise ScheduleError(
                            f"link {d.label}: {q} is also scheduled by "
                            f"[topology.schedule.{d.sources[-1]}]; one schedule per quantity",
                            f"{name}.{q}",
                        )
                    d.curves[q] = curve
                if wanted:
                    d.sources.append(name)
    out = spec.copy()
    out.schedules = list(plans.values())
    for plan in out.schedules:
        data = out.graph.edges[plan.node1, plan.node2]
        at0 = [d.setting_at(0.0) for d in plan.directions()]
        rates = [s.rate_mbps for s in at0 if s.rate_mbps is not None]
        if rates:
            data["bw"] = max(rates)
    return out
