"""The `p4` architecture end to end: our P4Runtime switch (sdnperf-switch-grpc) in Mininet,
programmed and driven by sdnperf's P4Runtime controller. All-pairs reachability with 0 %
loss on every built-in topology: l2-learning on loop-free ones, topo-forwarding on all,
proactive entries, and P4-tutorial runtime files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdnperf.arch.config import P4Config
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET, REPO, TOPOLOGIES, sdnperf_cli

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]

LOOP_FREE = ["single", "linear", "tree", "campus"]


def ping_all(spec, config, tmp_path):
    with started_network(spec, config, tmp_path / "run", ready_timeout=90) as started:
        arch, net = started.arch, started.net
        pids = arch.processes()
        loss = net.pingAll(timeout=2)
        stats = arch.control_stats()
    for pid in pids.get("switch", []) + pids.get("controller", []):
        assert (
            not Path(f"/proc/{pid}").exists()
            or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
        ), f"process {pid} left running"
    return loss, arch.facts(), stats


@pytest.mark.parametrize("topo", LOOP_FREE)
def test_l2_learning_all_pairs(topo, tmp_path):
    spec = build_topology(topo, TOPOLOGIES[topo], seed=1)
    loss, facts, stats = ping_all(spec, P4Config(kind="p4", name="p4", app="l2-learning"), tmp_path)
    assert loss == 0.0
    assert facts["app"] == "l2-learning" and facts["target"] == "sdnperf"
    assert stats["packet_ins"] > 0 and stats["flow_mods"] > 0


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_topo_forwarding_all_pairs(topo, tmp_path):
    spec = build_topology(topo, TOPOLOGIES[topo], seed=1)
    loss, _, stats = ping_all(spec, P4Config(kind="p4", name="p4", app="topo-forwarding"), tmp_path)
    assert loss == 0.0
    assert stats["packet_ins"] > 0 and stats["flow_mods"] > 0


@pytest.mark.parametrize("topo", ["grid", "campus"])
def test_proactive_all_pairs_without_packet_ins(topo, tmp_path):
    spec = build_topology(topo, TOPOLOGIES[topo], seed=1)
    loss, _, stats = ping_all(spec, P4Config(kind="p4", name="p4", app="proactive"), tmp_path)
    assert loss == 0.0
    assert stats["packet_ins"] == 0 and stats["flow_mods"] > 0


def test_runtime_json_example(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    cfg = P4Config(
        kind="p4",
        name="p4",
        app="runtime-json",
        runtime_dir=str(REPO / "examples/data/p4-runtime-linear"),
    )
    loss, facts, stats = ping_all(spec, cfg, tmp_path)
    assert loss == 0.0 and facts["program"] == "runtime files"
    assert stats["packet_ins"] == 0


@pytest.mark.parametrize("example", ["p4-runtime-json", "p4-compare"])
def test_example_studies_run(example, tmp_path):
    proc = sdnperf_cli(
        "run", f"examples/{example}.toml", "--no-report", "--out", str(tmp_path), timeout=600
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "No run failed" in output and "loss_pct" in output


def test_shared_process_serves_every_switch(tmp_path):
    """switch_processes = "shared": one sdnperf-switch-grpc process for all of campus's
    switches forwards ping and TCP; each switch keeps its own P4Runtime device (the
    controller programmed every one) and ctl socket (its own counters); stopping the
    network leaves no process behind."""
    from tests.e2e.support import iperf3_tcp

    spec = build_topology("campus", {}, seed=1)
    cfg = P4Config(kind="p4", name="p4", app="topo-forwarding", switch_processes="shared")
    with started_network(spec, cfg, tmp_path / "run", ready_timeout=90) as started:
        arch, net = started.arch, started.net
        pids = arch.processes()
        assert len(pids["switch"]) == 1, pids
        assert {sw.switch_pid for sw in net.switches} == set(pids["switch"])
        assert net.pingAll(timeout=2) == 0.0
        hosts = net.hosts
        report = iperf3_tcp(hosts[0], hosts[-1])
        assert report["end"]["sum_received"]["bytes"] > 0
        rx = {}
        for sw in net.switches:
            stats = [x for x in sw.ctl("stats").splitlines() if x.startswith("rx=")]
            assert stats, f"{sw.name}: no counters over its own ctl socket"
            rx[sw.name] = stats[0]
        assert len(set(rx.values())) > 1, f"every switch reports the same counters: {rx}"
        facts = arch.facts()
        stats = arch.control_stats()
    assert facts["switch_processes"] == "shared" and facts["switch_process_count"] == 1
    assert stats["flow_mods"] > 0
    for pid in pids["switch"] + pids.get("controller", []):
        assert (
            not Path(f"/proc/{pid}").exists()
            or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
        ), f"process {pid} left running"


def test_per_switch_processes(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    cfg = P4Config(kind="p4", name="p4", app="topo-forwarding", switch_processes="per-switch")
    loss, facts, _ = ping_all(spec, cfg, tmp_path)
    assert loss == 0.0
    assert facts["switch_processes"] == "per-switch" and facts["switch_process_count"] == 3
