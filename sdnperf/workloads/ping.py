"""ICMP echo with iputils `ping`: a cold first packet per pair, then a steady series.

All pairs run at once: first every pair's single cold packet (on the fresh network, so it
pays for ARP, MAC learning and any controller round trip), then every pair's steady series.
`parse_ping` and `ping_output` are pure, so they are tested on recorded outputs.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

from ..samples import Sample, Summary
from . import control_frames
from .basic_config import PingConfig
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .host_capture import host_captures
from .pairs import resolve_pairs
from .procs import ProcessGroup

# Extra seconds beyond the series' own length before a ping counts as hung.
HANG_MARGIN_S = 5.0

_REPLY = re.compile(
    r"^(?:\[(?P<ts>\d+\.\d+)\]\s+)?\d+ bytes from [^:]+: icmp_seq=(?P<seq>\d+)"
    r".*?time[=<](?P<rtt>[\d.]+) ms(?P<dup> \(DUP!\))?"
)
_TOTALS = re.compile(r"^(?P<tx>\d+) packets transmitted, (?P<rx>\d+) received")


@dataclass
class Reply:
    seq: int
    rtt_ms: float
    ts: float | None  # unix time the reply was printed (ping -D), if present


@dataclass
class PingResult:
    """What one ping process saw."""

    replies: list[Reply] = field(default_factory=list)  # first reply per seq, in order
    transmitted: int = 0
    received: int = 0

    @property
    def lost_seqs(self) -> list[int]:
        answered = {r.seq for r in self.replies}
        return [s for s in range(1, self.transmitted + 1) if s not in answered]


def parse_ping(text: str) -> PingResult:
    """Parse iputils ping output (-D timestamps optional). Duplicate replies are dropped.

    Without the closing statistics (ping killed), `transmitted` is the highest seq seen
    in a reply or a "no answer yet" line (-O), so losses up to that point still count.
    """
    result = PingResult()
    seen: set[int] = set()
    highest = 0
    totals = None
    for line in text.splitlines():
        line = line.strip()
        if m := _REPLY.match(line):
            seq = int(m["seq"])
            highest = max(highest, seq)
            if m["dup"] or seq in seen:
                continue
            seen.add(seq)
            ts = float(m["ts"]) if m["ts"] else None
            result.replies.append(Reply(seq, float(m["rtt"]), ts))
        elif m := re.search(r"no answer yet for icmp_seq=(\d+)", line):
            highest = max(highest, int(m[1]))
        elif m := _TOTALS.match(line):
            totals = (int(m["tx"]), int(m["rx"]))
    if totals:
        result.transmitted, result.received = totals
    else:
        result.transmitted, result.received = highest, len(result.replies)
    return result


def ping_argv(
    dst_ip: str,
    count: int,
    interval: float,
    size: int,
    reply_timeout: float,
    deadline: int | None = None,
) -> list[str]:
    # -n: no DNS; -D: timestamp each line; -O: say when a reply is overdue. With a
    # deadline (-w), -c counts replies: ping sends until `count` came back or time is up.
    return [
        "ping",
        "-n",
        "-D",
        "-O",
        "-c",
        str(count),
        "-i",
        f"{interval:g}",
        "-s",
        str(size),
        "-W",
        f"{reply_timeout:g}",
        *(["-w", str(deadline)] if deadline is not None else []),  # whole seconds
        dst_ip,
    ]


ICMP_IP_OVERHEAD = 8 + 20  # ICMP header + IPv4 header around ping's -s payload
THROUGHPUT_BIN_S = 1.0


def icmp_throughput_series(
    reply_times: list[float], packet_bytes: int, start: float, end: float, bin_s: float = 1.0
) -> list[tuple[float, float]]:
    """ICMP throughput over time as a capture at the pinging host shows it (000 Figs 3-4):
    the echo replies' IP bytes received in each `bin_s` window from `start`, in bit/s, as
    (window end, bit/s) for every window up to `end` (an empty window is 0 bit/s).
    Times are seconds on any one clock."""
    if end <= start:
        return []
    bins = max(1, math.ceil((end - start) / bin_s - 1e-9))
    counts = [0] * bins
    for t in reply_times:
        i = int((t - start) // bin_s)
        if 0 <= i < bins:
            counts[i] += 1
    return [(round((i + 1) * bin_s, 6), n * packet_bytes * 8 / bin_s) for i, n in enumerate(counts)]


def icmp_throughput(replies: int, packet_bytes: int, seconds: float) -> float | None:
    """Mean ICMP throughput of one flow, bit/s: the echo replies' IP bits over the series'
    length (count x interval): 1000 replies of 1500 bytes in 1000 s = 12,000 bit/s."""
    return replies * packet_bytes * 8 / seconds if seconds > 0 else None


def ping_output(
    name: str,
    cold: dict[str, PingResult],
    steady: dict[str, PingResult],
    t0: float,
    size: int | None = None,
    interval: float | None = None,
    steady_t0: float | None = None,
) -> WorkloadOutput:
    """Samples and summaries from parsed results keyed by flow ("h1->h2").

    Summaries (pooled over pairs):
    - rtt_first_ms: mean over pairs of the cold packet's RTT (pairs whose cold packet was
      answered); loss_first_pct: share of pairs whose cold packet got no reply;
    - rtt_ms / rtt_min_ms / rtt_max_ms / rtt_mdev_ms: over every steady reply of every pair
      (mdev as ping defines it: sqrt(mean(x^2) - mean(x)^2));
    - loss_pct: lost / sent over all packets, cold ones included.
    - icmp_throughput_bps (when `size` and `interval` are given): mean over pairs of the
      steady series' echo-reply IP bits per second of the series' length, and per pair a
      1-s series of the same (samples, time from the workload's start).
    Each lost packet is also a Sample (metric "lost", value 1) so it is visible in the data.
    """
    samples: list[Sample] = []
    summaries: list[Summary] = []
    sent = lost = 0
    for phase, results in (("cold", cold), ("steady", steady)):
        for flow, res in results.items():
            for r in res.replies:
                t = None if r.ts is None else round(r.ts - t0, 6)
                samples.append(Sample(name, "rtt_ms", r.rtt_ms, "ms", flow, phase, t, r.seq))
            for seq in res.lost_seqs:
                samples.append(Sample(name, "lost", 1.0, "packet", flow, phase, None, seq))
            sent += res.transmitted
            lost += len(res.lost_seqs)

    if cold:
        firsts = [res.replies[0].rtt_ms for res in cold.values() if res.replies]
        if firsts:
            summaries.append(Summary(name, "rtt_first_ms", sum(firsts) / len(firsts), "ms"))
        summaries.append(
            Summary(name, "loss_first_pct", 100.0 * (len(cold) - len(firsts)) / len(cold), "%")
        )

    rtts = [r.rtt_ms for res in steady.values() for r in res.replies]
    if rtts:
        mean = sum(rtts) / len(rtts)
        mdev = math.sqrt(max(0.0, sum(x * x for x in rtts) / len(rtts) - mean * mean))
        summaries += [
            Summary(name, "rtt_ms", mean, "ms"),
            Summary(name, "rtt_min_ms", min(rtts), "ms"),
            Summary(name, "rtt_max_ms", max(rtts), "ms"),
            Summary(name, "rtt_mdev_ms", mdev, "ms"),
        ]
    if sent:
        summaries.append(Summary(name, "loss_pct", 100.0 * lost / sent, "%"))
    if size is not None and interval and steady:
        samples_t, rates = _icmp_throughput(name, steady, t0, size, interval, steady_t0)
        samples += samples_t
        if rates:
            summaries.append(
                Summary(name, "icmp_throughput_bps", sum(rates) / len(rates), "bit/s", "higher")
            )
    return WorkloadOutput(samples, summaries)


def _icmp_throughput(
    name: str,
    steady: dict[str, PingResult],
    t0: float,
    size: int,
    interval: float,
    steady_t0: float | None,
) -> tuple[list[Sample], list[float]]:
    packet = size + ICMP_IP_OVERHEAD
    samples, rates = [], []
    start = t0 if steady_t0 is None else steady_t0
    for flow, res in steady.items():
        seconds = res.transmitted * interval
        rate = icmp_throughput(len(res.replies), packet, seconds)
        if rate is not None:
            rates.append(rate)
        times = [r.ts for r in res.replies if r.ts is not None]
        if not times:
            continue
        series = icmp_throughput_series(times, packet, start, start + seconds, THROUGHPUT_BIN_S)
        offset = start - t0
        for i, (t, bps) in enumerate(series):
            samples.append(
                Sample(
                    name,
                    "icmp_throughput_bps",
                    bps,
                    "bit/s",
                    flow,
                    "steady",
                    round(offset + t, 6),
                    i,
                )
            )
    return samples, rates


def run_ping(cfg: PingConfig, ctx: WorkloadContext) -> WorkloadOutput:
    pairs = resolve_pairs(cfg.pairs, ctx.host_names, ctx.seed)
    flows = {f"{src}->{dst}": (src, dst) for src, dst in pairs}
    if not cfg.control_frames:
        return _run_ping(cfg, ctx, flows)[0]
    clients = sorted({src for src, _ in pairs})
    points = [(h, h, control_frames.BPF) for h in clients]
    with host_captures(ctx, points, control_frames.SNAPLEN) as pcaps:
        out, t0 = _run_ping(cfg, ctx, flows)
        t_end = time.time()
    for host, data in pcaps.items():
        binned = control_frames.per_second(control_frames.frame_times(data), t0, t_end)
        out.samples += control_frames.samples(cfg.name, host, binned)
    return out


def _run_ping(cfg: PingConfig, ctx: WorkloadContext, flows) -> tuple[WorkloadOutput, float]:
    """The cold and steady series; the output and when the workload started (time.time)."""
    with ProcessGroup(ctx) as group:
        t0 = time.time()
        cold: dict[str, PingResult] = {}
        if cfg.cold:
            ctx.log(f"{cfg.name}: cold ping on {len(flows)} pair(s)")
            cold = _ping_all(group, ctx, flows, cfg, count=1, what="cold")
        ctx.log(
            f"{cfg.name}: steady ping, {cfg.count} x {cfg.interval:g} s on {len(flows)} pair(s)"
        )
        steady_t0 = time.time()
        steady = _ping_all(group, ctx, flows, cfg, count=cfg.count, what="steady")
        out = ping_output(cfg.name, cold, steady, t0, cfg.size, cfg.interval, steady_t0)
        out.processes_started = group.started
    for flow, res in cold.items():
        if not res.replies:
            ctx.log(f"{cfg.name}: cold ping {flow} lost (no reply within {cfg.reply_timeout:g} s)")
    return out, t0


def _ping_all(
    group: ProcessGroup,
    ctx: WorkloadContext,
    flows: dict[str, tuple[str, str]],
    cfg: PingConfig,
    count: int,
    what: str,
) -> dict[str, PingResult]:
    procs = {}
    for flow, (src, dst) in flows.items():
        argv = ping_argv(ctx.host(dst).IP(), count, cfg.interval, cfg.size, cfg.reply_timeout)
        procs[flow] = group.start(ctx.host(src), argv, f"{what} ping {flow}")
    expected = (count - 1) * cfg.interval + cfg.reply_timeout
    group.wait(list(procs.values()), expected + HANG_MARGIN_S)
    results, problems = {}, []
    for flow, proc in procs.items():
        res = parse_ping(proc.output())
        if proc.timed_out:
            problems.append(
                f"{flow}: ping hung and was killed after {expected + HANG_MARGIN_S:.0f} s"
            )
        elif res.transmitted == 0:
            detail = proc.errors() or f"exit code {proc.returncode}, no packets sent"
            problems.append(f"{flow}: ping failed: {detail}")
        results[flow] = res
    if problems:
        raise WorkloadError(f"ping workload '{cfg.name}' ({what}): " + "; ".join(problems))
    return results
