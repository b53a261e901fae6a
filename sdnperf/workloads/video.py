"""Video from a CDN: HTTP adaptive streaming from a server host to player hosts.

Pairs are [server, client] (the direction the video flows). Each server host runs a
static HTTP/1.1 server (agents/http_server.py) over the segmented content
(video_content.py: ffmpeg-encoded ladder, or a synthetic size model); each client host
runs a player (agents/has_client.py) with a playout buffer and a named adaptation rule
(playout.py). The player logs every segment download; `parse_client` and `video_output`
turn that into start-up delay, stalls, bitrate and switches, segment download times and
throughput over time, with the same player model the client used.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..samples import Better, Sample, Summary
from . import playout
from .agents import agent_argv, wait_ready
from .capture import capturing
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .pairs import resolve_pairs
from .procs import ProcessGroup
from .traffic_config import VideoConfig
from .video_content import prepare, segment_count

PORT = 8080
READY_TIMEOUT_S = 5.0
MARGIN_S = 30.0  # beyond the video's own duration: slow downloads and stalls


@dataclass
class ClientLog:
    downloads: list[tuple[float, float, int, float]] = field(default_factory=list)
    renditions: list[int] = field(default_factory=list)
    finished: bool = False


def parse_client(text: str) -> ClientLog:
    """'SEG i r bitrate bytes t_req t_done buffer' lines and a closing 'END'."""
    log = ClientLog()
    for line in text.splitlines():
        parts = line.split()
        if parts == ["END"]:
            log.finished = True
        elif len(parts) == 8 and parts[0] == "SEG":
            try:
                r, rate, size = int(parts[2]), float(parts[3]), int(parts[4])
                t_req, t_done = float(parts[5]), float(parts[6])
            except ValueError:
                continue
            log.downloads.append((t_req, t_done, size, rate))
            log.renditions.append(r)
    return log


def video_output(
    name: str,
    sessions: dict[str, ClientLog],
    segment_s: float,
    startup_segments: int,
    offsets: dict[str, float],
) -> WorkloadOutput:
    """Samples (per segment: bitrate, download time, buffer; stalls; throughput per 1 s)
    and summaries over sessions: startup_delay_s, bitrate_mbps, segment_time_s (means),
    segment_time_max_s (max), stalls, stall_time_s, bitrate_switches (sums),
    throughput_mbps (sum of the sessions' mean rates), bytes (segment bytes, all sessions)."""
    samples: list[Sample] = []
    per: list[dict] = []
    for flow, log in sessions.items():
        off = offsets.get(flow, 0.0)
        m = playout.session_metrics(log.downloads, segment_s, startup_segments)
        per.append(m)
        player = playout.Player(segment_s, startup_segments)
        for i, (t_req, t_done, _size, rate) in enumerate(log.downloads):
            player.on_segment(t_done)
            t = round(off + t_done, 6)
            samples += [
                Sample(name, "bitrate_mbps", rate / 1e6, "Mbit/s", flow, "", t, i),
                Sample(name, "segment_time_s", t_done - t_req, "s", flow, "", t, i),
                Sample(name, "buffer_s", player.buffer_level(t_done), "s", flow, "", t, i),
            ]
        for k, (start, dur) in enumerate(m["stall_list"]):
            samples.append(Sample(name, "stall_s", dur, "s", flow, "", round(off + start, 6), k))
        for k, (t, mbps) in enumerate(playout.throughput_bins(log.downloads)):
            samples.append(
                Sample(name, "throughput_mbps", mbps, "Mbit/s", flow, "", round(off + t, 6), k)
            )
    summaries: list[Summary] = []

    def values(key):
        return [m[key] for m in per if m[key] is not None]

    aggregate: dict[str, Callable[[list[float]], float]] = {
        "mean": statistics.fmean,
        "max": max,
        "sum": sum,
    }
    per_session: list[tuple[str, str, Better, str]] = [
        ("startup_delay_s", "s", "lower", "mean"),
        ("bitrate_mbps", "Mbit/s", "higher", "mean"),
        ("segment_time_s", "s", "lower", "mean"),
        ("segment_time_max_s", "s", "lower", "max"),
        ("stalls", "count", "lower", "sum"),
        ("stall_time_s", "s", "lower", "sum"),
        ("bitrate_switches", "count", "lower", "sum"),
        ("throughput_mbps", "Mbit/s", "higher", "sum"),
    ]
    for key, unit, better, how in per_session:
        vals = values(key)
        if vals:
            agg = aggregate[how](vals)
            summaries.append(Summary(name, key, float(agg), unit, better))
    if sessions:  # data moved (000 Table 4): every segment's bytes, all players
        moved = sum(size for log in sessions.values() for _, _, size, _ in log.downloads)
        summaries.append(Summary(name, "bytes", float(moved), "B", "higher"))
    return WorkloadOutput(samples, summaries)


def run_video(cfg: VideoConfig, ctx: WorkloadContext) -> WorkloadOutput:
    pairs = resolve_pairs(cfg.pairs, ctx.host_names, ctx.seed)
    flows = {f"{s}->{d}": (s, d) for s, d in pairs}
    try:
        content = prepare(cfg, ctx.log)
    except (RuntimeError, OSError, TimeoutError) as exc:
        raise WorkloadError(f"video workload '{cfg.name}': no content: {exc}") from None
    n = segment_count(cfg.segment_s, cfg.duration)
    servers_at = sorted({s for s, _ in pairs})
    with (
        tempfile.TemporaryDirectory(prefix="sdnperf-video-") as tmp,
        ProcessGroup(ctx) as group,
        capturing(cfg, ctx),
    ):
        ready = {h: Path(tmp) / f"{h}.ready" for h in servers_at}
        servers = {
            h: group.start(
                ctx.host(h),
                agent_argv("http_server", ctx.host(h).IP(), PORT, content, ready[h]),
                f"http server {h}",
            )
            for h in servers_at
        }
        wait_ready(ready, servers, "video server", READY_TIMEOUT_S)
        ctx.log(
            f"{cfg.name}: {len(flows)} player(s), {n} x {cfg.segment_s:g}-s segments, "
            f"{cfg.adaptation} adaptation"
        )
        t0 = time.time()
        clients, offsets = {}, {}
        for flow, (src, dst) in flows.items():
            argv = agent_argv(
                "has_client",
                ctx.host(src).IP(),
                PORT,
                n,
                cfg.adaptation,
                cfg.startup_segments,
                cfg.max_buffer_s,
            )
            offsets[flow] = round(time.time() - t0, 6)
            clients[flow] = group.start(ctx.host(dst), argv, f"player {flow}")
        limit = cfg.duration + MARGIN_S
        group.wait(list(clients.values()), limit)
        problems, sessions = [], {}
        for flow, proc in clients.items():
            log = parse_client(proc.output())
            if proc.timed_out:
                problems.append(
                    f"{flow}: player did not finish in {limit:g} s "
                    f"({len(log.downloads)} of {n} segments)"
                )
            elif not log.finished:
                problems.append(f"{flow}: player failed: {proc.errors()[-300:] or proc.returncode}")
            else:
                sessions[flow] = log
        started = group.started
    if problems:
        raise WorkloadError(f"video workload '{cfg.name}': " + "; ".join(problems))
    out = video_output(cfg.name, sessions, cfg.segment_s, cfg.startup_segments, offsets)
    out.processes_started = started
    return out
