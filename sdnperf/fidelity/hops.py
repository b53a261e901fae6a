"""The "emulator-bound" mark: a run whose switches each take far longer to forward one
packet than the same switches do on a small topology.

Why: on a 10x10 grid (100 switches, ~380 ports) the openflow architecture's steady ping
had a min RTT of 107 ms against 2.4 ms for p4, with no CPU-bound mark. Without the
openvswitch kernel module every OVS switch of a run lives in ONE userspace ovs-vswitchd,
whose main thread polls every port of every switch in one loop: a packet waits for that
thread once per switch it crosses, and each pass of the loop grows with the port count
(per-port receive/send system calls, poll() over every socket, per-port bookkeeping). The
thread need not be busy for that (it sleeps in poll() between packets), so the CPU rule
in cpu.py does not see it: the figure measures the emulator, not the architecture.

The measure: after the workload, a few pings between two hosts whose path crosses as
few switches as possible (two adjacent switches where the topology allows), min RTT /
(2 x switches) = the time one switch takes to forward one packet. The min of a short
series filters scheduling noise; the probe runs after the workload (never before it, so
a "cold" first packet stays cold). `probe_pair` and `judge` are pure.
"""

from __future__ import annotations

import subprocess

import networkx as nx

from ..topo.spec import TopoSpec
from ..workloads.ping import parse_ping, ping_argv

# ---- When is a run emulator-bound? ----------------------------------------------------
# One switch forwarding one packet on a small topology (3x3 grid, one host per switch,
# this 2-core machine under a load average of ~15): OVS userspace ~0.2 ms, openflow ~0.18
# ms, Linux bridge ~0.01 ms, our P4 switch ~0.07 ms (2.4 ms over 36 switch passes of the
# 10x10 grid). On a 6x6 grid OVS userspace took 5.5 ms, on 10x10 ~13 ms. Rechecked on the
# quiet machine (docs/scale-out.md, grids 3x3..10x10): openflow 0.14 ms at 3x3, 0.6-0.8 ms
# at 5x5..8x8, 1.2 ms at 10x10 (marked); P4 0.03-0.05 ms and the bridge ~0.01 ms at every size.
BASELINE_HOP_MS = 0.2  # small-topology per-switch time of the slowest architecture
FACTOR = 5.0  # "far above": a switch this many times slower than the baseline
PROBE_PINGS = 5  # pings of the measured series (after the warm-up's first reply)
PROBE_INTERVAL_S = 0.05
WARM_UP_S = 4  # s, bound on the warm-up (it was 2 pings 0.2 s apart, each waiting up to 2 s)
# ----------------------------------------------------------------------------------------


def probe_pair(spec: TopoSpec, held: frozenset[str] = frozenset()) -> tuple[str, str, int] | None:
    """(source host, destination host, switches on the path between them): the first host
    and the host reached over the fewest switches, preferring paths over at least two
    switches (they cross a switch-to-switch link, as every longer path does). Hosts in
    `held` (their packets are delayed on purpose: held_hosts) are left out. None when no
    other host is reachable."""
    hosts = [h for h in spec.hosts() if h not in held]
    if len(hosts) < 2:
        return None
    src = hosts[0]
    lengths = nx.single_source_shortest_path_length(spec.graph, src)
    reach = [(lengths[h] - 1, h) for h in hosts[1:] if h in lengths]  # edges - 1 = switches
    if not reach:
        return None
    order = {h: i for i, h in enumerate(hosts)}
    over_links = [r for r in reach if r[0] >= 2]
    switches, dst = min(over_links or reach, key=lambda r: (r[0], order[r[1]]))
    return src, dst, switches


def per_switch_ms(min_rtt_ms: float, switches: int) -> float:
    """Time one switch took to forward one packet: a round trip crosses each switch twice."""
    return min_rtt_ms / (2 * max(switches, 1))


def configured_rtt_ms(spec: TopoSpec, src: str, dst: str) -> float:
    """The round trip the study's link delays alone give on the shortest src-dst path (each
    link delays each direction once): not the switches' time, so it is taken off first."""
    try:
        path = nx.shortest_path(spec.graph, src, dst)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return 0.0
    return 2 * sum(
        float(spec.graph.edges[a, b].get("delay_ms") or 0) for a, b in zip(path, path[1:])
    )


