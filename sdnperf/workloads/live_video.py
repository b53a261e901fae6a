"""Live video over UDP/RTP: a paced stream at a fixed bitrate, measured at the receiver.

Our own pacer (agents/rtp_pacer.py) plays the encoder: `fps` frames a second, each of
bitrate/fps/8 bytes cut into RTP packets spread evenly over the frame interval, every
packet stamped with its send time and its frame's capture time. The receiver
(agents/rtp_receiver.py) logs every packet with its arrival time. As all Mininet hosts
share one clock, one-way delay is exact. A frame is *lost* when any of its packets is
missing, *late* when it is complete but its last packet arrives more than
`playout_delay_ms` after the frame's capture time (a player with that much buffering
would have skipped it). `parse_receiver` and `stream_output` are pure.
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
from .jitter import eq1_over_flows, mean_abs_delay_change, rfc3550_jitter, rfc3550_series
from .pairs import resolve_pairs
from .procs import ProcessGroup
from .traffic_config import LiveVideoConfig

BASE_PORT = 12000  # stream i goes to BASE_PORT + i
READY_TIMEOUT_S = 5.0
RECEIVER_GRACE_S = 3.0  # beyond the stream's duration, before a receiver gives up
MARGIN_S = 10.0


@dataclass
class RtpPacket:
    seq: int
    sent: float
    recv: float
    frame_time: float
    frame: int
    npkt: int
    idx: int
    size: int  # UDP payload bytes

    @property
    def delay_ms(self) -> float:
        return (self.recv - self.sent) * 1000.0


@dataclass
class StreamLog:
    packets: list[RtpPacket] = field(default_factory=list)  # arrival order, duplicates dropped
    sent: int | None = None  # from the sender's END message
    frames: int | None = None


def parse_receiver(text: str) -> StreamLog:
    log, seen = StreamLog(), set()
    for line in text.splitlines():
        parts = line.split()
        try:
            if parts and parts[0] == "END" and len(parts) == 3:
                log.sent, log.frames = int(parts[1]), int(parts[2])
            elif len(parts) == 8:
                seq = int(parts[0])
                if seq in seen:
                    continue
                seen.add(seq)
                log.packets.append(
                    RtpPacket(
                        seq,
                        float(parts[1]),
                        float(parts[2]),
                        float(parts[3]),
                        int(parts[4]),
                        int(parts[5]),
                        int(parts[6]),
                        int(parts[7]),
                    )
                )
        except ValueError:
            continue
    log.packets.sort(key=lambda p: p.recv)
    return log


@dataclass
class StreamStats:
    sent: int
    received: int
    loss_pct: float
    frames: int
    frames_lost: int
    frames_late: int
    mbps: float  # received payload bit/s over the stream's duration
    owd_ms: float | None
    jitter_rfc3550_ms: float | None
    jitter_flowmean_ms: float | None
    series: list[tuple[float, float]]  # (end of 1-s interval since stream start, Mbit/s)
    # (end of 1-s interval, ms): the running RFC 3550 jitter after the interval's last packet
    # (as Wireshark's RTP analysis lists it over time; 000 Figs 9, 10d, 12d)
    jitter_series: list[tuple[float, float]] = field(default_factory=list)
    jitter_eq1_ms: float | None = None  # the mean over packets of the running jitter (Eq. 1)
    bytes: int = 0  # UDP payload bytes received


def stream_stats(
    log: StreamLog,
    playout_delay_ms: float,
    fallback_sent: int,
    fallback_frames: int,
    interval: float = 1.0,
) -> StreamStats:
    """Metrics of one stream. Without the sender's END (lost), the planned packet and frame
    counts (`fallback_*`) stand in for what was sent."""
    sent = log.sent if log.sent is not None else fallback_sent
    frames = log.frames if log.frames is not None else fallback_frames
    pk = log.packets
    received = len(pk)
    loss = 100.0 * max(0, sent - received) / sent if sent else 0.0
    by_frame: dict[int, list[RtpPacket]] = {}
    for p in pk:
        by_frame.setdefault(p.frame, []).append(p)
    lost = late = 0
    for f in range(frames):
        got = by_frame.get(f, [])
        if not got or len(got) < got[0].npkt:
            lost += 1
        elif (max(p.recv for p in got) - got[0].frame_time) * 1000.0 > playout_delay_ms:
            late += 1
    if not pk:
        return StreamStats(sent, 0, loss, frames, lost, late, 0.0, None, None, None, [])
    start = min(p.frame_time for p in pk)
    duration = max(frames / _fps(pk), 1e-9) if frames else max(p.recv for p in pk) - start
    bins: dict[int, int] = {}
    for p in pk:
        k = int((p.recv - start) // interval)
        bins[k] = bins.get(k, 0) + p.size
    series = [
        (round((k + 1) * interval, 6), bins.get(k, 0) * 8 / interval / 1e6)
        for k in range(max(bins) + 1)
    ]
    delays = [p.delay_ms for p in sorted(pk, key=lambda p: p.seq)]
    running = rfc3550_series([p.sent * 1000 for p in pk], [p.recv * 1000 for p in pk])
    last_in: dict[int, float] = {}  # interval -> running jitter after its last packet
    for p, j in zip(pk, running):
        last_in[int((p.recv - start) // interval)] = j
    jitter_series = [(round((k + 1) * interval, 6), j) for k, j in sorted(last_in.items())]
    return StreamStats(
        sent,
        received,
        loss,
        frames,
        lost,
        late,
        sum(p.size for p in pk) * 8 / duration / 1e6,
        statistics.fmean(delays),
        rfc3550_jitter([p.sent * 1000 for p in pk], [p.recv * 1000 for p in pk]),
        mean_abs_delay_change(delays),
        series,
        jitter_series,
        # Eq. 1 of one flow: each packet's running jitter, averaged (the first packet has none)
        eq1_over_flows({"": [(j, 1) for j in running[1:]]}),
        sum(p.size for p in pk),
    )


def _fps(pk: list[RtpPacket]) -> float:
    """Frames per second recovered from the capture times of two different frames."""
    first = min(pk, key=lambda p: p.frame)
    last = max(pk, key=lambda p: p.frame)
    if last.frame == first.frame:
        return 1.0 / max(1e-9, last.recv - first.frame_time)
    return (last.frame - first.frame) / (last.frame_time - first.frame_time)


def stream_output(
    name: str, streams: dict[str, StreamStats], offsets: dict[str, float]
) -> WorkloadOutput:
    """Samples (throughput per interval per stream; per-stream jitter, loss, frames) and
    summaries: throughput_mbps (sum over streams), owd_ms, jitter_rfc3550_ms,
    jitter_flowmean_ms (means over streams), jitter_eq1_ms (000's Eq. 1: the mean over
    streams of each stream's mean per-packet running jitter), bytes (payload received,
    all streams), loss_pct (over all packets), frames_lost_pct / frames_late_pct (over
    all frames). Over time, per stream and 1-s interval: throughput_mbps and
    jitter_rfc3550_ms (the running jitter at the interval's end)."""
    samples, summaries = [], []
    for flow, st in streams.items():
        off = offsets.get(flow, 0.0)
        for i, (t, mbps) in enumerate(st.series):
            samples.append(
                Sample(name, "throughput_mbps", mbps, "Mbit/s", flow, "", round(off + t, 6), i)
            )
        for i, (t, ms) in enumerate(st.jitter_series):
            samples.append(
                Sample(name, "jitter_rfc3550_ms", ms, "ms", flow, "", round(off + t, 6), i)
            )
        for metric, value, unit in (
            ("jitter_rfc3550_ms", st.jitter_rfc3550_ms, "ms"),
            ("jitter_flowmean_ms", st.jitter_flowmean_ms, "ms"),
            ("owd_ms", st.owd_ms, "ms"),
            ("loss_pct", st.loss_pct, "%"),
        ):
            if value is not None:
                samples.append(Sample(name, metric, value, unit, flow))
    values = list(streams.values())
    summaries.append(
        Summary(name, "throughput_mbps", sum(s.mbps for s in values), "Mbit/s", "higher")
    )
    for metric in ("owd_ms", "jitter_rfc3550_ms", "jitter_flowmean_ms", "jitter_eq1_ms"):
        vals = [getattr(s, metric) for s in values if getattr(s, metric) is not None]
        if vals:
            summaries.append(Summary(name, metric, statistics.fmean(vals), "ms"))
    summaries.append(Summary(name, "bytes", float(sum(s.bytes for s in values)), "B", "higher"))
    sent = sum(s.sent for s in values)
    if sent:
        summaries.append(
            Summary(
                name,
                "loss_pct",
                100.0 * sum(max(0, s.sent - s.received) for s in values) / sent,
                "%",
            )
        )
    frames = sum(s.frames for s in values)
    if frames:
        summaries.append(
            Summary(
                name, "frames_lost_pct", 100.0 * sum(s.frames_lost for s in values) / frames, "%"
            )
        )
        summaries.append(
            Summary(
                name, "frames_late_pct", 100.0 * sum(s.frames_late for s in values) / frames, "%"
            )
        )
    return WorkloadOutput(samples, summaries)


def planned_counts(cfg: LiveVideoConfig) -> tuple[int, int]:
    """(packets, frames) the pacer sends: mirrors agents/rtp_pacer.py."""
    import math

    head = 12 + 28  # RTP + our fields
    frame_bytes = max(1, int(round(cfg.bitrate_bps / cfg.fps / 8)))
    npkt = max(1, math.ceil(frame_bytes / (cfg.packet_size - head)))
    frames = max(1, int(round(cfg.duration * cfg.fps)))
    return npkt * frames, frames


def run_live_video(cfg: LiveVideoConfig, ctx: WorkloadContext) -> WorkloadOutput:
    if cfg.packet_size <= 40:
        raise WorkloadError(f"live-video '{cfg.name}': packet_size must exceed 40 B of headers")
    pairs = resolve_pairs(cfg.pairs, ctx.host_names, ctx.seed)
    flows = {f"{s}->{d}": (s, d) for s, d in pairs}
    with (
        tempfile.TemporaryDirectory(prefix="sdnperf-live-") as tmp,
        ProcessGroup(ctx) as group,
        capturing(cfg, ctx),
    ):
        ready, receivers = {}, {}
        for i, (flow, (_src, dst)) in enumerate(flows.items()):
            ready[flow] = Path(tmp) / f"{i}.ready"
            argv = agent_argv(
                "rtp_receiver",
                ctx.host(dst).IP(),
                BASE_PORT + i,
                cfg.duration + RECEIVER_GRACE_S + 1.0,
                ready[flow],
            )
            receivers[flow] = group.start(ctx.host(dst), argv, f"receiver {flow}")
        wait_ready(ready, receivers, "live-video receiver", READY_TIMEOUT_S)
        ctx.log(f"{cfg.name}: {len(flows)} stream(s) of {cfg.bitrate} bit/s for {cfg.duration:g} s")
        t0 = time.time()
        senders, offsets = {}, {}
        for i, (flow, (src, dst)) in enumerate(flows.items()):
            argv = agent_argv(
                "rtp_pacer",
                ctx.host(dst).IP(),
                BASE_PORT + i,
                cfg.bitrate_bps,
                cfg.fps,
                cfg.packet_size,
                cfg.duration,
            )
            offsets[flow] = round(time.time() - t0, 6)
            senders[flow] = group.start(ctx.host(src), argv, f"pacer {flow}")
        limit = cfg.duration + RECEIVER_GRACE_S + MARGIN_S
        group.wait(list(senders.values()) + list(receivers.values()), limit)
        planned = planned_counts(cfg)
        problems, streams = [], {}
        for flow in flows:
            snd, rcv = senders[flow], receivers[flow]
            if snd.timed_out or snd.returncode != 0:
                problems.append(f"{flow}: pacer failed: {snd.errors()[-300:] or snd.returncode}")
            elif rcv.timed_out or rcv.returncode != 0:
                problems.append(f"{flow}: receiver failed: {rcv.errors()[-300:] or rcv.returncode}")
            else:
                streams[flow] = stream_stats(
                    parse_receiver(rcv.output()), cfg.playout_delay_ms, *planned
                )
        started = group.started
    if problems:
        raise WorkloadError(f"live-video workload '{cfg.name}': " + "; ".join(problems))
    out = stream_output(cfg.name, streams, offsets)
    out.processes_started = started
    return out
