"""Reading /proc: CPU time counters of the machine, each core and single processes.

Parsers take text so the arithmetic is testable on synthetic readings; the `read_*`
helpers do the file access and treat a vanished process as "no reading".
"""
from __future__ import annotations

import os
from dataclasses import dataclass

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # /proc counts CPU time in these units


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative ticks of one /proc/stat cpu line."""

    busy: int
    total: int


@dataclass(frozen=True)
class ProcTimes:
    """Cumulative CPU ticks of one process (all its threads)."""

    pid: int
    ppid: int
    comm: str
    ticks: int  # utime + stime
    start: int  # start time since boot, in ticks: tells a reused PID apart


def parse_proc_stat(text: str) -> dict[str, CpuTimes]:
    """{"cpu": whole machine, "cpu0": ..., "cpu1": ...} from /proc/stat.

    Busy = user + nice + system + irq + softirq + steal; idle = idle + iowait (a core
    waiting for I/O could run something else). guest time is already inside user.
    """
    out = {}
    for line in text.splitlines():
        if not line.startswith("cpu"):
            continue
        name, *fields = line.split()
        v = [int(x) for x in fields] + [0] * (8 - len(fields))
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        busy = user + nice + system + irq + softirq + steal
        out[name] = CpuTimes(busy=busy, total=busy + idle + iowait)
    return out


def parse_pid_stat(text: str) -> ProcTimes:
    """Fields of /proc/PID/stat that matter here. comm may hold spaces and ')'."""
    head, _, rest = text.rpartition(")")
    pid_text, _, comm = head.partition(" (")
    f = rest.split()
    # f[0] is field 3 (state): ppid=4, utime=14, stime=15, starttime=22 -> f[1], f[11], f[12], f[19]
    return ProcTimes(pid=int(pid_text), ppid=int(f[1]), comm=comm,
                     ticks=int(f[11]) + int(f[12]), start=int(f[19]))


def busy_pct(prev: CpuTimes, cur: CpuTimes) -> float:
    """Busy share of one cpu line between two readings, in % (0 when no time passed)."""
    total = cur.total - prev.total
    if total <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * (cur.busy - prev.busy) / total))


def read_proc_stat() -> dict[str, CpuTimes]:
    with open("/proc/stat") as f:
        return parse_proc_stat(f.read())


def read_pid(pid: int) -> ProcTimes | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return parse_pid_stat(f.read())
    except (OSError, ValueError, IndexError):
        return None  # exited (or exiting) between listing and reading


def read_all_pids() -> dict[int, ProcTimes]:
    """Every process on the machine; about 2 ms for 100 processes."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = read_pid(int(name))
            if proc is not None:
                out[proc.pid] = proc
    return out


def descendants(roots: set[int], table: dict[int, ProcTimes]) -> set[int]:
    """PIDs in `table` below any of `roots` (children, grandchildren, ...), roots excluded."""
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found and child not in roots:
                found.add(child)
                stack.append(child)
    return found
