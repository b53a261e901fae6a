"""CPU use of the machine, its cores and the run's processes; the "CPU-bound" mark; and
who waited for a CPU (the kernel's PSI "some" share of the run, each role's run-queue
time), recorded beside the mark: a task can wait with no core saturated.

`CpuSampler` reads the counters (psutil) in a background thread every `interval` seconds. The arithmetic
(`interval_between`, `summarize`, `judge`) is pure, so the rule is tested on synthetic
readings.

    sampler = CpuSampler(interval=0.5)
    sampler.watch("switch", vswitchd_pid)
    sampler.watch("controller", controller_pid)
    sampler.start()
    ...                       # run the workload; watch("traffic", pid) may come later
    report = sampler.stop()   # CpuReport
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ..samples import CpuReport
from .procstat import (
    CpuTimes,
    ProcTimes,
    Queued,
    busy_pct,
    descendants,
    parent_map,
    read_cpu_times,
    read_pid,
    read_pressure,
    read_queued,
)

# ---- When is a run CPU-bound? ---------------------------------------------------------
# Why: when the CPU is the bottleneck, a result measures the machine, not the architecture
# (a saturated CPU looks like a slow switch). That happens in two ways:
#  1. the whole machine has (almost) no idle time left, so switches, controllers and
#     traffic tools queue for the CPU;
#  2. one process uses a whole core (a single-threaded Python controller, ovs-vswitchd's
#     userspace datapath, an iperf3 at full TCP speed) even while other cores idle: that
#     process, not the network, sets the pace.
# Short bursts are normal (a controller answering the first packet-ins), so a condition
# must hold for at least a quarter of the sampled time.
MACHINE_SATURATED_PCT = 90.0  # whole-machine busy %, all cores together
PROCESS_SATURATED_PCT = 95.0  # one watched process, % of one core
SATURATED_SHARE = 0.25  # share of the sampled time a condition must hold
# ----------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    """One reading of the counters."""

    t: float  # time.monotonic()
    cpus: dict[str, CpuTimes]  # "cpu" (machine), "cpu0", "cpu1", ...
    procs: dict[tuple[str, int], ProcTimes]  # (role, pid) -> times
    pressure_us: int | None = None  # PSI "some" so far (None: the kernel keeps none)
    queued: dict[tuple[str, int], Queued] = field(default_factory=dict)  # run-queue accounts


@dataclass
class Interval:
    """CPU use between two snapshots."""

    seconds: float
    machine: float  # busy % of the whole machine
    cores: list[float]  # busy % per core
    procs: dict[tuple[str, int], float] = field(default_factory=dict)  # % of one core
    names: dict[int, str] = field(default_factory=dict)  # pid -> command name
    # % of the interval in which a runnable task waited for a CPU (PSI "some", machine)
    cpu_wait_pct: float | None = None
    # (role, pid) -> (seconds its threads waited on run queues, times they were run)
    queued: dict[tuple[str, int], tuple[float, int]] = field(default_factory=dict)


def interval_between(prev: Snapshot, cur: Snapshot) -> Interval:
    """Busy shares between two snapshots. A process counts only when both snapshots saw
    it with the same start time (so exits and PID reuse never produce bogus numbers)."""
    seconds = max(cur.t - prev.t, 1e-9)
    cores = sorted((k for k in cur.cpus if k != "cpu" and k in prev.cpus), key=lambda k: int(k[3:]))
    out = Interval(
        seconds=cur.t - prev.t,
        machine=busy_pct(prev.cpus["cpu"], cur.cpus["cpu"]),
        cores=[busy_pct(prev.cpus[k], cur.cpus[k]) for k in cores],
    )
    for key, now in cur.procs.items():
        before = prev.procs.get(key)
        if before is None or before.start != now.start:
            continue
        out.procs[key] = 100.0 * (now.cpu_s - before.cpu_s) / seconds
        out.names[now.pid] = now.comm
        q0, q1 = prev.queued.get(key), cur.queued.get(key)
        if q0 is not None and q1 is not None:
            # a thread that ended takes its account with it: never below zero
            out.queued[key] = (max(q1.wait_ns - q0.wait_ns, 0) / 1e9, max(q1.runs - q0.runs, 0))
    if prev.pressure_us is not None and cur.pressure_us is not None:
        stalled = max(cur.pressure_us - prev.pressure_us, 0) / 1e6
        out.cpu_wait_pct = min(100.0, 100.0 * stalled / seconds)
    return out


def judge(intervals: list[Interval]) -> tuple[bool, str]:
    """Apply the CPU-bound rule above; returns (cpu_bound, reason in words)."""
    total = sum(iv.seconds for iv in intervals)
    if total <= 0:
        return False, ""
    reasons = []
    hot = sum(iv.seconds for iv in intervals if iv.machine >= MACHINE_SATURATED_PCT)
    if hot / total >= SATURATED_SHARE:
        peak = max(iv.machine for iv in intervals)
        reasons.append(
            f"the whole machine was at least {MACHINE_SATURATED_PCT:.0f} % busy "
            f"for {hot / total:.0%} of the run (peak {peak:.0f} %)"
        )
    busy_time: dict[tuple[str, int], float] = {}
    names: dict[int, str] = {}
    for iv in intervals:
        names.update(iv.names)
        for key, pct in iv.procs.items():
            if pct >= PROCESS_SATURATED_PCT:
                busy_time[key] = busy_time.get(key, 0.0) + iv.seconds
    for (role, pid), seconds in sorted(busy_time.items(), key=lambda kv: -kv[1]):
        if seconds / total >= SATURATED_SHARE:
            reasons.append(
                f"{role} process {names.get(pid, '?')} (pid {pid}) used at least "
                f"{PROCESS_SATURATED_PCT:.0f} % of a core for {seconds / total:.0%} "
                f"of the run"
            )
    return bool(reasons), "; ".join(reasons)


def summarize(intervals: list[Interval], roles: list[str]) -> CpuReport:
    """Time-weighted means over the intervals, peak machine load and the CPU-bound mark.

    per_role[r] is the mean of the summed use of all r's processes, in % of one core
    (200 = two cores' worth), over the whole sampled time.
    """
    total = sum(iv.seconds for iv in intervals)
    if total <= 0:
        return CpuReport(per_role={r: 0.0 for r in roles})
    per_role = {r: 0.0 for r in roles}
    for iv in intervals:
        for (role, _pid), pct in iv.procs.items():
            per_role[role] = per_role.get(role, 0.0) + pct * iv.seconds / total
    n_cores = max(len(iv.cores) for iv in intervals)
    per_core = [
        sum(iv.cores[i] * iv.seconds for iv in intervals if i < len(iv.cores)) / total
        for i in range(n_cores)
    ]
    bound, reason = judge(intervals)
    waited = [(iv.seconds, iv.cpu_wait_pct) for iv in intervals if iv.cpu_wait_pct is not None]
    waited_s = sum(seconds for seconds, _ in waited)
    queued_ms = {r: 0.0 for r in roles}
    queued_runs = {r: 0 for r in roles}
    for iv in intervals:
        for (role, _pid), (wait_s, runs) in iv.queued.items():
            queued_ms[role] = queued_ms.get(role, 0.0) + wait_s * 1e3
            queued_runs[role] = queued_runs.get(role, 0) + runs
    return CpuReport(
        per_role=per_role,
        per_core=per_core,
        peak_total=max(iv.machine for iv in intervals),
        cpu_bound=bound,
        reason=reason,
        cpu_wait_pct=(
            round(sum(seconds * pct for seconds, pct in waited) / waited_s, 2)
            if waited_s > 0
            else None
        ),
        queued_ms={r: round(ms, 3) for r, ms in queued_ms.items()},
        queued_runs=queued_runs,
    )


def waits_in_words(report: CpuReport, role: str) -> str:
    """Who waited for a CPU over the run ("" when nothing was recorded): the machine's
    PSI "some" share and `role`'s run-queue time, beside the CPU it used."""
    parts = []
    if report.cpu_wait_pct is not None:
        parts.append(
            f"runnable tasks waited for a CPU {report.cpu_wait_pct:.0f} % of the time (PSI some)"
        )
    runs = report.queued_runs.get(role, 0)
    if runs:
        ms = report.queued_ms.get(role, 0.0)
        parts.append(
            f"the {role} waited {ms:.0f} ms on run queues ({1e3 * ms / runs:.0f} µs on average "
            f"over {runs} runs) and used {report.per_role.get(role, 0.0):.0f} % of a core"
        )
    return "; ".join(parts)


class CpuSampler:
    """Samples the counters in a background thread between `start()` and `stop()`.

    `watch(role, pid)` may be called before or during sampling, several times per role.
    With `include_children`, every descendant of a watched PID counts for its role (found
    by listing every process's parent, a few ms per 100 processes); a process under two roles counts for
    both. Processes that exit are simply dropped from later intervals. `stop()` may be
    called again; it returns the same report.
    """

    def __init__(self, interval: float = 0.5, include_children: bool = True):
        if interval <= 0:
            raise ValueError("interval must be > 0 seconds")
        self.interval = interval
        self.include_children = include_children
        self.intervals: list[Interval] = []  # the timeline, for plots
        self.errors: list[str] = []  # problems reading the counters; sampling goes on
        self._watched: dict[str, set[int]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._prev: Snapshot | None = None

    def watch(self, role: str, pid: int) -> None:
        with self._lock:
            self._watched.setdefault(role, set()).add(int(pid))

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("CpuSampler already started")
        self._prev = self._snapshot()
        self._thread = threading.Thread(target=self._loop, name="sdnperf-cpu", daemon=True)
        self._thread.start()

    def stop(self) -> CpuReport:
        """Stop sampling (takes one last reading) and return the report."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample()  # the part of the last interval before stop()
        with self._lock:
            roles = list(self._watched)
        return summarize(self.intervals, roles)

    def __enter__(self) -> "CpuSampler":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        try:
            cur = self._snapshot()
        except Exception as exc:  # never let a /proc oddity kill the run
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        if self._prev is not None and cur.t - self._prev.t > 0.01:
            self.intervals.append(interval_between(self._prev, cur))
            self._prev = cur

    def _snapshot(self) -> Snapshot:
        with self._lock:
            watched = {role: set(pids) for role, pids in self._watched.items()}
        t = time.monotonic()
        cpus = read_cpu_times()
        parent_of = parent_map() if self.include_children and watched else {}
        pressure = read_pressure()
        procs: dict[tuple[str, int], ProcTimes] = {}
        queued: dict[tuple[str, int], Queued] = {}
        read: dict[int, ProcTimes | None] = {}  # a process under two roles is read once
        waits: dict[int, Queued | None] = {}
        for role, roots in watched.items():
            for pid in roots | descendants(roots, parent_of):
                if pid not in read:
                    read[pid] = read_pid(pid)
                    waits[pid] = read_queued(pid)
                if (times := read[pid]) is not None:
                    procs[(role, pid)] = times
                    if (q := waits[pid]) is not None:
                        queued[(role, pid)] = q
        return Snapshot(t, cpus, procs, pressure, queued)
