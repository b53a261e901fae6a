"""CPU time counters of the machine, each core and single processes (read with psutil),
and how long tasks waited for a CPU (the kernel's pressure and run-queue accounts).

The conversions from psutil's readings (`cpu_times_of`, `proc_times_of`) and the parsers
(`parse_pressure`, `parse_schedstat`) are pure, so the arithmetic is testable on synthetic
readings; the `read_*` helpers do the reading and treat a vanished process as "no
reading".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import psutil

PRESSURE = Path("/proc/pressure/cpu")

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


# -- waiting for a CPU ------------------------------------------------------------------
# Why: busy shares say how much CPU was used, not who waited for it. Two cores 80 % busy
# can still leave a task that wakes on a timer queued behind others for milliseconds
# (measured: our switch released shaped packets late at 6 % of a core). The kernel
# accounts that wait directly: PSI's "some" (/proc/pressure/cpu: time in which at least
# one runnable task had no CPU, whole machine) and each thread's run-queue time
# (/proc/PID/task/TID/schedstat).


def parse_pressure(text: str) -> int | None:
    """The cumulative "some" stall time (µs) of a /proc/pressure/cpu reading."""
    for line in text.splitlines():
        if line.startswith("some "):
            for part in line.split():
                key, _, value = part.partition("=")
                if key == "total" and value.isdigit():
                    return int(value)
    return None


def read_pressure(path: Path = PRESSURE) -> int | None:
    """PSI "some" for the CPU so far (µs); None where the kernel keeps no pressure
    accounts (built without PSI, or booted with psi=0)."""
    try:
        return parse_pressure(path.read_text())
    except OSError:
        return None


@dataclass(frozen=True)
class Queued:
    """Cumulative run-queue account of one process (all its threads)."""

    wait_ns: int  # time runnable but waiting for a CPU
    runs: int  # times a thread was put on a CPU (each ends one wait)


def parse_schedstat(text: str) -> tuple[int, int, int] | None:
    """(ns on a CPU, ns waiting on a run queue, times run) of one schedstat line."""
    parts = text.split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def read_queued(pid: int) -> Queued | None:
    """The run-queue account of every thread of `pid` summed (a thread that ended is
    left out: its wait is not in the sum any more, so callers take differences only
    between readings of the same process). None when the process is gone."""
    wait = runs = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            read = parse_schedstat((task / "schedstat").read_text())
        except OSError:
            continue  # a thread that ended meanwhile
        if read is not None:
            wait, runs = wait + read[1], runs + read[2]
    return Queued(wait, runs)
