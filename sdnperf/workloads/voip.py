"""VoIP calls with D-ITG: ITGRecv on every callee, one `ITGSend ... VoIP` per call.

ITGSend's VoIP mode reproduces a codec's packet sizes and timing with RTP framing
(G.711: 80 B per 10-ms frame, G.729: 10 B per frame, plus the 12-B RTP header). Both
ends log every packet; after the calls `ITGDec -l` turns the binary logs into text that
`parse_itgdec` reads. ITGRecv may write the packets of concurrent calls to one callee into
whichever of their log files it opened first, so a call's received packets are found by
its sender's address and port (from the sender log) across all of that run's receiver
logs, never by file name. Per call:
- one-way delay = receive time - send time per packet. All Mininet hosts share the
  machine's clock, so this is exact (no clock offset or drift to correct);
- jitter two ways (sdnperf.workloads.jitter): RFC 3550 and mean |Δdelay|;
- loss = 1 - distinct sequence numbers received / highest sequence number sent (ITGSend
  numbers every packet it tries, so packets the sender's own stack dropped count too);
- R and MOS from the ITU-T G.107 E-model (sdnperf.workloads.emodel documents it).
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..samples import Better, Sample, Summary
from . import emodel
from .capture import capturing
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .jitter import mean_abs_delay_change, rfc3550_jitter
from .pairs import resolve_pairs
from .procs import ProcessGroup, listens
from .traffic_config import VoipConfig

SIGNAL_PORT = 9000  # ITGRecv's default signalling port
BASE_PORT = 10000  # call i sends RTP to BASE_PORT + i
READY_TIMEOUT_S = 5.0
MARGIN_S = 15.0
DECODE_TIMEOUT_S = 60.0
DAY = 86400.0

_LINE = re.compile(
    r"Flow>\s*(?P<flow>\d+)\s+Seq>\s*(?P<seq>\d+)\s+Src>\s*(?P<src>\S+)\s+Dest>\s*(?P<dst>\S+)"
    r"\s+txTime>(?P<th>\d+):(?P<tm>\d+):(?P<ts>[\d.]+)"
    r"\s+rxTime>(?P<rh>\d+):(?P<rm>\d+):(?P<rs>[\d.]+)\s+Size>\s*(?P<size>\d+)"
)


@dataclass
class Packet:
    seq: int
    tx: float  # seconds (time of day, unwrapped across midnight)
    rx: float
    size: int
    src: str = ""  # sender "ip/port": tells concurrent calls apart in a shared receiver log

    @property
    def delay_ms(self) -> float:
        return (self.rx - self.tx) * 1000.0


@dataclass
class ItgLog:
    packets: list[Packet] = field(default_factory=list)

    @property
    def max_seq(self) -> int:
        return max((p.seq for p in self.packets), default=0)

    def sources(self) -> set[str]:
        return {p.src for p in self.packets}

    def from_source(self, src: str) -> "ItgLog":
        return ItgLog([p for p in self.packets if p.src == src])


def parse_itgdec(text: str) -> ItgLog:
    """Read `ITGDec LOG -l TXT` output: one line per packet, times as H:M:S.us of the day.

    Times are unwrapped across midnight (a later packet never goes back in time by more
    than half a day). Duplicate sequence numbers of one sender keep their first copy.
    """
    log, seen = ItgLog(), set()
    day_offset, last_tx = 0.0, None
    for line in text.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        tx = int(m["th"]) * 3600 + int(m["tm"]) * 60 + float(m["ts"])
        rx = int(m["rh"]) * 3600 + int(m["rm"]) * 60 + float(m["rs"])
        if last_tx is not None and tx + day_offset < last_tx - DAY / 2:
            day_offset += DAY
        tx += day_offset
        rx += day_offset
        if rx < tx - DAY / 2:
            rx += DAY
        last_tx = tx
        key = (m["src"], int(m["seq"]))
        if key in seen:
            continue
        seen.add(key)
        log.packets.append(Packet(key[1], tx, rx, int(m["size"]), m["src"]))
    return log


@dataclass
class CallStats:
    received: int
    expected: int
    loss_pct: float
    owd_ms: float | None  # mean one-way delay
    owd_max_ms: float | None
    jitter_rfc3550_ms: float | None
    jitter_flowmean_ms: float | None  # mean |Δdelay| of this call
    r: float | None
    mos: float | None


def call_stats(recv: ItgLog, sent_max_seq: int, codec: str, frames_per_packet: int) -> CallStats:
    """The metrics of one call from its receiver log and the sender's highest sequence."""
    expected = max(sent_max_seq, recv.max_seq)
    received = len(recv.packets)
    loss = 100.0 * (expected - received) / expected if expected else 100.0
    if not recv.packets:
        return CallStats(0, expected, loss, None, None, None, None, None, emodel.mos_from_r(0))
    arrival = sorted(recv.packets, key=lambda p: p.rx)
    by_seq = sorted(recv.packets, key=lambda p: p.seq)
    delays = [p.delay_ms for p in by_seq]
    jit = rfc3550_jitter([p.tx * 1000 for p in arrival], [p.rx * 1000 for p in arrival]) or 0.0
    owd = statistics.fmean(delays)
    r, mos = emodel.call_mos(codec, frames_per_packet, owd, jit, loss)
    return CallStats(
        received, expected, loss, owd, max(delays), jit, mean_abs_delay_change(delays), r, mos
    )


