"""The answer of `workload-complexity`: per forwarding chain, ping RTT and UDP jitter at the
smallest and largest frame, and TCP throughput at the smallest and largest window, ranked;
and what the heavier P4 chains cost over P4 L2 bridging."""

from __future__ import annotations

from collections import defaultdict

from sdnperf.report.stats import pct_difference
from sdnperf.studies.answers.common import mean, values
from sdnperf.workloads.config import parse_suffixed

FRAME_OVERHEAD = {"ping": 14 + 20 + 8, "udp": 14 + 20 + 8}  # Ethernet + IPv4 + ICMP/UDP headers
SIZE = {"ping": "workload.ping.size", "udp": "workload.udp.length"}
WINDOW = "workload.tcp.window"


def _by_point(store, study_id, workload, metric, path, key=lambda v: v):
    out = defaultdict(lambda: defaultdict(list))  # point value -> arch -> values
    for run, v in values(store, study_id, metric, workload):
        if path in run.point:
            out[key(run.point[path])][run.architecture].append(v)
    return out


def _ranked(groups: dict, unit: str, better: str) -> str:
    order = sorted(groups, key=lambda a: mean(groups[a]), reverse=better == "higher")
    return ", ".join(f"{a} {mean(groups[a]):.3g} {unit}" for a in order)


def answer(store, study_id: int) -> list[str]:
    out = []
    for workload, metric, what, unit in (
        ("ping", "rtt_ms", "ping RTT", "ms"),
        ("udp", "jitter_ms", "UDP jitter", "ms"),
    ):
        points = _by_point(store, study_id, workload, metric, SIZE[workload])
        if not points:
            continue
        for size in sorted({min(points), max(points)}):
            frame = size + FRAME_OVERHEAD[workload] + 4  # + FCS
            out.append(
                f"{what} with {frame}-byte frames (best first): "
                f"{_ranked(points[size], unit, 'lower')}."
            )
    tcp = _by_point(store, study_id, "tcp", "throughput_mbps", WINDOW)
    if tcp:
        by_bytes = {parse_suffixed(str(w), 1024): w for w in tcp}
        for b in sorted({min(by_bytes), max(by_bytes)}):
            out.append(
                f"TCP throughput with a {by_bytes[b]} window (best first): "
                f"{_ranked(tcp[by_bytes[b]], 'Mbit/s', 'higher')}."
            )
    # the cost of complexity on our switch: each P4 chain against P4 L2 bridging
    costs = []
    for workload, _metric, label, better, points in (
        (
            "ping",
            "rtt_ms",
            "RTT",
            "lower",
            _by_point(store, study_id, "ping", "rtt_ms", SIZE["ping"]),
        ),
        ("tcp", "throughput_mbps", "TCP", "higher", tcp),
    ):
        if not points:
            continue
        top = max(points, key=lambda v: parse_suffixed(str(v), 1024) if workload == "tcp" else v)
        archs = points[top]
        if "p4-l2" not in archs:
            continue
        for arch in sorted(a for a in archs if a.startswith("p4-") and a != "p4-l2"):
            d = pct_difference(mean(archs[arch]), mean(archs["p4-l2"]), better)
            costs.append(f"{arch} {label} {d.words()}")
    if costs:
        out.append("Against P4 L2 bridging (largest frame / window): " + "; ".join(costs) + ".")
    return out
