"""Seed paper 000's methods through the real components: the kernel router on multi-switch
topologies (routes from the graph), per-tier link rates, and the new measurements (ICMP
throughput, a TCP rate bound with its RTT, a fixed-size UDP transfer with Eq. 1 jitter),
each at a few seconds' length."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from sdnperf import tools
from sdnperf.arch.config import RouterConfig
from sdnperf.report import plots
from sdnperf.runner import started_network
from sdnperf.samples import RunResult
from sdnperf.store import Store
from sdnperf.topo.registry import topology_from_table
from sdnperf.workloads.basic_config import IperfTcpConfig, IperfUdpConfig, PingConfig
from sdnperf.workloads.iperf import run_iperf_tcp, run_iperf_udp
from sdnperf.workloads.ping import run_ping
from tests.e2e.support import NEEDS_MININET, NetContext, bmv2_env, iperf3_tcp

pytestmark = NEEDS_MININET
REPO = Path(__file__).resolve().parents[2]

TOPOLOGIES = {
    "grid": {"kind": "grid", "rows": 2, "cols": 2},  # loops: two equal paths corner to corner
    "spine-leaf": {"kind": "spine-leaf", "spines": 2, "leaves": 2, "hosts_per_leaf": 1},
    "transit-stub": {"kind": "transit-stub", "transit_nodes": 2, "stubs_per_transit": 1},
}


def routers_between(spec, a: str, b: str) -> int:
    """Switches on the shortest path between two hosts: the TTL the reply loses."""
    return len([n for n in nx.shortest_path(spec.graph, a, b) if not spec.is_host(n)])


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_kernel_routers_route_across_every_switch(name, tmp_path):
    spec = topology_from_table(dict(TOPOLOGIES[name]), seed=1)
    hosts = spec.hosts()
    far = max(hosts[1:], key=lambda h: routers_between(spec, hosts[0], h))
    hops = routers_between(spec, hosts[0], far)
    assert hops >= 2  # the test means nothing on one switch
    with started_network(spec, RouterConfig(kind="router", name="r"), tmp_path / "run") as st:
        src, dst = st.net.get(hosts[0]), st.net.get(far)
        ping = src.cmd(f"ping -c 3 -i 0.2 -W 2 {dst.IP()}")
        every = st.net.pingAll(timeout=2)
        iperf = iperf3_tcp(src, dst)
    assert " 0% packet loss" in ping, ping
    # each router decrements the TTL once on the way back
    assert {int(t) for t in re.findall(r"ttl=(\d+)", ping)} == {64 - hops}, ping
    assert every == 0.0  # every host reaches every other
    assert iperf["end"]["sum_received"]["bytes"] > 100_000


def test_paper_measurements_on_core_and_edge_links(tmp_path):
    table = {
        **TOPOLOGIES["grid"],
        "core_link": {"bw": 1000},  # 000 Fig. 2: 1 Gbit/s between switches
        "edge_link": {"bw": 20},  # hosts' links (20, not 100: short, and visibly shaped)
    }
    spec = topology_from_table(table, seed=1)
    pairs = [("h1", "h4"), ("h2", "h3")]
    with started_network(spec, RouterConfig(kind="router", name="r"), tmp_path / "run") as st:
        edge_tc = st.net.get("h1").cmd("tc class show dev h1-eth0")
        core_tc = st.net.get("s1").cmd("tc class show dev s1-eth2")
        ctx = NetContext(st.net)
        ping = run_ping(
            PingConfig(kind="ping", name="ping", pairs=pairs, count=4, interval=0.5, size=1472),
            ctx,
        )
        tcp = run_iperf_tcp(
            IperfTcpConfig(kind="iperf-tcp", name="tcp", pairs=pairs, duration=3, rate="4M"), ctx
        )
        udp = run_iperf_udp(
            IperfUdpConfig(kind="iperf-udp", name="udp", pairs=pairs, bytes="512K", rate="2M"),
            ctx,
        )
    assert "rate 20Mbit" in edge_tc, edge_tc
    assert "rate 1Gbit" in core_tc, core_tc

    m = {s.metric: s.value for s in ping.summaries}
    # 4 replies of 1500 bytes in a 2-s series per pair: 24 kbit/s (no loss on an idle net)
    assert m["icmp_throughput_bps"] == pytest.approx(4 * 1500 * 8 / 2.0)
    windows = [s for s in ping.samples if s.metric == "icmp_throughput_bps"]
    assert {s.flow for s in windows} == {"h1->h4", "h2->h3"}
    assert sum(s.value for s in windows if s.flow == "h1->h4") == pytest.approx(4 * 1500 * 8)

    t = {s.metric: s.value for s in tcp.summaries}
    # two pairs, each bound to 4 Mbit/s on 20 Mbit/s links: the bound, not the link, limits
    assert 2 * 3.0 < t["throughput_mbps"] < 2 * 4.4, t
    assert 0 < t["tcp_rtt_ms"] < 100
    assert any(s.metric == "tcp_rtt_ms" and s.t is not None for s in tcp.samples)

    u = {s.metric: s.value for s in udp.summaries}
    # 512 KiB per pair at 2 Mbit/s: ~2.1 s each, every byte received on an idle network
    assert u["bytes"] == pytest.approx(2 * 512 * 1024, rel=0.05), u
    assert 1.5 < u["transfer_time_s"] < 4.0, u
    assert u["jitter_eq1_ms"] >= 0 and u["jitter_ms"] >= 0

    # the measured series drawn over time per architecture (000 Figs 3, 7)
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("paper-methods", "", {}, {})
        for out, wl in ((ping, "ping"), (tcp, "tcp"), (udp, "udp")):
            store.record_run(
                sid,
                RunResult(f"grid|r|{wl}|1", "grid", "r", wl, 1, {}, "ok", samples=out.samples),
            )
        drawn = [
            plots.metric_over_time(store, sid, tmp_path / "png", wl, metric)
            for wl, metric in (
                ("ping", "icmp_throughput_bps"),
                ("tcp", "tcp_rtt_ms"),
                ("udp", "jitter_ms"),
            )
        ]
    assert all(p is not None and p.stat().st_size > 5000 for p in drawn), drawn


def _study_run(name: str, only: str, tmp_path, env_extra: dict[str, str]):
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot"), **env_extra}
    env.pop("SDNPERF_TAG", None)
    argv = [sys.executable, "-m", "sdnperf.cli", "study", "run", name, "--scale", "smoke"]
    argv += ["--only", only, "--out", str(tmp_path / "results"), "--no-report"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)


def _ok_runs(tmp_path) -> dict[str, str]:
    (db,) = sorted((tmp_path / "results").glob("*/study.sqlite"))
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("select key, status from run"))


def test_bmv2_block_of_topologies_traffic_where_found(tmp_path):
    """000's own switch (§3.3: bmv2) under the same topology-aware reactive app, on a
    multi-switch topology with loops, when the reference simple_switch_grpc is there."""
    env = bmv2_env()
    r = _study_run(
        "topologies-traffic", "arch=p4-bmv2,topology=multi-path,workload=ping", tmp_path, env
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    runs = _ok_runs(tmp_path)
    assert runs == {"multi-path|p4-bmv2|ping|1": "ok"}, runs


def test_missing_components_are_left_out_with_the_reason(tmp_path):
    """Without simple_switch_grpc (or POX) the block is left out, saying why."""
    env = {tools.BMV2_ENV: str(tmp_path / "no-bmv2-here")}  # pinned: PATH is not searched
    r = _study_run("topologies-traffic", "arch=p4-bmv2|router,workload=ping", tmp_path, env)
    out = r.stdout + r.stderr
    assert "left out on this machine" in out and "simple_switch_grpc" in out, out[-4000:]
    runs = _ok_runs(tmp_path)
    assert runs and all(k.split("|")[1] == "router" for k in runs), runs
    assert set(runs.values()) == {"ok"}, runs  # the kernel routers on all three topologies


def test_pox_block_of_architectures_campus_where_installed(tmp_path):
    """004's own controller, POX's layer-2 learning switch, on the campus network."""
    from sdnperf.controllers.process import pox_home

    if pox_home() is None:
        pytest.skip("POX checkout not found ($POX_HOME or pox.py on PATH)")
    r = _study_run("architectures-campus", "arch=pox", tmp_path, {})
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    runs = _ok_runs(tmp_path)
    assert sorted(runs) == [f"campus|pox|{w}|1" for w in ("ping", "tcp", "udp")], runs
    assert set(runs.values()) == {"ok"}, runs
