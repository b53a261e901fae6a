"""TCP bulk and UDP constant-bit-rate traffic with iperf3, many pairs at once.

Each pair gets its own one-shot server (`iperf3 -s -1 -J -B <dst ip> -p <port>`) on the
destination, with a distinct port so several pairs can share a destination. Clients run
with `--json --get-server-output`, so one JSON document per pair holds both the sender's
and the receiver's view; numbers are taken from the receiver where iperf3 reports them.
`parse_iperf3`, `tcp_output` and `udp_output` are pure, so they are tested on recorded runs.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ..samples import Sample, Summary
from .basic_config import IperfTcpConfig, IperfUdpConfig, Pairs
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .jitter import eq1_over_flows
from .pairs import resolve_pairs
from .procs import Launched, ProcessGroup, listens
from .udp_owd import owd_output, receiver_captures

BASE_PORT = 5201  # TCP pair i uses BASE_PORT + i
UDP_BASE_PORT = 5701  # UDP pair i: apart from TCP, so one mix can send both to one host
SERVER_START_TIMEOUT_S = 5.0
SERVER_EXIT_WAIT_S = 2.0  # after the clients: time for one-shot servers to exit by themselves
CONNECT_TIMEOUT_MS = 5000  # a reactive controller may delay the first SYN; not by 5 s
DURATION_MARGIN_S = 15.0  # connect + result exchange, beyond the test's own duration
BYTES_MODE_LIMIT_S = 120.0  # fixed-bytes transfers have no duration to add a margin to
TAIL_FRACTION = 0.1  # a last interval shorter than this share of the one before is dropped
# UDP: the datagrams sent in the sender's last END_GRACE_S that never arrived are not
# counted lost: iperf3's receiver stops on the end-of-test message, which races the last
# datagrams (on a clean link about one run in two left one datagram unread); a switch
# holding datagrams back leaves hundreds
END_GRACE_S = 0.02
# ... and a datagram that arrives up to LATE_GRACE_S after the sender's end is in time:
# iperf3's receiver starts its clock when it sends TEST_START, one-way delay d before the
# sender gets it and starts its own, so the last datagrams arrive 2d after the sender's
# end in the receiver's time. 1 s covers delays up to 0.5 s each way;
# a held end of test stretches the receiver by seconds (bench/recirc/README.md: 35 s)
LATE_GRACE_S = 1.0


@dataclass
class Interval:
    start: float
    end: float
    mbps: float
    jitter_ms: float | None = None  # UDP receiver only
    packets: int | None = None  # UDP receiver only: datagrams in the interval


@dataclass
class IperfResult:
    """One iperf3 client run, receiver-side where iperf3 gives it."""

    intervals: list[Interval] = field(default_factory=list)
    receiver_intervals: bool = False  # True when `intervals` come from the server's report
    mbps: float = 0.0  # mean throughput over the run, at the receiver
    bytes: int = 0  # bytes received
    seconds: float = 0.0  # receiver-side duration of the transfer
    retransmits: int | None = None  # TCP only
    bytes_sent: int = 0  # TCP: bytes the sender wrote (end.sum_sent)
    mss: int | None = None  # TCP: the connection's MSS (start.tcp_mss_default)
    jitter_ms: float | None = None  # UDP only
    lost_packets: int | None = None  # UDP: iperf3's count, gaps below the last datagram seen
    packets: int | None = None  # UDP: the datagrams iperf3 reports (the client's: those sent)
    sent_packets: int | None = None  # UDP: datagrams the sender sent (end.sum_sent)
    received_packets: int | None = None  # UDP: datagrams that arrived before the receiver stopped
    late_packets: int | None = None  # UDP: of those, arrived after the sender's end (+ grace)
    unreported_packets: int | None = None  # UDP: never arrived, not in iperf3's lost count
    out_of_order: int | None = None
    rtt_ms: float | None = None  # TCP: the sender's smoothed RTT (mean over the run), iperf3
    rtt_series: list[tuple[float, float]] = field(default_factory=list)  # TCP (end s, ms)
    error: str = ""


def parse_iperf3(text: str) -> IperfResult:
    """Parse `iperf3 --json` client output (with or without --get-server-output).

    Raises ValueError when the text is not iperf3 JSON (e.g. the tool was killed before it
    printed anything); an error iperf3 itself reports is returned in `.error`.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        snippet = text.strip()[:200] or "(no output)"
        raise ValueError(f"iperf3 output is not JSON ({exc.msg}): {snippet}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"iperf3 output is not a JSON object: {text.strip()[:200]}")
    res = IperfResult(error=str(doc.get("error", "")))
    server = doc.get("server_output_json") or {}
    end = doc.get("end") or {}

    if server.get("intervals"):
        res.intervals, res.receiver_intervals = _intervals(server["intervals"]), True
    else:
        res.intervals = _intervals(doc.get("intervals") or [])

    received = end.get("sum_received") or end.get("sum") or {}
    res.mbps = float(received.get("bits_per_second", 0.0)) / 1e6
    res.bytes = int(received.get("bytes", 0))
    res.seconds = float(received.get("seconds", 0.0))
    if "retransmits" in (end.get("sum_sent") or {}):
        res.retransmits = int(end["sum_sent"]["retransmits"])
        res.bytes_sent = int(end["sum_sent"].get("bytes", 0))
        mss = (doc.get("start") or {}).get("tcp_mss_default")
        res.mss = int(mss) if mss else None
    res.rtt_ms, res.rtt_series = _tcp_rtt(doc)
    if "jitter_ms" in received:  # UDP
        res.jitter_ms = float(received["jitter_ms"])
        res.lost_packets = int(received.get("lost_packets", 0))
        res.packets = int(received.get("packets", 0))
        _udp_counts(doc, res)
        # The receiver counts reordering; the client's copy of that count may be stale.
        streams = ((server.get("end") or {}).get("streams")) or end.get("streams") or []
        counts = [s["udp"]["out_of_order"] for s in streams if "out_of_order" in s.get("udp", {})]
        res.out_of_order = sum(counts) if counts else None
    return res


def _udp_counts(doc: dict, res: IperfResult) -> None:
    """Sets the datagrams of a UDP run: sent, arrived, arrived late, never arrived and not
    reported lost.

    iperf3 counts as lost only the gaps below the highest sequence number its receiver
    saw. Datagrams sent after the last one that arrived before the receiver stopped are
    neither received nor counted lost (`unreported`). And the receiver stops only when the
    client's end of test reaches it over the TCP control connection: where that is held
    too (a switch that recirculates every packet to the receiver), the receiver goes on
    counting long after the sender's end (34.8 s for a 3-s test, bench/recirc/README.md),
    and what arrives then is `late` (then `mbps` is what arrived in the sender's window,
    over that window, not iperf3's rate over the stretched one). So: sent from the
    sender's report; arrived from the
    bytes received over the datagram size (every datagram of a run has the size
    `blksize`); late from the receiver's intervals, the share of each interval's bytes
    after the sender's end + LATE_GRACE_S (taking its arrivals as even over it); unreported:
    sent - arrived - iperf3's lost, less what the sender sent in its last END_GRACE_S."""
    end = doc.get("end") or {}
    sent_sum = end.get("sum_sent") or {}
    if sent_sum.get("packets") is not None:
        res.sent_packets = int(sent_sum["packets"])
    size = ((doc.get("start") or {}).get("test_start") or {}).get("blksize")
    if not size:
        if res.packets is not None:
            res.received_packets = max(0, res.packets - (res.lost_packets or 0))
        return
    size = int(size)
    res.received_packets = round(res.bytes / size)
    window = float(sent_sum.get("seconds") or 0.0)
    if not window:
        return
    cutoff = window + LATE_GRACE_S
    late_bytes = 0.0
    for item in (doc.get("server_output_json") or {}).get("intervals") or []:
        s = item.get("sum") or {}
        start, stop = float(s.get("start", 0.0)), float(s.get("end", 0.0))
        if s.get("omitted") or stop <= cutoff or stop <= start:
            continue
        late_bytes += int(s.get("bytes", 0)) * (stop - max(start, cutoff)) / (stop - start)
    res.late_packets = min(res.received_packets, round(late_bytes / size))
    if res.late_packets:
        # the receiver's rate is over its own window, stretched by the held end of test:
        # the throughput of the test is what arrived within the sender's window, over it
        res.mbps = (res.received_packets - res.late_packets) * size * 8 / window / 1e6
    if res.sent_packets is not None:
        tail = res.sent_packets - res.received_packets - (res.lost_packets or 0)
        racing = math.ceil(res.sent_packets * END_GRACE_S / window)
        res.unreported_packets = max(0, tail - racing)


def _tcp_rtt(doc: dict) -> tuple[float | None, list[tuple[float, float]]]:
    """The TCP sender's RTT (kernel smoothed RTT, iperf3 reports microseconds): mean over
    the streams of `mean_rtt`, and per interval the mean of the streams' `rtt`, in ms."""
    senders = [s.get("sender") or {} for s in (doc.get("end") or {}).get("streams") or []]
    means = [float(s["mean_rtt"]) / 1000 for s in senders if s.get("mean_rtt")]
    series = []
    for item in doc.get("intervals") or []:
        rtts = [float(st["rtt"]) / 1000 for st in item.get("streams") or [] if st.get("rtt")]
        s = item.get("sum") or {}
        if rtts and not s.get("omitted") and "end" in s:
            series.append((float(s["end"]), sum(rtts) / len(rtts)))
    return (sum(means) / len(means) if means else None), series


def _intervals(raw: list[dict]) -> list[Interval]:
    out: list[Interval] = []
    for item in raw:
        s = item.get("sum") or {}
        if s.get("omitted"):
            continue
        start, end = float(s["start"]), float(s["end"])
        if out and (out[-1].start, out[-1].end) == (start, end):
            continue  # iperf3 repeats the last interval when a test is cut short
        jitter = s.get("jitter_ms")
        packets = s.get("packets")
        out.append(
            Interval(
                start,
                end,
                float(s["bits_per_second"]) / 1e6,
                None if jitter is None else float(jitter),
                None if packets is None else int(packets),
            )
        )
    # The receiver often reports a last sliver of a millisecond or so with the final
    # in-flight bytes; as a rate it is noise. Its bytes stay in the run's totals.
    if len(out) > 1 and (out[-1].end - out[-1].start) < TAIL_FRACTION * (
        out[-2].end - out[-2].start
    ):
        out.pop()
    return out


def _interval_samples(name: str, flow: str, res: IperfResult, t_offset: float) -> list[Sample]:
    samples = []
    for i, iv in enumerate(res.intervals):
        t = round(t_offset + iv.end, 6)
        samples.append(Sample(name, "throughput_mbps", iv.mbps, "Mbit/s", flow, "", t, i))
        if iv.jitter_ms is not None:
            samples.append(Sample(name, "jitter_ms", iv.jitter_ms, "ms", flow, "", t, i))
    return samples


def _throughput_output(
    name: str, results: dict[str, IperfResult], offsets: dict[str, float], fixed_bytes: bool
) -> tuple[list[Sample], list[Summary]]:
    """What TCP and UDP runs share: per-interval samples of every pair, the summed
    throughput, the bytes received and (fixed-bytes mode) the transfer times."""
    samples = [
        s
        for flow, res in results.items()
        for s in _interval_samples(name, flow, res, offsets.get(flow, 0.0))
    ]
    summaries = [
        Summary(name, "throughput_mbps", sum(r.mbps for r in results.values()), "Mbit/s", "higher"),
        Summary(name, "bytes", float(sum(r.bytes for r in results.values())), "B", "higher"),
    ]
    if fixed_bytes and results:
        summaries += _transfer_times(name, results)
    return samples, summaries


def tcp_output(
    name: str, results: dict[str, IperfResult], offsets: dict[str, float], fixed_bytes: bool
) -> WorkloadOutput:
    """Samples (throughput per 1-s interval per pair) and summaries for a TCP run.

    - throughput_mbps: the SUM over pairs of each pair's mean receiver throughput
      (aggregate goodput of the concurrent transfers);
    - transfer_time_s / transfer_time_max_s (fixed-bytes mode): mean / longest completion
      time over pairs, as iperf3 measures it;
    - bytes: total bytes received; retransmits: total TCP retransmissions.
    Caveat of iperf3 3.x in fixed-bytes mode: the test ends when the sender has *written*
    the last byte, so up to one socket buffer may still be in flight; the receiver's byte
    count (and so the throughput here) can be a few % below the requested size on fast links.
    `offsets[flow]` is when that pair's client started, in seconds since the workload began.
    """
    samples, summaries = _throughput_output(name, results, offsets, fixed_bytes)
    for flow, res in results.items():
        off = offsets.get(flow, 0.0)
        for i, (t, ms) in enumerate(res.rtt_series):
            samples.append(Sample(name, "tcp_rtt_ms", ms, "ms", flow, "", round(off + t, 6), i))
    rtts = [r.rtt_ms for r in results.values() if r.rtt_ms is not None]
    if rtts:
        summaries.append(Summary(name, "tcp_rtt_ms", sum(rtts) / len(rtts), "ms"))
    retrans = [r.retransmits for r in results.values() if r.retransmits is not None]
    if retrans:
        summaries.append(Summary(name, "retransmits", float(sum(retrans)), "packets"))
    pct = retransmit_pct(results.values())
    if pct is not None:
        summaries.append(Summary(name, "retransmit_pct", pct, "%"))
    return WorkloadOutput(samples, summaries)


def retransmit_pct(results) -> float | None:
    """TCP "packet loss" as a sender sees it (000 Table 2): retransmitted segments as a
    share of all data segments sent, over every pair: 100 · R / (R + ceil(bytes / MSS)).

    iperf3 gives the kernel's retransmission count but not the segments sent; bytes over
    the MSS is the fewest segments that carry them, so the share is an upper bound when
    segments ran short of the MSS (they rarely do in a bulk transfer). None without MSS."""
    retrans = segments = 0
    for r in results:
        if r.retransmits is None or not r.mss:
            continue
        retrans += r.retransmits
        segments += -(-r.bytes_sent // r.mss)  # ceil
    total = retrans + segments
    return 100.0 * retrans / total if total else None


def _transfer_times(name: str, results: dict[str, IperfResult]) -> list[Summary]:
    times = [r.seconds for r in results.values()]
    return [
        Summary(name, "transfer_time_s", sum(times) / len(times), "s"),
        Summary(name, "transfer_time_max_s", max(times), "s"),
    ]


def udp_output(
    name: str,
    results: dict[str, IperfResult],
    offsets: dict[str, float],
    fixed_bytes: bool = False,
) -> WorkloadOutput:
    """Samples (receiver throughput and jitter per interval per pair) and summaries.

    - throughput_mbps: the SUM over pairs of each pair's mean receiver throughput;
    - bytes: total bytes received; transfer_time_s / _max_s (fixed-bytes mode) as for TCP;
    - jitter_ms: mean over pairs of iperf3's receiver jitter (RFC 3550 smoothed);
    - jitter_eq1_ms: 000's Eq. 1, the mean over pairs of each pair's mean per-packet
      RFC 3550 jitter (iperf3's per-interval value weighted by the interval's datagrams);
    - loss_pct: datagrams that did not arrive by the sender's end (+ LATE_GRACE_S) over
      those sent, all pairs: iperf3's lost count + unreported + late (so the received rate
      is the offered one less loss_pct, to the graces);
    - unreported_loss_pct: datagrams that never arrived and iperf3 did not count lost (sent
      after the last one that arrived: still on their way, e.g. held in a switch, when the
      receiver stopped);
    - late_pct: datagrams that arrived after the sender's end (the receiver counts until
      the end of test reaches it; held packets delay that);
    - reordered_pct: out-of-order / sent datagrams over all pairs.
    """
    samples, summaries = _throughput_output(name, results, offsets, fixed_bytes)
    jitters = [r.jitter_ms for r in results.values() if r.jitter_ms is not None]
    if jitters:
        summaries.append(Summary(name, "jitter_ms", sum(jitters) / len(jitters), "ms"))
    eq1 = eq1_over_flows(
        {
            flow: [
                (iv.jitter_ms, iv.packets or 0) for iv in r.intervals if iv.jitter_ms is not None
            ]
            for flow, r in results.items()
            if r.receiver_intervals
        }
    )
    if eq1 is not None:
        summaries.append(Summary(name, "jitter_eq1_ms", eq1, "ms"))
    packets = sum(_sent(r) for r in results.values())
    if packets:
        lost = sum(r.lost_packets or 0 for r in results.values())
        unreported = sum(r.unreported_packets or 0 for r in results.values())
        late = sum(r.late_packets or 0 for r in results.values())
        summaries.append(
            Summary(name, "loss_pct", 100.0 * (lost + unreported + late) / packets, "%")
        )
        summaries.append(Summary(name, "unreported_loss_pct", 100.0 * unreported / packets, "%"))
        summaries.append(Summary(name, "late_pct", 100.0 * late / packets, "%"))
        if any(r.out_of_order is not None for r in results.values()):
            reordered = sum(r.out_of_order or 0 for r in results.values())
            summaries.append(Summary(name, "reordered_pct", 100.0 * reordered / packets, "%"))
    return WorkloadOutput(samples, summaries)


def _sent(r: IperfResult) -> int:
    return r.sent_packets if r.sent_packets is not None else (r.packets or 0)


SOCKET_MAXIMA = ("/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max")


def socket_buffer_max() -> int | None:
    """The largest socket buffer allowed here (the smaller of rmem/wmem max; a network
    namespace takes both from the initial one: emulation/kernel_limits.py), None where
    /proc does not tell."""
    values = []
    for path in SOCKET_MAXIMA:
        try:
            values.append(int(Path(path).read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            return None
    return min(values)


def window_refusal(window_bytes: int | None, allowed: int | None) -> str | None:
    """Why iperf3 could not set a TCP window this large here (None: it can). iperf3 only
    says "socket buffer size not set correctly"; this names the limit and the fix."""
    if window_bytes is None or allowed is None or window_bytes <= allowed:
        return None
    return (
        f"window {window_bytes} bytes exceeds this kernel's socket buffer maximum "
        f"(net.core.rmem_max/wmem_max = {allowed} bytes), so iperf3 cannot set it; raise "
        f"them in the initial network namespace (e.g. sysctl -w net.core.rmem_max=16777216 "
        f"net.core.wmem_max=16777216: Mininet does so when it runs there), which network "
        f"namespaces take them from"
    )


def run_iperf_tcp(cfg: IperfTcpConfig, ctx: WorkloadContext) -> WorkloadOutput:
    refusal = window_refusal(cfg.window_bytes, socket_buffer_max())
    if refusal:
        raise WorkloadError(f"iperf-tcp workload '{cfg.name}': {refusal}")
    mode = ["-n", cfg.bytes] if cfg.bytes else ["-t", f"{cfg.duration:g}"]
    window = ["-w", cfg.window] if cfg.window else []
    bound = ["-b", cfg.rate] if cfg.rate else []
    limit = cfg.time_limit or _limit(cfg.duration, cfg.byte_count, cfg.rate_bps)
    results, offsets, started = _run_pairs(
        cfg.name, "iperf-tcp", cfg.pairs, ctx, mode + window + bound, limit
    )
    out = tcp_output(cfg.name, results, offsets, fixed_bytes=cfg.bytes is not None)
    out.processes_started = started
    return out


def run_iperf_udp(cfg: IperfUdpConfig, ctx: WorkloadContext) -> WorkloadOutput:
    mode = ["-n", cfg.bytes] if cfg.bytes else ["-t", f"{cfg.duration:g}"]
    args = ["-u", "-b", cfg.rate, *mode]
    if cfg.length:
        args += ["-l", str(cfg.length)]
    limit = cfg.time_limit or _limit(cfg.duration, cfg.byte_count, cfg.rate_bps)
    delays: dict[str, list[tuple[float, float]]] = {}

    def captures(pairs: list[_Pair]):
        return receiver_captures(ctx, [(p.flow, p.dst, p.port) for p in pairs])

    results, offsets, started = _run_pairs(
        cfg.name,
        "iperf-udp",
        cfg.pairs,
        ctx,
        args,
        limit,
        around=captures if cfg.one_way_delay else None,
        captured=delays,
    )
    out = udp_output(cfg.name, results, offsets, fixed_bytes=cfg.bytes is not None)
    if cfg.one_way_delay:
        samples, summaries = owd_output(cfg.name, delays)
        out.samples += samples
        out.summaries += summaries
    out.processes_started = started
    return out


def _limit(duration: float | None, byte_count: int | None, rate_bps: float | None) -> float:
    """When a hanging client is killed: the duration, or fixed bytes at a bound rate, plus
    the margin; fixed bytes without a rate bound get BYTES_MODE_LIMIT_S."""
    if duration:
        return duration + DURATION_MARGIN_S
    if byte_count and rate_bps:
        return byte_count * 8 / rate_bps * 1.5 + DURATION_MARGIN_S
    return BYTES_MODE_LIMIT_S


@dataclass
class _Pair:
    """One src->dst flow: where its server listens, and its two processes once started."""

    flow: str
    src: str
    dst: str
    dst_ip: str
    port: int
    server: Launched | None = None
    client: Launched | None = None

    def started(self, side: str) -> Launched:
        """The pair's launched server or client (a WorkloadError before it is launched)."""
        launched = self.server if side == "server" else self.client
        if launched is None:
            raise WorkloadError(f"{self.flow}: iperf3 {side} not launched")
        return launched


def _run_pairs(
    name: str,
    kind: str,
    pairs_cfg: Pairs,
    ctx: WorkloadContext,
    client_args: list[str],
    limit_s: float,
    around=None,
    captured: dict | None = None,
) -> tuple[dict[str, IperfResult], dict[str, float], int]:
    """Run one server + one client per pair, all at once; every process is reaped on exit.

    Returns the parsed result and the client's start offset (s since the first client
    started) per flow, and how many processes were started. `around(pairs)`: a context
    manager held while the clients run (the servers listening); what it yields is merged
    into `captured` when it closes (the receivers' captures for one-way delay).
    """
    base = UDP_BASE_PORT if kind == "iperf-udp" else BASE_PORT
    pairs = [
        _Pair(f"{src}->{dst}", src, dst, ctx.host(dst).IP(), base + i)
        for i, (src, dst) in enumerate(resolve_pairs(pairs_cfg, ctx.host_names, ctx.seed))
    ]
    with ProcessGroup(ctx) as group:
        for p in pairs:
            argv = ["iperf3", "-s", "-1", "-J", "-B", p.dst_ip, "-p", str(p.port)]
            p.server = group.start(ctx.host(p.dst), argv, f"iperf3 server {p.flow}")
        _await_listening(name, pairs)
        with around(pairs) if around else nullcontext({}) as got:
            t0 = _start_clients(name, kind, pairs, ctx, group, client_args, limit_s)
        if captured is not None:
            captured.update(got)

        results: dict[str, IperfResult] = {}
        problems: list[str] = []
        for p in pairs:
            res, problem = _client_result(p.started("client"), limit_s)
            if problem or res is None:
                problems.append(f"{p.flow}: {problem}")
            else:
                results[p.flow] = res
        offsets = {p.flow: round(p.started("client").started - t0, 6) for p in pairs}
        started = group.started
    if problems:
        raise WorkloadError(f"{kind} workload '{name}': " + "; ".join(problems))
    return results, offsets, started


def _start_clients(name, kind, pairs, ctx, group, client_args, limit_s) -> float:
    """Start every client, wait for them (and the one-shot servers); the start time."""
    ctx.log(f"{name}: {kind} on {len(pairs)} pair(s)")
    announce = getattr(ctx, "traffic_starts", None)  # link schedules start now
    if announce is not None:
        announce()
    t0 = time.time()
    for p in pairs:
        argv = [
            "iperf3",
            "-c",
            p.dst_ip,
            "-p",
            str(p.port),
            "--json",
            "--get-server-output",
            "-i",
            "1",
            "--connect-timeout",
            str(CONNECT_TIMEOUT_MS),
            *client_args,
        ]
        p.client = group.start(ctx.host(p.src), argv, f"iperf3 client {p.flow}")
    group.wait([p.client for p in pairs], limit_s)
    # One-shot servers exit after their test; any that do not are stopped by the group.
    group.wait([p.server for p in pairs], SERVER_EXIT_WAIT_S)
    return t0


def _client_result(proc: Launched, limit_s: float) -> tuple[IperfResult | None, str]:
    """(result, "") or (None, what went wrong)."""
    if proc.timed_out:
        return None, f"iperf3 client hung and was killed after {limit_s:g} s"
    try:
        res = parse_iperf3(proc.output())
    except ValueError as exc:
        return None, f"{exc}; stderr: {proc.errors() or '(empty)'}"
    if res.error:
        return None, f"iperf3: {res.error}"
    return res, ""


def _await_listening(name: str, pairs: list[_Pair]) -> None:
    """Block until every server listens, so no client races its server's bind()."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    waiting = list(pairs)
    while waiting:
        for p in list(waiting):
            server = p.started("server")
            if server.popen.poll() is not None:
                raise WorkloadError(
                    f"workload '{name}': iperf3 server for {p.flow} on "
                    f"{p.dst_ip}:{p.port} exited at start: {_server_error(server)}"
                )
            if listens(server.pid, p.port, "iperf3"):
                waiting.remove(p)
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise WorkloadError(
                f"workload '{name}': iperf3 server(s) not listening after "
                f"{SERVER_START_TIMEOUT_S:g} s: " + ", ".join(p.flow for p in waiting)
            )
        time.sleep(0.01)


def _server_error(proc: Launched) -> str:
    text = proc.output().strip()
    try:
        err = json.loads(text).get("error", "")
    except (json.JSONDecodeError, AttributeError):
        err = text[:200]
    return err or proc.errors() or f"exit code {proc.returncode}"
