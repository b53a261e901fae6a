"""Packet capture with tcpdump while a workload runs, and throughput from a pcap.

`capturing(cfg, ctx, group)` starts one tcpdump per capture point ("h1" = the host's
interface, "s1-eth2" = that interface, run in node s1's namespace) before the traffic and
stops it after, so each pcap holds exactly the workload's run. Files are named
`<workload>-<point>-<unix time>.pcap` in `cfg.capture_dir`, or in `<ctx.results_dir>/captures`
when the runner provides a results folder. `pcap_throughput` is pure: it reads a classic
pcap file (what tcpdump -w writes) and bins the bytes per interval.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .context import WorkloadContext, WorkloadError
from .procs import ProcessGroup

START_TIMEOUT_S = 5.0
SNAPLEN = 128  # headers are enough for rates and timing; keeps files small


def capture_dir(cfg, ctx: WorkloadContext) -> Path:
    return Path(ctx.results_dir) / "captures" if ctx.results_dir else Path(cfg.capture_dir)


def _node_and_intf(point: str, ctx: WorkloadContext) -> tuple[object, str]:
    if "-" in point:
        node_name = point.split("-", 1)[0]
        try:
            node = ctx.host(node_name)
        except Exception:  # Mininet raises KeyError; a test context may raise anything
            node = None
        if node is None:
            raise WorkloadError(f"capture point {point!r}: no node {node_name!r} in the network")
        return node, point
    node = ctx.host(point) if point in ctx.host_names else None
    if node is None:
        raise WorkloadError(
            f"capture point {point!r}: no host of that name "
            f"(an interface is written like 's1-eth2')"
        )
    return node, str(node.defaultIntf())


@contextmanager
def capturing(cfg, ctx: WorkloadContext) -> Iterator[list[Path]]:
    """Capture on every `cfg.capture` point during the block; yields the pcap paths."""
    points = list(getattr(cfg, "capture", []) or [])
    if not points:
        yield []
        return
    folder = capture_dir(cfg, ctx)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = int(time.time())
    paths: list[Path] = []
    with ProcessGroup(ctx) as group:
        procs = []
        for point in points:
            node, intf = _node_and_intf(point, ctx)
            path = (folder / f"{cfg.name}-{point}-{stamp}.pcap").resolve()
            # -U: write each packet as it comes, so the file is complete when tcpdump stops
            argv = ["tcpdump", "-i", intf, "-s", str(SNAPLEN), "-U", "-n", "-w", str(path)]
            procs.append((point, group.start(node, argv, f"tcpdump {point}")))
            paths.append(path)
        _await_capturing(procs)
        ctx.log(f"{cfg.name}: capturing on {', '.join(points)} -> {folder}")
        try:
            yield paths
        finally:
            time.sleep(0.2)  # let the last packets reach the capture buffer
            group.stop_all()  # SIGTERM: tcpdump flushes and closes the file


def _await_capturing(procs) -> None:
    """tcpdump prints 'listening on IF' to stderr once the socket is open."""
    deadline = time.monotonic() + START_TIMEOUT_S
    for point, proc in procs:
        while "listening on" not in proc.errors():
            if proc.popen.poll() is not None:
                raise WorkloadError(f"tcpdump on {point} exited: {proc.errors() or 'no message'}")
            if time.monotonic() > deadline:
                raise WorkloadError(f"tcpdump on {point} did not start in {START_TIMEOUT_S:g} s")
            time.sleep(0.02)


# --- reading pcap files (pure) ----------------------------------------------------------

_MAGIC = {
    0xA1B2C3D4: ("<", 1e-6),
    0xD4C3B2A1: (">", 1e-6),
    0xA1B23C4D: ("<", 1e-9),
    0x4D3CB2A1: (">", 1e-9),
}


def pcap_records(data: bytes, source: str = "") -> tuple[int, list[tuple[float, int, bytes]]]:
    """A classic pcap file's link type and its records: (timestamp in s, original length in
    bytes, captured frame). Written by hand: three readers need only this walk, where
    scapy's parsing of every frame would cost more than the captures' whole analysis."""
    prefix = f"{source}: " if source else ""
    if len(data) < 24:
        raise ValueError(f"{prefix}not a pcap file (only {len(data)} bytes)")
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in _MAGIC:
        raise ValueError(f"{prefix}not a classic pcap file (magic {magic:#x}; pcapng is not read)")
    endian, tick = _MAGIC[magic]
    linktype = struct.unpack_from(endian + "I", data, 20)[0] & 0x0FFFFFFF
    records, off = [], 24
    record = struct.Struct(endian + "IIII")
    while off + 16 <= len(data):
        sec, frac, caplen, origlen = record.unpack_from(data, off)
        records.append((sec + frac * tick, origlen, data[off + 16 : off + 16 + caplen]))
        off += 16 + caplen
    return linktype, records


def read_pcap(path: str | os.PathLike) -> list[tuple[float, int]]:
    """(timestamp in s, original length in bytes) of every packet of a classic pcap file."""
    _, records = pcap_records(Path(path).read_bytes(), str(path))
    return [(t, origlen) for t, origlen, _ in records]


def throughput_series(
    packets: list[tuple[float, int]], interval: float = 1.0, t0: float | None = None
) -> list[tuple[float, float]]:
    """[(end of interval in s since t0, Mbit/s)] with every interval up to the last packet.

    Counts whole frames as captured (Ethernet headers included), so it reads a little
    above an application's goodput.
    """
    if interval <= 0:
        raise ValueError("interval must be > 0")
    if not packets:
        return []
    start = min(t for t, _ in packets) if t0 is None else t0
    bins: dict[int, int] = {}
    for t, size in packets:
        k = int((t - start) // interval)
        if k >= 0:
            bins[k] = bins.get(k, 0) + size
    last = max(bins) if bins else -1
    return [
        (round((k + 1) * interval, 9), bins.get(k, 0) * 8 / interval / 1e6) for k in range(last + 1)
    ]


def pcap_throughput(path: str | os.PathLike, interval: float = 1.0) -> list[tuple[float, float]]:
    """Throughput over time of everything in a pcap file."""
    return throughput_series(read_pcap(path), interval)
