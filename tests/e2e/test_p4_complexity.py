"""The workload-complexity programs (l2, ipv4, vlan, pipeline8) forward real traffic: one
switch, two hosts (h1 = 10.0.0.1 / 00..01 on port 1, h2 = 10.0.0.2 / 00..02 on port 2),
entries from P4-tutorial runtime files (app runtime-json, `program` = the program; the
files hold the catalog's entries for these hosts), or built from the network (app proactive). Pings
go through with no loss; the routing programs decrement the TTL (replies arrive with 63)."""

from __future__ import annotations

import json
import re

import pytest

from sdnperf.arch.config import P4Config
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]
HOSTS = {1: ("00:00:00:00:00:01", "10.0.0.1"), 2: ("00:00:00:00:00:02", "10.0.0.2")}


def runtime_document(program: str) -> dict:
    """The program's entries for HOSTS from the catalog's builder, as a runtime file."""
    from sdnperf.p4.catalog import program as find

    return find(program).make_entries(
        [{"port": p, "mac": mac, "ip": ip} for p, (mac, ip) in HOSTS.items()]
    )


@pytest.mark.parametrize("program", ["l2", "ipv4", "vlan", "pipeline8"])
def test_program_forwards_pings(program, tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "s1-runtime.json").write_text(json.dumps(runtime_document(program)))
    spec = build_topology("single", {"hosts": 2}, seed=1)
    config = P4Config(
        kind="p4", name=program, app="runtime-json", runtime_dir=str(runtime), program=program
    )
    with started_network(spec, config, tmp_path / "run") as started:
        net, arch = started.net, started.arch
        out = net.get("h1").cmd("ping -c 3 -i 0.1 -W 2 10.0.0.2")
        facts = arch.facts()
    assert " 0% packet loss" in out, out
    assert facts["program"] == "runtime files"
    ttls = {int(t) for t in re.findall(r"ttl=(\d+)", out)}
    assert ttls == ({63} if program in ("ipv4", "pipeline8") else {64}), out


@pytest.mark.parametrize("program", ["l2", "ipv4", "vlan", "pipeline8"])
def test_proactive_entries_from_the_topology(program, tmp_path):
    """app = "proactive": the program's entries are built from the network (catalog
    make_entries), no runtime files written by hand; the same pings go through."""
    spec = build_topology("single", {"hosts": 3}, seed=1)
    config = P4Config(kind="p4", name=program, app="proactive", program=program)
    with started_network(spec, config, tmp_path / "run") as started:
        out = started.net.get("h1").cmd("ping -c 3 -i 0.1 -W 2 10.0.0.3")
        written = json.loads((tmp_path / "run" / "runtime" / "s1-runtime.json").read_text())
    assert " 0% packet loss" in out, out
    ttls = {int(t) for t in re.findall(r"ttl=(\d+)", out)}
    assert ttls == ({63} if program in ("ipv4", "pipeline8") else {64}), out
    assert len(written["multicast_group_entries"][0]["replicas"]) == 3


def test_proactive_entries_need_one_switch(tmp_path):
    from sdnperf.arch.base import ArchitectureError

    spec = build_topology("linear", {"switches": 2}, seed=1)
    config = P4Config(kind="p4", name="l2", app="proactive", program="l2")
    with pytest.raises(
        ArchitectureError,
        match="for one switch with the hosts on its ports; topology .* has 2 switches",
    ):
        with started_network(spec, config, tmp_path / "run"):
            pass
