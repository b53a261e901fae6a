"""CPU time counters of the machine, each core and single processes (read with psutil).

The conversions from psutil's readings (`cpu_times_of`, `proc_times_of`) are pure, so the
arithmetic is testable on synthetic readings; the `read_*` helpers do the reading and
treat a vanished process as "no reading".
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

# What one process reading needs; psutil reads them all from one /proc/PID/stat.
_PROC_ATTRS = ["pid", "ppid", "name", "cpu_times", "create_time"]


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative busy and total time of one cpu (or the whole machine), in seconds."""

    busy: float
    total: float


@dataclass(frozen=True)
class ProcTimes:
    """Cumulative CPU time of one process (all its threads)."""

    pid: int
    ppid: int
    comm: str
    cpu_s: float  # user + system seconds
    start: float  # creation time: tells a reused PID apart


def cpu_times_of(t) -> CpuTimes:
    """Busy and total time from one psutil `cpu_times()` reading.

    Busy = user + nice + system + irq + softirq + steal; idle = idle + iowait (a core
    waiting for I/O could run something else). guest time is already inside user.
    """
    busy = t.user + t.nice + t.system + t.irq + t.softirq + t.steal
    return CpuTimes(busy=busy, total=busy + t.idle + t.iowait)


def proc_times_of(info: dict) -> ProcTimes | None:
    """A ProcTimes from psutil's `as_dict(_PROC_ATTRS)`; None when a field could not be read."""
    if any(info.get(key) is None for key in _PROC_ATTRS):
        return None
    times = info["cpu_times"]
    return ProcTimes(
        pid=info["pid"],
        ppid=info["ppid"],
        comm=info["name"],
        cpu_s=times.user + times.system,
        start=info["create_time"],
    )


def busy_pct(prev: CpuTimes, cur: CpuTimes) -> float:
    """Busy share of one cpu between two readings, in % (0 when no time passed)."""
    total = cur.total - prev.total
    if total <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * (cur.busy - prev.busy) / total))


def read_cpu_times() -> dict[str, CpuTimes]:
    """{"cpu": whole machine, "cpu0": ..., "cpu1": ...}."""
    out = {"cpu": cpu_times_of(psutil.cpu_times())}
    for i, t in enumerate(psutil.cpu_times(percpu=True)):
        out[f"cpu{i}"] = cpu_times_of(t)
    return out


def read_pid(pid: int) -> ProcTimes | None:
    try:
        return proc_times_of(psutil.Process(pid).as_dict(_PROC_ATTRS))
    except psutil.Error:
        return None  # exited (or exiting) between listing and reading


def parent_map() -> dict[int, int]:
    """{pid: parent pid} of every process: the cheap full scan (reading every process's
    CPU times too would cost twice as much per sample, for processes nobody watches)."""
    return {
        proc.pid: proc.info["ppid"]
        for proc in psutil.process_iter(["ppid"])
        if proc.info["ppid"] is not None
    }


def descendants(roots: set[int], parent_of: dict[int, int]) -> set[int]:
    """PIDs in `parent_of` below any of `roots` (children, grandchildren, ...), roots excluded."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_of.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found and child not in roots:
                found.add(child)
                stack.append(child)
    return found
