"""The pieces seed papers 000 and 004 need: ICMP throughput, Eq. 1 jitter, TCP RTT,
fixed-size UDP, a TCP rate bound, per-tier link settings, per-topology workload values and
multi-switch kernel routing, each against a worked example."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from sdnperf.arch.router import next_hops, router_commands
from sdnperf.study.estimate import workload_seconds
from sdnperf.study.loader import StudyError, load_study_text
from sdnperf.study.plan import plan_runs
from sdnperf.topo.registry import build_topology, topology_from_table
from sdnperf.workloads.basic_config import IperfTcpConfig, IperfUdpConfig
from sdnperf.workloads.iperf import _limit, parse_iperf3, udp_output
from sdnperf.workloads.jitter import eq1_over_flows
from sdnperf.workloads.ping import (
    PingResult,
    Reply,
    icmp_throughput,
    icmp_throughput_series,
    ping_output,
)

DATA = Path(__file__).parent / "data"


def by_metric(out):
    return {s.metric: s for s in out.summaries}


# --- ICMP throughput (000 Figs 3-4, Tables 5a/6a) ------------------------------------


def test_icmp_throughput_worked_example():
    # 1500-byte packets (1472 payload + 28): replies at 0.5, 1.5 and 1.7 s after the start.
    series = icmp_throughput_series([10.5, 11.5, 11.7], 1500, start=10.0, end=13.0)
    assert series == [(1.0, 12_000.0), (2.0, 24_000.0), (3.0, 0.0)]
    # 1000 replies of 1500 bytes over a 1000-s series: 000's "data rate of 12 Kbps"
    assert icmp_throughput(1000, 1500, 1000.0) == 12_000.0
    assert icmp_throughput(0, 1500, 0.0) is None
    assert icmp_throughput_series([1.0], 1500, start=2.0, end=2.0) == []


def test_ping_output_icmp_throughput_per_pair_and_mean():
    # Pair a: 4 sent at 1 s, 3 answered; pair b: 4 of 4. Payload 1472 -> 1500-byte packets.
    a = PingResult([Reply(i, 1.0, 100.2 + i) for i in (1, 2, 4)], transmitted=4, received=3)
    b = PingResult([Reply(i, 1.0, 100.2 + i) for i in (1, 2, 3, 4)], transmitted=4, received=4)
    out = ping_output("p", {}, {"a": a, "b": b}, 99.0, 1472, 1.0, steady_t0=100.0)
    mean = by_metric(out)["icmp_throughput_bps"]
    assert mean.value == pytest.approx((3 * 12_000 / 4 + 4 * 12_000 / 4) / 2)
    assert mean.unit == "bit/s" and mean.better == "higher"
    series_a = [s for s in out.samples if s.metric == "icmp_throughput_bps" and s.flow == "a"]
    # windows from the steady start: [100,101) empty, then replies at 101.2, 102.2, 104.2
    assert [s.value for s in series_a] == [0.0, 12_000.0, 12_000.0, 0.0]
    assert [s.t for s in series_a] == [2.0, 3.0, 4.0, 5.0]  # seconds from the workload start
    # without size/interval (old callers) there is no ICMP throughput
    assert "icmp_throughput_bps" not in by_metric(ping_output("p", {}, {"a": a}, 99.0))


# --- jitter, 000's Eq. 1 -----------------------------------------------------------------


def test_eq1_worked_example():
    # Flow f1: packets with jitter 1, 2, 3 ms (one each) -> 2 ms; flow f2: 4 ms for 3 packets
    # and 8 ms for 1 -> (12 + 8) / 4 = 5 ms; Eq. 1 = (2 + 5) / 2 = 3.5 ms. Each flow weighs
    # the same however many packets it has.
    per_flow = {"f1": [(1.0, 1), (2.0, 1), (3.0, 1)], "f2": [(4.0, 3), (8.0, 1)]}
    assert eq1_over_flows(per_flow) == pytest.approx(3.5)
    assert eq1_over_flows({"f1": [(1.0, 0)]}) is None
    assert eq1_over_flows({"f1": [(2.0, 2)], "empty": []}) == pytest.approx(2.0)


def test_udp_eq1_and_bytes_from_recorded_runs():
    clean = parse_iperf3((DATA / "iperf3_udp.json").read_text())
    lossy = parse_iperf3((DATA / "iperf3_udp_loss.json").read_text())
    assert [iv.packets for iv in clean.intervals] == [863, 863, 863]
    out = udp_output("udp", {"c": clean, "l": lossy}, {}, fixed_bytes=True)
    m = by_metric(out)

    def weighted(res):
        return sum(iv.jitter_ms * iv.packets for iv in res.intervals) / sum(
            iv.packets for iv in res.intervals
        )

    assert m["jitter_eq1_ms"].value == pytest.approx((weighted(clean) + weighted(lossy)) / 2)
    assert m["bytes"].value == clean.bytes + lossy.bytes
    assert m["transfer_time_s"].value == pytest.approx((clean.seconds + lossy.seconds) / 2)


def test_tcp_rtt_from_a_recorded_run():
    res = parse_iperf3((DATA / "iperf3_tcp_bytes.json").read_text())
    # iperf3 gives microseconds: mean_rtt 38, per-interval rtt 37 and 40
    assert res.rtt_ms == pytest.approx(0.038)
    assert res.rtt_series == [(pytest.approx(1.000362), 0.037), (pytest.approx(1.973979), 0.040)]
    doc = json.loads((DATA / "iperf3_udp.json").read_text())
    assert parse_iperf3(json.dumps(doc)).rtt_ms is None  # UDP has none


# --- rate bound on TCP, fixed-size UDP ------------------------------------------------------


def test_tcp_rate_bound_and_udp_bytes():
    tcp = IperfTcpConfig(kind="iperf-tcp", name="t", pairs=[("h1", "h2")], bytes="1G", rate="12M")
    assert tcp.rate_bps == 12e6 and tcp.byte_count == 1024**3
    assert IperfTcpConfig(kind="iperf-tcp", name="t", pairs=[("h1", "h2")]).rate is None
    udp = IperfUdpConfig(kind="iperf-udp", name="u", pairs=[("h1", "h2")], bytes="1G", rate="12M")
    assert udp.duration is None
    # 1 GiB at 12 Mbit/s: 715.8 s (000 Table 3: 1 GB in 514-670 s at 1.04-1.2e7 bit/s)
    assert udp.expected_seconds == pytest.approx(1024**3 * 8 / 12e6)
    assert workload_seconds(udp) == pytest.approx(715.8, abs=0.1)
    assert workload_seconds(tcp) == pytest.approx(715.8, abs=0.1)
    assert IperfUdpConfig(kind="iperf-udp", name="u", pairs=[("h1", "h2")]).duration == 5
    with pytest.raises(pydantic.ValidationError, match="either duration or bytes"):
        IperfUdpConfig(kind="iperf-udp", name="u", pairs=[("h1", "h2")], bytes="1M", duration=3)
    assert _limit(10.0, None, None) == 25.0
    assert _limit(None, 1_500_000, 12e6) == pytest.approx(1.0 * 1.5 + 15.0)
    assert _limit(None, 1_500_000, None) == 120.0


# --- per-tier link settings -------------------------------------------------------------


def test_core_and_edge_link_tiers():
    spec = topology_from_table(
        {
            "kind": "spine-leaf",
            "spines": 2,
            "leaves": 2,
            "hosts_per_leaf": 2,
            "core_link": {"bw": 1000},
            "edge_link": {"bw": 100},
            "link": {"bw": 10, "delay_ms": 1},
        },
        seed=1,
    )
    for a, b, data in spec.graph.edges(data=True):
        host = spec.is_host(a) or spec.is_host(b)
        assert data["bw"] == (100 if host else 1000)  # the tier wins over [topology.link]
        assert data["delay_ms"] == 1  # unset in the tiers: the all-links default
    assert spec.link_tier("h1", "s3") == "edge" and spec.link_tier("s1", "s3") == "core"


def test_link_tiers_in_a_study_file_and_sweep_paths():
    study = load_study_text(
        '[study]\nname = "x"\n[topology]\nkind = "linear"\nswitches = 2\n'
        "[topology.core_link]\nbw = 1000\n[topology.edge_link]\nbw = 100\n"
        '[[architecture]]\nname = "b"\nkind = "bridge"\n'
        '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n'
        '[[sweep]]\nparam = "topology.edge_link.bw"\nvalues = [10, 100]\n',
        "<t>",
        base_dir=".",
    )
    bws = {}
    for run in plan_runs(study):
        (spec,) = run.study.topologies.values()
        bws[run.point] = sorted(d["bw"] for _, _, d in spec.graph.edges(data=True))
    assert sorted(bws.values()) == [[10, 10, 1000], [100, 100, 1000]]


# --- per-topology values and workloads limited to topologies ------------------------------

TWO_TOPOLOGIES = """
[study]
name = "x"
[[topology]]
name = "small"
kind = "single"
hosts = 2
[[topology]]
name = "big"
kind = "single"
hosts = 6
[[architecture]]
name = "b"
kind = "bridge"
[[workload]]
name = "ping"
kind = "ping"
pairs = [["h1", "h2"]]
count = 10
per_topology = { big = { count = 20, pairs = [["h1", "h6"], ["h5", "h6"]] } }
[[workload]]
name = "udp"
kind = "iperf-udp"
topologies = ["big"]
pairs = [["h3", "h4"]]
bytes = "1M"
per_topology = { big = { bytes = "none", duration = 2 } }
"""


def test_per_topology_values_and_topologies():
    study = load_study_text(TWO_TOPOLOGIES, "<t>", base_dir=".")
    runs = {(r.topology, r.workload.name): r.workload for r in plan_runs(study)}
    assert set(runs) == {("small", "ping"), ("big", "ping"), ("big", "udp")}
    assert runs["small", "ping"].count == 10 and runs["small", "ping"].pairs == [("h1", "h2")]
    assert runs["big", "ping"].count == 20
    assert runs["big", "ping"].pairs == [("h1", "h6"), ("h5", "h6")]
    assert runs["big", "udp"].duration == 2 and runs["big", "udp"].bytes is None


def test_per_topology_errors_name_the_topology():
    # h6 exists on "big" only: fine there, an error on "small" (the default pairs)
    bad_host = TWO_TOPOLOGIES.replace(
        'pairs = [["h1", "h2"]]\ncount', 'pairs = [["h1", "h6"]]\ncount'
    )
    with pytest.raises(StudyError, match=r"unknown host.*h6"):
        load_study_text(bad_host, "<t>", base_dir=".")
    bad_value = TWO_TOPOLOGIES.replace("count = 20", "count = 0")
    with pytest.raises(StudyError, match=r"count: on topology 'big'"):
        load_study_text(bad_value, "<t>", base_dir=".")
    unknown = TWO_TOPOLOGIES.replace('topologies = ["big"]', 'topologies = ["huge"]')
    with pytest.raises(StudyError, match=r"topologies names no \[\[topology\]\] entry: huge"):
        load_study_text(unknown, "<t>", base_dir=".")


# --- kernel routing on several switches ----------------------------------------------------


def test_next_hops_follow_shortest_paths():
    grid = build_topology("grid", {"rows": 2, "cols": 3}, seed=1)  # s1 s2 s3 / s4 s5 s6
    hops = next_hops(grid)
    assert hops["s1"]["s2"] == "s2" and hops["s1"]["s3"] == "s2"
    assert hops["s1"]["s6"] in ("s2", "s4")  # two equal paths: one, the same every time
    assert next_hops(grid) == hops
    for src, table in hops.items():
        assert src not in table
        for nxt in table.values():
            assert grid.graph.has_edge(src, nxt)  # always a neighbour


def test_router_commands_for_remote_hosts():
    cmds = router_commands(
        ["s1-eth1", "s1-eth2"],
        [{"ip": "10.0.0.1", "mac": "00:00:00:00:00:01", "intf": "s1-eth1"}],
        [{"ip": "10.0.0.2", "intf": "s1-eth2", "next_mac": "aa:bb:cc:00:00:02"}],
    )
    assert ["ip", "route", "replace", "10.0.0.2/32", "dev", "s1-eth2"] in cmds
    assert [
        "ip", "neigh", "replace", "10.0.0.2", "lladdr", "aa:bb:cc:00:00:02", "dev", "s1-eth2",
        "nud", "permanent",
    ] in cmds  # fmt: skip
    assert ["sysctl", "-q", "-w", "net.ipv4.conf.s1-eth2.rp_filter=0"] in cmds
