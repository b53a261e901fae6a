"""The answer of `workload-complexity`: per forwarding chain, ping RTT, UDP jitter and UDP
one-way delay at the smallest and largest frame, and TCP throughput at the smallest and
largest window, ranked; and, per platform (our P4 switch, Open vSwitch, the kernel), what
its heavier chains cost over its own L2 bridging chain (architectures named
PLATFORM-CHAIN: p4-ipv4 against p4-l2)."""

from __future__ import annotations

from collections import defaultdict

from sdnperf.studies.answers.common import RANK_NOTE, compare, more_repetitions, ranked, values
from sdnperf.workloads.config import parse_suffixed

HEADERS = 14 + 20 + 8  # Ethernet + IPv4 + ICMP/UDP headers
FRAME_OVERHEAD = {"ping": HEADERS, "udp": HEADERS, "owd": HEADERS}
SIZE = {
    "ping": "workload.ping.size",
    "udp": "workload.udp.length",
    "owd": "workload.owd.packet_size",  # the live-video stream's UDP payload
}
PLATFORMS = (("p4-", "P4"), ("ovs-", "OVS"), ("kernel-", "kernel"))
WINDOW = "workload.tcp.window"


def _by_point(store, study_id, workload, metric, path, key=lambda v: v):
    # point value -> arch -> values
    out: defaultdict[object, defaultdict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run, v in values(store, study_id, metric, workload):
        if path in run.point:
            out[key(run.point[path])][run.architecture].append(v)
    return out


def answer(store, study_id: int) -> list[str]:
    out: list[str] = []
    hint = ""  # how many repetitions would rank what this data cannot
    for workload, metric, what, unit in (
        ("ping", "rtt_ms", "ping RTT", "ms"),
        ("udp", "jitter_ms", "UDP jitter", "ms"),
        ("owd", "owd_ms", "UDP one-way delay", "ms"),
    ):
        points = _by_point(store, study_id, workload, metric, SIZE[workload])
        if not points:
            continue
        for size in sorted({min(points), max(points)}):
            frame = size + FRAME_OVERHEAD[workload] + 4  # + FCS
            out.append(
                f"{what} with {frame}-byte frames (best first): "
                f"{ranked(points[size], unit, 'lower')}."
            )
            hint = hint or more_repetitions(points[size], "lower")
    tcp = _by_point(store, study_id, "tcp", "throughput_mbps", WINDOW)
    if tcp:
        by_bytes = {parse_suffixed(str(w), 1024): w for w in tcp}
        for b in sorted({min(by_bytes), max(by_bytes)}):
            out.append(
                f"TCP throughput with a {by_bytes[b]} window (best first): "
                f"{ranked(tcp[by_bytes[b]], 'Mbit/s', 'higher')}."
            )
            hint = hint or more_repetitions(tcp[by_bytes[b]], "higher")
    # the cost of complexity on each platform: its chains against its own L2 bridging
    compared = [
        (label, better, points, lambda v: v)
        for label, better, points in (
            ("RTT", "lower", _by_point(store, study_id, "ping", "rtt_ms", SIZE["ping"])),
            ("one-way delay", "lower", _by_point(store, study_id, "owd", "owd_ms", SIZE["owd"])),
        )
    ] + [("TCP", "higher", tcp, lambda v: parse_suffixed(str(v), 1024))]
    for prefix, platform in PLATFORMS:
        costs = []
        for label, better, points, size in compared:
            if not points:
                continue
            archs = points[max(points, key=size)]
            base = f"{prefix}l2"
            if base not in archs:
                continue
            for arch in sorted(a for a in archs if a.startswith(prefix) and a != base):
                words = compare(archs[arch], archs[base], better).words()
                costs.append(f"{arch} {label} {words}")
        if costs:
            out.append(
                f"Against {platform} L2 bridging (largest frame / window): "
                + "; ".join(costs)
                + "."
            )
    if out:
        out.append(f"In the rankings, {RANK_NOTE}.")
    if hint:
        out.append(hint)
    return out
