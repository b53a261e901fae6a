"""One-way delay of iperf3's UDP datagrams, from a capture at each receiver.

iperf3 writes its send time into every UDP datagram it sends (the first 8 payload bytes:
seconds and microseconds, big-endian 32-bit, read just before the write; the packet
counter follows). iperf3 3.x reads CLOCK_MONOTONIC there where the system has it (older
builds: the wall clock), while tcpdump stamps each datagram with the wall clock as it
arrives at the receiving host's interface. Every Mininet host shares the one machine's
clocks, so the wall-clock minus monotonic offset, read here around the transfer, turns a
monotonic send stamp into wall time, and arrival minus send is the one-way delay with no
offset between hosts to correct: the sender's socket and queues, the network, up to the
receiver's interface (not the receiver's own socket queue). 000 Tables 3, 5c and 6c report
UDP "Delay" measured at a capture point too.

`receiver_captures` runs one tcpdump per pair (filtered to that pair's port) around the
transfer (host_capture.py); `datagram_delays` and `owd_output` are pure, tested on pcap
bytes built in tests.
"""

from __future__ import annotations

import statistics
import struct
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from ..samples import Sample, Summary
from .capture import pcap_records
from .context import WorkloadContext
from .host_capture import host_captures

SNAPLEN = 64  # Ethernet 14 + IPv4 20 (no options) + UDP 8 + iperf3's 8-byte time stamp
ETH_IPV4 = 0x0800
ETH_VLAN = 0x8100
UDP = 17
LINKTYPE_ETHERNET = 1


WALL_CLOCK_FROM = 1e9  # a send stamp above this many seconds is wall time (2001 on), else
# monotonic (seconds since boot: never near 1e9)


def datagram_delays(
    data: bytes, port: int, monotonic_offset: float = 0.0
) -> list[tuple[float, float]]:
    """(arrival time s, one-way delay s) of every iperf3 UDP datagram to `port` in a classic
    pcap (Ethernet link type), in capture order. `monotonic_offset`: wall clock minus
    CLOCK_MONOTONIC, added to monotonic send stamps. Other packets, IP fragments after the
    first, truncated records and iperf3's 4-byte connect datagram are skipped."""
    linktype, records = pcap_records(data)
    if linktype != LINKTYPE_ETHERNET:
        raise ValueError(f"pcap link type {linktype}, not Ethernet (1)")
    out: list[tuple[float, float]] = []
    for arrival, _, pkt in records:
        sent = _iperf_send_time(pkt, port)
        if sent is not None:
            if sent < WALL_CLOCK_FROM:
                sent += monotonic_offset
            out.append((arrival, arrival - sent))
    return out


def _iperf_send_time(pkt: bytes, port: int) -> float | None:
    if len(pkt) < 14:
        return None
    eth_type, l3 = struct.unpack_from("!H", pkt, 12)[0], 14
    if eth_type == ETH_VLAN and len(pkt) >= 18:
        eth_type, l3 = struct.unpack_from("!H", pkt, 16)[0], 18
    if eth_type != ETH_IPV4 or len(pkt) < l3 + 20:
        return None
    ihl = (pkt[l3] & 0x0F) * 4
    frag_offset = struct.unpack_from("!H", pkt, l3 + 6)[0] & 0x1FFF
    if pkt[l3 + 9] != UDP or frag_offset:
        return None
    l4 = l3 + ihl
    udp_length = struct.unpack_from("!H", pkt, l4 + 4)[0] if len(pkt) >= l4 + 8 else 0
    # the UDP length, not the frame: a short datagram is padded to Ethernet's 60 bytes
    if udp_length < 16 or len(pkt) < l4 + 16 or struct.unpack_from("!H", pkt, l4 + 2)[0] != port:
        return None
    sec, usec = struct.unpack_from("!II", pkt, l4 + 8)
    return sec + usec / 1e6


def owd_output(name: str, per_flow: Mapping[str, Sequence[tuple[float, float]]]) -> tuple:
    """(samples, summaries): per flow its mean one-way delay (a sample without time); the
    summary owd_ms is the mean over flows of each flow's mean (each flow weighs the same,
    as 000 averages over its connections), owd_max_ms the largest of any datagram."""
    samples, means, peaks = [], [], []
    for flow, points in per_flow.items():
        if not points:
            continue
        delays = [d * 1000.0 for _, d in points]
        mean = statistics.fmean(delays)
        samples.append(Sample(name, "owd_ms", mean, "ms", flow))
        means.append(mean)
        peaks.append(max(delays))
    summaries = []
    if means:
        summaries.append(Summary(name, "owd_ms", statistics.fmean(means), "ms"))
        summaries.append(Summary(name, "owd_max_ms", max(peaks), "ms"))
    return samples, summaries


def monotonic_offset() -> float:
    """Wall clock minus CLOCK_MONOTONIC now (the same for every Mininet host)."""
    return time.time() - time.monotonic()


@contextmanager
def receiver_captures(
    ctx: WorkloadContext, receivers: Sequence[tuple[str, str, int]]
) -> Iterator[dict[str, list[tuple[float, float]]]]:
    """Capture each (flow, destination host, port) at the destination's interface during
    the block; after it, the dict yielded holds each flow's (arrival, delay) datagrams."""
    result: dict[str, list[tuple[float, float]]] = {}
    points = [
        (flow, dst, ["udp", "and", "dst", "port", str(port)]) for flow, dst, port in receivers
    ]
    ports = {flow: port for flow, _, port in receivers}
    with host_captures(ctx, points, SNAPLEN) as pcaps:
        before = monotonic_offset()
        yield result
    offset = (before + monotonic_offset()) / 2  # NTP may slew it a little meanwhile
    for flow, data in pcaps.items():
        result[flow] = datagram_delays(data, ports[flow], offset)