def judge(
    min_rtt_ms: float | None, switches: int, configured_ms: float = 0.0, what: str = ""
) -> tuple[bool, str]:
    """(emulator_bound, reason in words) for a min RTT over `switches` switches, of which
    `configured_ms` is the links' configured delay; `what` names the measurement in the
    reason ("the workload's h1->h100"). (False, "") when there was no answer (nothing
    measured, nothing claimed)."""
    baseline_ms, factor = BASELINE_HOP_MS, FACTOR
    if min_rtt_ms is None or switches < 1:
        return False, ""
    hop = per_switch_ms(max(min_rtt_ms - configured_ms, 0.0), switches)
    if hop <= factor * baseline_ms:
        return False, ""
    delays = f", {configured_ms:g} ms of it configured link delay" if configured_ms else ""
    return True, (
        f"one switch took {hop:.2f} ms to forward a packet ({what + ' ' if what else ''}min RTT "
        f"{min_rtt_ms:.2f} ms over {switches} switch{'es' if switches != 1 else ''}{delays}), "
        f"more than {factor:g}x the {baseline_ms:g} ms of a small topology: the emulator (e.g. "
        f"one userspace ovs-vswitchd polling every port) sets this pace, not the architecture"
    )


def held_hosts(host_ips: dict[str, str], selection: str | None) -> frozenset[str]:
    """The hosts whose packets the architecture delays on purpose: those whose IP lies in
    `selection` (p4.catalog.held_selection: an IPv4 prefix, "any" for every host, None for
    none). A recirculation study holds its pings to h2 for milliseconds by design; judged
    as a switch's pace they would mark every run emulator-bound."""
    import ipaddress

    if selection is None:
        return frozenset()
    if selection == "any":
        return frozenset(host_ips)
    net = ipaddress.IPv4Network(selection, strict=False)
    held = set()
    for host, ip in host_ips.items():
        try:
            if ipaddress.ip_address(ip.split("/")[0]) in net:
                held.add(host)
        except ValueError:
            continue  # no IPv4 address: nothing of it is selected
    return frozenset(held)


def workload_pace(
    spec: TopoSpec, samples, held: frozenset[str] = frozenset()
) -> tuple[float, str, float, int, float] | None:
    """The slowest switch pace the workload's own steady pings show: (ms per switch, flow,
    its min RTT, switches on its path, configured delay on it), or None without steady
    pings. Why besides the probe: the probe's path is the shortest the topology has, and on
    a 10x10 grid one userspace ovs-vswitchd gave 0.89 ms per switch there but 54 ms over the
    workload's long path, ~1.4 ms per switch (issue 27). Flows from or to a host in `held`
    (delayed on purpose: held_hosts) say nothing of the pace and are left out."""
    best: dict[str, float] = {}
    for s in samples:
        if s.metric == "rtt_ms" and s.phase == "steady" and "->" in s.flow and s.value == s.value:
            best[s.flow] = min(best.get(s.flow, s.value), s.value)
    slowest = None
    for flow, rtt in best.items():
        src, dst = flow.split("->", 1)
        if src not in spec.graph or dst not in spec.graph or {src, dst} & held:
            continue
        try:
            switches = nx.shortest_path_length(spec.graph, src, dst) - 1
        except nx.NetworkXNoPath:
            continue
        if switches < 1:
            continue
        configured = configured_rtt_ms(spec, src, dst)
        hop = per_switch_ms(max(rtt - configured, 0.0), switches)
        if slowest is None or hop > slowest[0]:
            slowest = (hop, flow, rtt, switches, configured)
    return slowest


def measure(net, src: str, dst: str) -> float | None:
    """Min RTT in ms of a short ping series src -> dst in a started network (None when no
    reply came back). A warm-up first pings every 0.2 s until one reply is back (ARP is
    resolved and the path forwards; bounded by WARM_UP_S) instead of always sending two
    0.2 s apart: a reactive controller's flow for the forward direction may then come with
    the series' first ping, and the minimum is over the series."""
    dst_ip = net.get(dst).IP()
    host = net.get(src)
    warm_up = ping_argv(dst_ip, 1, 0.2, 56, 2.0, deadline=WARM_UP_S)
    series = ping_argv(dst_ip, PROBE_PINGS, PROBE_INTERVAL_S, 56, 2.0)
    for argv, limit in ((warm_up, WARM_UP_S), (series, PROBE_PINGS * (PROBE_INTERVAL_S + 2.0))):
        proc = host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = proc.communicate(timeout=limit + 5.0)
        except subprocess.TimeoutExpired:
            proc.kill()  # never leave a ping behind in a host that is about to go
            proc.wait()
            raise
    replies = parse_ping(out).replies
    return min(r.rtt_ms for r in replies) if replies else None
