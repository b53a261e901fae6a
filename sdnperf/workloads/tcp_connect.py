"""TCP handshake (SYN) delay: many new TCP connections per host pair, each one timed.

A listener (agents/tcp_listener.py) on every destination accepts and closes connections;
a probe (agents/tcp_connect_probe.py) on every source opens `connections` connections one
after the other and times connect(), which returns when the SYN-ACK is in: the handshake
delay as the client sees it. All pairs run at once. The first connection of each pair is
the "cold" one: on a fresh network it pays ARP and, on a reactive architecture, the
controller's flow setup; the rest are "steady". `parse_probe` and `connect_output` are pure.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..samples import Sample, Summary
from .agents import agent_argv, wait_ready
from .capture import capturing
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .pairs import resolve_pairs
from .procs import ProcessGroup
from .traffic_config import TcpConnectConfig

PORT = 6100
READY_TIMEOUT_S = 5.0
HANG_MARGIN_S = 10.0


@dataclass
class Attempt:
    seq: int
    wall: float  # unix time the connect() began
    ms: float | None  # None: failed
    reason: str = ""


@dataclass
class ProbeResult:
    attempts: list[Attempt] = field(default_factory=list)


def parse_probe(text: str) -> ProbeResult:
    """Lines 'SEQ UNIX MS' or 'SEQ UNIX FAIL REASON'; anything else is ignored."""
    res = ProbeResult()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        try:
            seq, wall = int(parts[0]), float(parts[1])
            if parts[2] == "FAIL":
                res.attempts.append(Attempt(seq, wall, None, " ".join(parts[3:])))
            else:
                res.attempts.append(Attempt(seq, wall, float(parts[2])))
        except ValueError:
            continue
    return res


def _percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def connect_output(
    name: str, results: dict[str, ProbeResult], t0: float, expected: int
) -> WorkloadOutput:
    """Samples (one per connection) and summaries.

    - connect_first_ms: mean over pairs of the first (cold) connection's handshake time;
    - connect_ms / connect_p50_ms / connect_p95_ms / connect_max_ms: over every later
      (steady) connection of every pair;
    - connect_fail_pct: failed or never-attempted connections / (pairs x connections).
    """
    samples, summaries = [], []
    firsts: list[float] = []  # connect ms of each flow's first connection (cold)
    steady: list[float] = []
    failed = 0
    for flow, res in results.items():
        by_seq = {a.seq: a for a in res.attempts}
        failed += expected - len([a for a in res.attempts if a.ms is not None])
        for seq in sorted(by_seq):
            a = by_seq[seq]
            phase = "cold" if seq == 1 else "steady"
            t = round(a.wall - t0, 6)
            if a.ms is None:
                samples.append(
                    Sample(name, "connect_failed", 1.0, "connection", flow, phase, t, seq)
                )
                continue
            samples.append(Sample(name, "connect_ms", a.ms, "ms", flow, phase, t, seq))
            (firsts if seq == 1 else steady).append(a.ms)
    if firsts:
        summaries.append(Summary(name, "connect_first_ms", statistics.fmean(firsts), "ms"))
    if steady:
        summaries += [
            Summary(name, "connect_ms", statistics.fmean(steady), "ms"),
            Summary(name, "connect_p50_ms", _percentile(steady, 50), "ms"),
            Summary(name, "connect_p95_ms", _percentile(steady, 95), "ms"),
            Summary(name, "connect_max_ms", max(steady), "ms"),
        ]
    total = expected * len(results)
    if total:
        summaries.append(Summary(name, "connect_fail_pct", 100.0 * failed / total, "%"))
    return WorkloadOutput(samples, summaries)


def run_tcp_connect(cfg: TcpConnectConfig, ctx: WorkloadContext) -> WorkloadOutput:
    pairs = resolve_pairs(cfg.pairs, ctx.host_names, ctx.seed)
    dsts = sorted({d for _, d in pairs})
    with (
        tempfile.TemporaryDirectory(prefix="sdnperf-tcpc-") as tmp,
        ProcessGroup(ctx) as group,
        capturing(cfg, ctx),
    ):
        ready = {d: Path(tmp) / f"{d}.ready" for d in dsts}
        servers = {
            d: group.start(
                ctx.host(d),
                agent_argv("tcp_listener", ctx.host(d).IP(), PORT, ready[d]),
                f"listener {d}",
            )
            for d in dsts
        }
        wait_ready(ready, servers, "tcp listener", READY_TIMEOUT_S)
        ctx.log(f"{cfg.name}: {cfg.connections} connection(s) on {len(pairs)} pair(s)")
        t0 = time.time()
        probes = {}
        for src, dst in pairs:
            argv = agent_argv(
                "tcp_connect_probe",
                ctx.host(dst).IP(),
                PORT,
                cfg.connections,
                cfg.interval,
                cfg.timeout,
            )
            probes[f"{src}->{dst}"] = group.start(ctx.host(src), argv, f"probe {src}->{dst}")
        limit = cfg.connections * (cfg.interval + cfg.timeout) + HANG_MARGIN_S
        group.wait(list(probes.values()), limit)
        results, problems = {}, []
        for flow, proc in probes.items():
            res = parse_probe(proc.output())
            if proc.timed_out:
                problems.append(f"{flow}: probe hung and was killed after {limit:.0f} s")
            elif not res.attempts:
                problems.append(f"{flow}: probe printed nothing: {proc.errors()[-300:]}")
            results[flow] = res
        started = group.started
    if problems:
        raise WorkloadError(f"tcp-connect workload '{cfg.name}': " + "; ".join(problems))
    out = connect_output(cfg.name, results, t0, cfg.connections)
    out.processes_started = started
    return out
