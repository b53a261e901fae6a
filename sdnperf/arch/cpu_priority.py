"""The scheduling of the switch processes (`cpu_priority` of a p4 architecture): give the
switch under test the CPU its work needs on a busy machine, and record what it had.

- "normal": as started (SCHED_OTHER, the runner's nice), the default.
- "high": nice -10 on every thread: the fair scheduler gives the switch ~10x the weight
  of a nice-0 task, but it still shares a core and can wait on a run queue.
- "realtime": SCHED_RR at the lowest real-time priority (1) on every thread: no ordinary
  task preempts it, so a recirculating packet's passes are not interrupted. The safety is
  the kernel's real-time throttle (/proc/sys/kernel/sched_rt_runtime_us of
  sched_rt_period_us, 950000 of 1000000 by default): real-time tasks may use at most that
  share of a CPU, so a switch spinning for a long hold cannot lock a core. With the
  throttle off (-1) "realtime" is refused.

Applied to every thread of each switch process once it is up (threads it creates later
inherit the policy from their creator), read back from the kernel for the run's facts.
"""

from __future__ import annotations

import os
from pathlib import Path

CPU_PRIORITIES = ("normal", "high", "realtime")
HIGH_NICE = -10
RT_PRIORITY = 1  # the lowest: above every ordinary task, below any real-time one
RT_RUNTIME = Path("/proc/sys/kernel/sched_rt_runtime_us")
RT_PERIOD = Path("/proc/sys/kernel/sched_rt_period_us")

_POLICY_NAMES = {
    os.SCHED_OTHER: "SCHED_OTHER",
    os.SCHED_FIFO: "SCHED_FIFO",
    os.SCHED_RR: "SCHED_RR",
    getattr(os, "SCHED_BATCH", 3): "SCHED_BATCH",
    getattr(os, "SCHED_IDLE", 5): "SCHED_IDLE",
}


class CpuPriorityError(RuntimeError):
    pass


def rt_throttle(runtime: Path = RT_RUNTIME, period: Path = RT_PERIOD) -> tuple[int, int] | None:
    """(runtime, period) µs of the kernel's real-time throttle; None when unreadable."""
    try:
        return int(runtime.read_text()), int(period.read_text())
    except (OSError, ValueError):
        return None


def check_realtime_safe(throttle: tuple[int, int] | None) -> None:
    """Refuse "realtime" unless the kernel bounds what real-time tasks may take."""
    if throttle is None:
        raise CpuPriorityError(
            f'cpu_priority = "realtime": cannot read {RT_RUNTIME} (the kernel\'s real-time '
            "throttle, the safety that keeps a spinning switch from locking a core)"
        )
    runtime, period = throttle
    if runtime < 0 or runtime >= period:
        raise CpuPriorityError(
            f'cpu_priority = "realtime" refused: {RT_RUNTIME} is {runtime} (of a period of '
            f"{period} µs), so real-time tasks are not throttled and a switch spinning "
            "through a long hold could take a core for good; set it below the period "
            '(the kernel\'s default is 950000) or use cpu_priority = "high"'
        )


def tasks(pid: int) -> list[int]:
    """The thread ids of process `pid` (empty when it is gone)."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except (FileNotFoundError, ProcessLookupError):
        return []


def _set_thread(tid: int, setting: str) -> None:
    if setting == "realtime":
        os.sched_setscheduler(tid, os.SCHED_RR, os.sched_param(RT_PRIORITY))
    else:
        # back to the fair scheduler first (a thread "realtime" before), then its nice
        os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, tid, HIGH_NICE if setting == "high" else 0)


def apply(pids: list[int], setting: str) -> None:
    """Give every thread of each process the setting ("normal" leaves a fresh process as
    it is: nothing is changed)."""
    _check(setting)
    if setting != "normal":
        _set_all(pids, setting)


def set_live(pids: list[int], setting: str) -> None:
    """Switch a running process between settings (experiments that interleave them):
    "normal" is set explicitly, undoing an earlier one."""
    _check(setting)
    _set_all(pids, setting)


def _check(setting: str) -> None:
    if setting not in CPU_PRIORITIES:
        raise CpuPriorityError(f"cpu_priority {setting!r}: one of {', '.join(CPU_PRIORITIES)}")
    if setting == "realtime":
        check_realtime_safe(rt_throttle())


def _set_all(pids: list[int], setting: str) -> None:
    for pid in pids:
        for tid in tasks(pid):
            try:
                _set_thread(tid, setting)
            except ProcessLookupError:
                continue  # a thread that ended meanwhile
            except PermissionError as exc:
                raise CpuPriorityError(
                    f'cpu_priority = "{setting}": not permitted on switch process {pid} '
                    f"(thread {tid}): {exc.strerror}; it needs CAP_SYS_NICE (run as root)"
                ) from None


def read(pids: list[int]) -> dict:
    """What the kernel says the switch threads run with: per (policy, rt priority, nice)
    the number of threads, and the real-time throttle, for a run's facts."""
    seen: dict[str, int] = {}
    for pid in pids:
        for tid in tasks(pid):
            try:
                policy = os.sched_getscheduler(tid)
                prio = os.sched_getparam(tid).sched_priority
                nice = os.getpriority(os.PRIO_PROCESS, tid)
            except (ProcessLookupError, PermissionError):
                continue
            key = describe(policy, prio, nice)
            seen[key] = seen.get(key, 0) + 1
    throttle = rt_throttle()
    return {
        "threads": dict(sorted(seen.items())),
        "rt_throttle_us": f"{throttle[0]}/{throttle[1]}" if throttle else None,
    }


def describe(policy: int, rt_priority: int, nice: int) -> str:
    """e.g. "SCHED_RR prio 1", "SCHED_OTHER nice -10"."""
    name = _POLICY_NAMES.get(policy, f"policy {policy}")
    if policy in (os.SCHED_FIFO, os.SCHED_RR):
        return f"{name} prio {rt_priority}"
    return f"{name} nice {nice}"
