"""ARP and LLDP frames at a host's link over time (seed paper 000 Fig. 4c-d: the Wireshark
capture of ARP and LLDP messages at the ICMP throughput drops).

A ping workload with `control_frames = true` captures `arp or ether proto 0x88cc` on each
client host's interface while it runs; `frame_times` reads the capture and `per_second`
bins it into frames per second, stamped like the workload's other series (seconds since the
workload started), so the report draws them over time beside the ICMP throughput.
"""

from __future__ import annotations

import struct

from ..samples import Sample
from .capture import pcap_records

ARP = 0x0806
LLDP = 0x88CC
VLAN = 0x8100
KINDS = {ARP: "arp", LLDP: "lldp"}
BPF = ["arp", "or", "ether", "proto", "0x88cc"]
SNAPLEN = 64  # the Ethernet type is all we read
METRIC = {"arp": "arp_frames_per_s", "lldp": "lldp_frames_per_s"}


def frame_times(data: bytes) -> list[tuple[float, str]]:
    """(time s, "arp" | "lldp") of each ARP or LLDP frame in a classic Ethernet pcap."""
    out = []
    for t, _, frame in pcap_records(data)[1]:
        if len(frame) < 14:
            continue
        ethertype = struct.unpack_from("!H", frame, 12)[0]
        if ethertype == VLAN and len(frame) >= 18:
            ethertype = struct.unpack_from("!H", frame, 16)[0]
        if ethertype in KINDS:
            out.append((t, KINDS[ethertype]))
    return out


def per_second(
    frames: list[tuple[float, str]], t0: float, t_end: float
) -> dict[str, list[tuple[float, int]]]:
    """Per kind, (end of 1-s bin since t0, frames in it) for every bin from t0 to t_end,
    empty bins included (a figure must show the seconds without control traffic too)."""
    bins = max(1, int(-(-(t_end - t0) // 1)))
    counts = {kind: [0] * bins for kind in KINDS.values()}
    for t, kind in frames:
        k = int((t - t0) // 1)
        if 0 <= k < bins:
            counts[kind][k] += 1
    return {kind: [(float(k + 1), n) for k, n in enumerate(c)] for kind, c in counts.items()}


def samples(name: str, host: str, binned: dict[str, list[tuple[float, int]]]) -> list[Sample]:
    """One sample per bin and kind; the flow is the capturing host."""
    return [
        Sample(name, METRIC[kind], float(n), "frames/s", host, "", t, i)
        for kind, series in binned.items()
        for i, (t, n) in enumerate(series)
    ]