def voip_output(
    name: str, calls: dict[str, tuple[ItgLog, CallStats]], offsets: dict[str, float]
) -> WorkloadOutput:
    """Samples (one-way delay per packet; jitter, loss and MOS per call) and summaries.

    Summaries, over calls: owd_ms (mean of the calls' mean delay), owd_max_ms (largest
    delay of any packet), jitter_rfc3550_ms and jitter_flowmean_ms (means over calls),
    loss_pct (lost / expected packets over all calls), mos and r_factor (means over calls),
    mos_min (the worst call).
    """
    samples: list[Sample] = []
    for flow, (log, st) in calls.items():
        if log.packets:
            first_tx = min(p.tx for p in log.packets)
            off = offsets.get(flow, 0.0)
            for p in sorted(log.packets, key=lambda p: p.seq):
                samples.append(
                    Sample(
                        name,
                        "owd_ms",
                        p.delay_ms,
                        "ms",
                        flow,
                        "",
                        round(off + p.tx - first_tx, 6),
                        p.seq,
                    )
                )
        for metric, value, unit in (
            ("jitter_rfc3550_ms", st.jitter_rfc3550_ms, "ms"),
            ("jitter_flowmean_ms", st.jitter_flowmean_ms, "ms"),
            ("loss_pct", st.loss_pct, "%"),
            ("mos", st.mos, "MOS"),
        ):
            if value is not None:
                samples.append(Sample(name, metric, value, unit, flow))
    stats = [st for _, st in calls.values()]
    summaries: list[Summary] = []

    def mean_of(attr: str) -> float | None:
        vals = [getattr(s, attr) for s in stats if getattr(s, attr) is not None]
        return statistics.fmean(vals) if vals else None

    means: list[tuple[str, float | None, str, Better]] = [
        ("owd_ms", mean_of("owd_ms"), "ms", "lower"),
        ("jitter_rfc3550_ms", mean_of("jitter_rfc3550_ms"), "ms", "lower"),
        ("jitter_flowmean_ms", mean_of("jitter_flowmean_ms"), "ms", "lower"),
        ("mos", mean_of("mos"), "MOS", "higher"),
        ("r_factor", mean_of("r"), "R", "higher"),
    ]
    for metric, value, unit, better in means:
        if value is not None:
            summaries.append(Summary(name, metric, value, unit, better))
    maxes = [s.owd_max_ms for s in stats if s.owd_max_ms is not None]
    if maxes:
        summaries.append(Summary(name, "owd_max_ms", max(maxes), "ms"))
    expected = sum(s.expected for s in stats)
    if expected:
        lost = sum(s.expected - s.received for s in stats)
        summaries.append(Summary(name, "loss_pct", 100.0 * lost / expected, "%"))
    mos = [s.mos for s in stats if s.mos is not None]
    if mos:
        summaries.append(Summary(name, "mos_min", min(mos), "MOS", "higher"))
    return WorkloadOutput(samples, summaries)


def itgsend_argv(
    dst_ip: str, port: int, cfg: VoipConfig, send_log: Path, recv_log: Path
) -> list[str]:
    argv = [
        "ITGSend",
        "-a",
        dst_ip,
        "-rp",
        str(port),
        "-t",
        str(int(cfg.duration * 1000)),
        "-l",
        str(send_log),
        "-x",
        str(recv_log),
        "VoIP",
        "-x",
        f"{cfg.codec}.{cfg.frames_per_packet}",
        "-h",
        "RTP",
    ]
    return argv + (["-VAD"] if cfg.vad else [])


