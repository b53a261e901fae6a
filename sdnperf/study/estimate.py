"""How long a plan will take, for `sdnperf check`: workload durations from the study file
plus network build times measured by earlier runs (the store keeps `network_ready_s` of
every run), or documented constants where nothing was measured."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from sdnperf.topo.spec import count_of

# Seconds to build a network and get it ready when no earlier run measured it: a small
# topology with a controller on the 2-core lab machine (campus + P4 takes longer).
NETWORK_BUILD_S = 5.0
TEARDOWN_S = 1.0  # stopping the network, daemons and controller; storing the run
UNKNOWN_WORKLOAD_S = 10.0  # a workload whose length the file does not say (unbound bytes)


def workload_seconds(wl) -> float:
    """The planned length of one workload run, from its configuration."""
    if getattr(wl, "kind", "") == "mixed":
        return max((workload_seconds(m) for m in wl.members), default=UNKNOWN_WORKLOAD_S)
    duration = getattr(wl, "duration", None)
    if duration:
        return float(duration)
    count = getattr(wl, "count", None) or getattr(wl, "connections", None)
    interval = getattr(wl, "interval", None)
    if count and interval is not None:
        return count * interval + 1.0  # + the cold first packet/connection
    size, rate = getattr(wl, "byte_count", None), getattr(wl, "rate_bps", None)
    if size and rate:
        return size * 8 / rate  # fixed bytes at a bound rate (TCP bound or UDP rate)
    return UNKNOWN_WORKLOAD_S


@dataclass
class Estimate:
    seconds: float
    measured: int  # runs whose build time came from measurements
    assumed: int  # runs that used NETWORK_BUILD_S

    def text(self) -> str:
        minutes = self.seconds / 60
        when = f"~{minutes:.0f} min" if minutes >= 2 else f"~{self.seconds:.0f} s"
        how = []
        if self.measured:
            how.append(f"{count_of(self.measured, 'run')} with measured network build times")
        if self.assumed:
            how.append(
                f"{count_of(self.assumed, 'run')} assuming {NETWORK_BUILD_S:.0f} s "
                "per network build"
            )
        return f"{when} ({'; '.join(how)})"


def build_times(runs) -> dict[tuple[str, str], float]:
    """Median network_ready_s per (topology, architecture) of stored runs, and per
    ("", architecture) over every topology."""
    seen: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in runs:
        ready = r.params.get("network_ready_s") if isinstance(r.params, dict) else None
        if isinstance(ready, (int, float)):
            seen[(r.topology, r.architecture)].append(float(ready))
            seen[("", r.architecture)].append(float(ready))
    return {k: statistics.median(v) for k, v in seen.items()}


def estimate(plan, measured: dict[tuple[str, str], float] | None = None) -> Estimate:
    measured = measured or {}
    total, from_store, assumed = 0.0, 0, 0
    for run in plan:
        build = measured.get(
            (run.topology, run.architecture.name), measured.get(("", run.architecture.name))
        )
        if build is None:
            build, assumed = NETWORK_BUILD_S, assumed + 1
        else:
            from_store += 1
        total += build + workload_seconds(run.workload) + TEARDOWN_S
    return Estimate(total, from_store, assumed)
