"""Mixed workloads: several member workloads started together on the same network.

Each member runs its own runner (ping, iperf, voip, video, ...) in a thread; they share the
network, not their processes or ports (one member per kind, see MixedConfig). Every sample
and summary of member M is renamed to workload "NAME/M", so each keeps its own metrics in
the store and report. The mix itself (workload NAME) gets the aggregate load:
- aggregate_mbps: sum of the members' throughput_mbps summaries (receiver goodput);
- aggregate_mbps samples over time: the members' per-interval throughput samples summed
  per 1-s bin of their time stamps (each member's clock starts when it starts, within a
  fraction of a second of the others).
If any member fails, the mixed run fails with every member's error, after all members
have finished and every process is reaped. `merge_outputs` is pure.
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import threading
import time
from collections import defaultdict
from typing import Callable

import psutil

from ..samples import Sample, Summary
from .capture import capturing
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .traffic_config import MemberConfig, MixedConfig
from .video_content import prepare

JOIN_POLL_S = 0.2
INTERRUPT_WAIT_S = 30.0  # for members to reap their tools after Ctrl-C


class MemberContext:
    """The network as one member sees it: same hosts, its own log prefix, and every
    process it starts recorded so an interrupt can stop all members at once."""

    def __init__(
        self,
        ctx: WorkloadContext,
        member: str,
        pids: set[int],
        lock: threading.Lock,
        stop: threading.Event | None = None,
    ):
        self._ctx, self._member, self._pids, self._lock = ctx, member, pids, lock
        self._stop = stop or threading.Event()
        self.host_names = ctx.host_names
        self.seed = ctx.seed
        self.results_dir = ctx.results_dir

    def host(self, name: str):
        if self._stop.is_set():  # interrupted: start nothing more
            raise WorkloadError(f"member {self._member}: the mixed run was interrupted")
        return self._ctx.host(name)

    def log(self, msg: str) -> None:
        self._ctx.log(f"[{self._member}] {msg}")

    def on_process(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)
        if self._stop.is_set():  # started just as the run was interrupted
            _kill({pid}, self._lock)
        self._ctx.on_process(pid)


def merge_outputs(name: str, outputs: dict[str, WorkloadOutput]) -> WorkloadOutput:
    """Rename member results to 'NAME/MEMBER' and add the aggregate load under NAME."""
    samples: list[Sample] = []
    summaries: list[Summary] = []
    for member, out in outputs.items():
        label = f"{name}/{member}"
        samples += [dataclasses.replace(s, workload=label) for s in out.samples]
        summaries += [dataclasses.replace(s, workload=label) for s in out.summaries]
    thr = [
        s.value for out in outputs.values() for s in out.summaries if s.metric == "throughput_mbps"
    ]
    if thr:
        summaries.append(Summary(name, "aggregate_mbps", sum(thr), "Mbit/s", "higher"))
    # per flow and 1-s bin (by interval end time): the mean of that flow's samples there
    # (intervals of members started at different instants may share a bin), then summed
    per_flow: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for member, out in outputs.items():
        for s in out.samples:
            if s.metric == "throughput_mbps" and s.t is not None and math.isfinite(s.value):
                per_flow[(member, s.flow, max(0, math.ceil(s.t) - 1))].append(s.value)
    bins: dict[int, float] = defaultdict(float)
    for (_, _, k), values in per_flow.items():
        bins[k] += sum(values) / len(values)
    for k in sorted(bins):
        samples.append(Sample(name, "aggregate_mbps", bins[k], "Mbit/s", "", "", float(k + 1), k))
    return WorkloadOutput(
        samples, summaries, sum(out.processes_started for out in outputs.values())
    )


def run_mixed(
    cfg: MixedConfig,
    ctx: WorkloadContext,
    run_workload: Callable[[MemberConfig, WorkloadContext], WorkloadOutput],
) -> WorkloadOutput:
    """`run_workload` is the seam's dispatcher (base.py passes it): members run like any
    workload."""

    pids: set[int] = set()
    lock = threading.Lock()
    stop = threading.Event()
    outputs: dict[str, WorkloadOutput] = {}
    errors: dict[str, str] = {}

    finished = {m.name: threading.Event() for m in cfg.members}

    def member_main(member) -> None:
        try:
            outputs[member.name] = run_workload(
                member, MemberContext(ctx, member.name, pids, lock, stop)
            )
        except Exception as exc:  # reported with the others below
            errors[member.name] = f"{type(exc).__name__}: {exc}"
        finally:
            finished[member.name].set()

    # Encoding video content (first use) must not compete with the members' traffic.
    for member in cfg.members:
        if member.kind == "video":
            try:
                prepare(member, ctx.log)
            except (RuntimeError, OSError) as exc:
                raise WorkloadError(
                    f"mixed workload '{cfg.name}': {member.name}: no video content: {exc}"
                ) from None
    ctx.log(
        f"{cfg.name}: {len(cfg.members)} workloads at once: "
        + ", ".join(f"{m.name} ({m.kind})" for m in cfg.members)
    )
    with capturing(cfg, ctx):
        threads = [
            threading.Thread(target=member_main, args=(m,), name=f"mix-{m.name}", daemon=True)
            for m in cfg.members
        ]
        for t in threads:
            t.start()
        # Events, not Thread.join: a join interrupted by Ctrl-C can return early on the
        # next call while the thread still runs (CPython issue 90882).
        try:
            for event in finished.values():
                while not event.wait(JOIN_POLL_S):
                    pass
        except KeyboardInterrupt:
            # Members wait on their tools; killing the tools ends those waits, and each
            # member's ProcessGroup then reaps what it started.
            stop.set()
            _kill(pids, lock)
            deadline = time.monotonic() + INTERRUPT_WAIT_S
            for event in finished.values():
                event.wait(max(0.0, deadline - time.monotonic()))
            raise
    if errors:
        raise WorkloadError(
            f"mixed workload '{cfg.name}': " + "; ".join(f"{m}: {e}" for m, e in errors.items())
        )
    ordered = {m.name: outputs[m.name] for m in cfg.members}
    return merge_outputs(cfg.name, ordered)


def _kill(pids: set[int], lock: threading.Lock) -> None:
    with lock:
        targets = list(pids)
    for pid in targets:
        # Only our own unreaped children: a reaped PID may already belong to someone else.
        if _parent(pid) != os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _parent(pid: int) -> int | None:
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return None