def decode(log: Path) -> str:
    """Binary D-ITG log -> per-packet text (ITGDec runs outside the network: file work only)."""
    txt = log.with_suffix(".txt")
    proc = subprocess.run(
        ["ITGDec", str(log), "-l", str(txt)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=DECODE_TIMEOUT_S,
    )
    if proc.returncode != 0 or not txt.exists():
        raise WorkloadError(
            f"ITGDec could not decode {log.name}: {proc.stderr.decode(errors='replace')[-300:]}"
        )
    return txt.read_text(errors="replace")


def run_voip(cfg: VoipConfig, ctx: WorkloadContext) -> WorkloadOutput:
    for tool in ("ITGSend", "ITGRecv", "ITGDec"):
        if not shutil.which(tool):
            raise WorkloadError(
                f"voip workload '{cfg.name}' needs D-ITG ({tool} not found; Debian package d-itg)"
            )
    pairs = resolve_pairs(cfg.pairs, ctx.host_names, ctx.seed)
    flows = {f"{s}->{d}": (s, d) for s, d in pairs}
    dsts = sorted({d for _, d in pairs})
    with (
        tempfile.TemporaryDirectory(prefix="sdnperf-voip-") as tmp,
        ProcessGroup(ctx) as group,
        capturing(cfg, ctx),
    ):
        tmpdir = Path(tmp)
        receivers = {d: group.start(ctx.host(d), ["ITGRecv"], f"ITGRecv {d}") for d in dsts}
        _await_itgrecv(cfg.name, receivers)
        ctx.log(f"{cfg.name}: {len(flows)} {cfg.codec} call(s) of {cfg.duration:g} s")
        t0 = time.time()
        senders, offsets, logs = {}, {}, {}
        for i, (flow, (src, dst)) in enumerate(flows.items()):
            logs[flow] = (tmpdir / f"call{i}-send.log", tmpdir / f"call{i}-recv.log")
            argv = itgsend_argv(ctx.host(dst).IP(), BASE_PORT + i, cfg, *logs[flow])
            offsets[flow] = round(time.time() - t0, 6)
            senders[flow] = group.start(ctx.host(src), argv, f"ITGSend {flow}")
        limit = cfg.duration + MARGIN_S
        group.wait(list(senders.values()), limit)
        # The receivers write and close a call's log when its sender signals the end; on a
        # busy machine that can take a while, and a log read too early counts as all lost.
        recv_logs = [recv for _, recv in logs.values()]
        _await_logs(recv_logs)
        group.stop_all()
        received = ItgLog()
        for path in recv_logs:
            if path.exists() and path.stat().st_size > 0:
                received.packets += parse_itgdec(decode(path)).packets
        problems, calls = [], {}
        for flow, proc in senders.items():
            send_log = logs[flow][0]
            if proc.timed_out:
                problems.append(f"{flow}: ITGSend hung and was killed after {limit:g} s")
                continue
            if proc.returncode != 0 or not send_log.exists():
                problems.append(
                    f"{flow}: ITGSend failed (exit {proc.returncode}): "
                    f"{(proc.errors() or proc.output())[-300:].strip()}"
                )
                continue
            sent = parse_itgdec(decode(send_log))
            if len(sent.sources()) != 1:
                problems.append(
                    f"{flow}: ITGSend log names {len(sent.sources())} senders, expected 1"
                )
                continue
            recv = received.from_source(sent.sources().pop())
            calls[flow] = (recv, call_stats(recv, sent.max_seq, cfg.codec, cfg.frames_per_packet))
        started = group.started
    if problems:
        raise WorkloadError(f"voip workload '{cfg.name}': " + "; ".join(problems))
    out = voip_output(cfg.name, calls, offsets)
    out.processes_started = started
    return out


def _await_logs(paths: list[Path], timeout: float = 5.0) -> None:
    """Wait until the receiver logs hold data and have stopped growing (or `timeout` passes).

    Not every log fills: concurrent calls may share one file (see the module docstring).
    """
    deadline = time.monotonic() + timeout
    last: list[int] = []
    while time.monotonic() < deadline:
        sizes = [p.stat().st_size if p.exists() else -1 for p in paths]
        if sizes == last and any(size > 0 for size in sizes):
            return
        last = sizes
        time.sleep(0.2)


def _await_itgrecv(name: str, receivers: dict) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    for host, proc in receivers.items():
        while not listens(proc.pid, SIGNAL_PORT, "ITGRecv"):
            if proc.popen.poll() is not None:
                raise WorkloadError(
                    f"voip workload '{name}': ITGRecv on {host} exited: "
                    f"{(proc.errors() or proc.output())[-300:]}"
                )
            if time.monotonic() > deadline:
                raise WorkloadError(
                    f"voip workload '{name}': ITGRecv on {host} not listening "
                    f"on port {SIGNAL_PORT} after {READY_TIMEOUT_S:g} s"
                )
            time.sleep(0.01)
