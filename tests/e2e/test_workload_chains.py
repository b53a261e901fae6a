"""The workload-complexity chains off our P4 switch forward real traffic: the kernel router
(`kind = "router"`: a Linux router namespace, proxy ARP, /32 routes) and Open vSwitch with
the static flows equivalent to the P4 programs (`kind = "ovs-flows"`). One switch, three
hosts: pings go through with no loss (the routing chains decrement the TTL: replies arrive
with 63), a TCP iperf3 moves data, and every OVS table's flows count packets."""

from __future__ import annotations

import re

import pytest

from sdnperf.arch.config import OvsFlowsConfig, RouterConfig
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_MININET, iperf3_tcp

pytestmark = NEEDS_MININET
ROUTED = {"router", "ipv4", "pipeline8"}  # chains that route (TTL - 1)


def ping_and_iperf(net) -> tuple[str, dict]:
    h1, h3 = net.get("h1"), net.get("h3")
    ping = h1.cmd("ping -c 3 -i 0.1 -W 2 10.0.0.3")
    return ping, iperf3_tcp(h1, h3)


def assert_forwarded(chain: str, ping: str, iperf: dict) -> None:
    assert " 0% packet loss" in ping, ping
    ttls = {int(t) for t in re.findall(r"ttl=(\d+)", ping)}
    assert ttls == ({63} if chain in ROUTED else {64}), ping
    assert "error" not in iperf, iperf["error"]
    assert iperf["end"]["sum_received"]["bytes"] > 100_000


def test_kernel_router_routes_with_the_hosts_unchanged(tmp_path):
    spec = build_topology("single", {"hosts": 3}, seed=1)
    with started_network(spec, RouterConfig(kind="router", name="r"), tmp_path / "run") as st:
        ping, iperf = ping_and_iperf(st.net)
        router = st.net.get("s1")
        forwarding = router.cmd("sysctl -n net.ipv4.ip_forward").strip()
        routes = router.cmd("ip route show")
        neighbour = st.net.get("h1").cmd("ip neigh show 10.0.0.3")
        router_mac = router.intf("s1-eth1").MAC()
    assert_forwarded("router", ping, iperf)
    assert forwarding == "1"
    assert all(f"10.0.0.{i} dev s1-eth{i}" in routes for i in (1, 2, 3)), routes
    # the host reached h3 through the router: its ARP answer was the router's port (proxy)
    assert router_mac in neighbour, neighbour


@pytest.mark.parametrize("program", ["l2", "ipv4", "vlan", "pipeline8"])
def test_ovs_flows_forward_and_every_table_counts(program, tmp_path):
    spec = build_topology("single", {"hosts": 3}, seed=1)
    config = OvsFlowsConfig(kind="ovs-flows", name=program, program=program)
    with started_network(spec, config, tmp_path / "run") as st:
        ping, iperf = ping_and_iperf(st.net)
        dump = st.arch.dump_flows("s1")
        facts = st.arch.facts()
    assert_forwarded(program, ping, iperf)
    hits: dict[int, int] = {}
    for table, n in re.findall(r"table=(\d+), n_packets=(\d+)", dump):
        hits[int(table)] = hits.get(int(table), 0) + int(n)
    expected = {"l2": 1, "ipv4": 2, "vlan": 3, "pipeline8": 8}[program]
    assert sorted(hits) == list(range(expected)), dump
    assert all(n > 0 for n in hits.values()), dump
    assert facts["program"] == program and facts["controller"] is None
    assert (tmp_path / "run" / "s1-flows.txt").read_text().count("table=") == dump.count("table=")
