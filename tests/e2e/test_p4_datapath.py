"""The `p4` architecture's `datapath` end to end, through the real switch (its XDP fast
path on AF_XDP ports) in Mininet under sdnperf's P4Runtime controller: datapath = "xdp"
forwards in the kernel and counts it, packets to the controller still work through the
engine, a program outside the fast path's subset is refused naming the field, and "auto"
falls back to user space with the reason recorded."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from sdnperf.arch import ArchitectureError
from sdnperf.arch.config import P4Config
from sdnperf.arch.p4_datapath import Choice, forwarded_by
from sdnperf.runner import execute_run, started_network
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]

# in the catalog and outside the fast path's subset (sdnperf-switch check says why)
NOT_FITTING = "recirc"


def test_xdp_forwards_in_the_kernel_and_counts_it(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    cfg = P4Config(kind="p4", name="p4", app="l2-learning", datapath="xdp")
    with started_network(spec, cfg, tmp_path / "run", host_offloads=False) as started:
        arch, net = started.arch, started.net
        facts = arch.facts()
        # the first packets go to the controller (packet-in) through the engine
        assert net.pingAll(timeout=2) == 0.0
        h1, h3 = net.get("h1", "h3")
        out = h1.cmd("ping", "-c", "200", "-i", "0.005", "-q", h3.IP())
        assert " 0% packet loss" in out, out
        # TCP too (full-size frames through the kernel's redirect)
        h3.cmd("iperf3 -s -1 -D -p 5299")
        for _ in range(25):  # the daemon listens a moment after it forks
            tcp = h1.cmd("iperf3", "-c", h3.IP(), "-p", "5299", "-t", "1", "-J")
            if "Connection refused" not in tcp:
                break
            time.sleep(0.2)
        stats = arch.control_stats()
    assert facts["datapath"] == "xdp" and facts["datapath_setting"] == "xdp"
    assert '"bits_per_second"' in tcp, tcp[-500:]
    # every switch on the path forwarded the 200 pings' requests/replies in the kernel
    assert stats["xdp_forwarded"] >= 3 * 2 * 200, stats
    assert stats["xdp_to_engine"] > 0 and stats["packet_ins"] > 0, stats
    # the engine forwarded far less than the kernel
    assert stats["engine_tx"] < stats["xdp_forwarded"] / 4, stats


def test_user_datapath_counts_the_engine(tmp_path):
    spec = build_topology("linear", {"switches": 2}, seed=1)
    cfg = P4Config(kind="p4", name="p4", app="l2-learning")
    with started_network(spec, cfg, tmp_path / "run", host_offloads=False) as started:
        arch, net = started.arch, started.net
        h1, h2 = net.get("h1", "h2")
        assert " 0% packet loss" in h1.cmd("ping", "-c", "50", "-i", "0.01", "-q", h2.IP())
        stats, facts = arch.control_stats(), arch.facts()
    assert facts["datapath"] == "user"
    assert stats["xdp_forwarded"] == 0 and stats["engine_tx"] >= 2 * 2 * 50, stats


def test_program_outside_the_subset(tmp_path):
    spec = build_topology("linear", {"switches": 2}, seed=1)
    xdp = P4Config(kind="p4", name="p4", app="l2-learning", program=NOT_FITTING, datapath="xdp")
    with pytest.raises(ArchitectureError, match=r"datapath = \"xdp\".*subset"):
        with started_network(spec, xdp, tmp_path / "x", host_offloads=False):
            pass
    auto = xdp.model_copy(update={"datapath": "auto"})
    with started_network(spec, auto, tmp_path / "a", host_offloads=False) as started:
        h1, h2 = started.net.get("h1", "h2")
        assert " 0% packet loss" in h1.cmd("ping", "-c", "5", "-i", "0.05", "-q", h2.IP())
        facts = started.arch.facts()
    assert facts["datapath"] == "user" and "subset" in facts["datapath_reason"]


def test_auto_with_shaped_links_or_offloads_stays_in_user_space(tmp_path):
    spec = build_topology("linear", {"switches": 2}, seed=1)
    auto = P4Config(kind="p4", name="p4", app="l2-learning", datapath="auto")
    with started_network(spec, auto, tmp_path / "o", host_offloads=True) as started:
        facts = started.arch.facts()
    assert facts["datapath"] == "user" and "super-packets" in facts["datapath_reason"]


def test_tcp_over_shaped_campus_links_is_not_reordered_by_the_fast_path(tmp_path):
    """On shaped links the kernel forwards what finds the link idle and the engine sends
    what queues (rust/switch xdpfast/shaper.rs). A packet the kernel forwarded past one
    still on its way through the engine arrived first, and TCP took the reordering for
    loss: the default study's four TCP pairs on the campus (100 Mbit/s links) retransmitted
    2217 segments on the fast path against 0 in user space (load 17). Neither path drops
    anything here (the engine queues up to 10,000 packets a port), so a retransmit is the
    reordering, or a timeout on a saturated machine, which the user path would see too:
    the fast path may retransmit at most 2 more segments than the user path in the same
    conditions."""
    text = textwrap.dedent("""\
        [study]
        name = "campus-tcp"
        [topology]
        kind = "campus"
        [topology.link]
        bw = 100
        [[architecture]]
        name = "p4-user"
        kind = "p4"
        app = "l2-learning"
        datapath = "user"
        [[architecture]]
        name = "p4-xdp"
        kind = "p4"
        app = "l2-learning"
        datapath = "xdp"
        [[workload]]
        name = "tcp"
        kind = "iperf-tcp"
        pairs = [["h1", "h28"], ["h3", "h17"], ["h8", "h22"], ["h12", "h26"]]
        duration = 5
        """)
    loaded = load_study_text(text, "campus-tcp.toml", tmp_path)
    got = {}
    for run in plan_runs(loaded):
        result = execute_run(loaded, run, tmp_path / run.architecture.name)
        assert result.status == "ok", result.error
        got[run.architecture.name] = {s.metric: s.value for s in result.summaries}
    print("campus tcp:", got, "load", os.getloadavg())
    user, xdp = got["p4-user"], got["p4-xdp"]
    # both paths carried the flows: the kernel forwarded, the engine queued
    assert xdp["xdp_forwarded"] > 10_000 and xdp["xdp_to_engine"] > 1_000, xdp
    assert xdp["retransmits"] <= user["retransmits"] + 2, (xdp, user)


def test_vlan_on_auto_forwards_in_the_kernel_and_the_run_records_what_forwarded(tmp_path):
    """The workload-complexity study's p4-vlan (sdnperf/p4/vlan.p4: a tag pushed on the
    access port, popped on the way out) on datapath = "auto". The program passed the fast
    path's check, but every action that made a header valid or invalid punted, so the
    kernel forwarded 0 of its packets while the run recorded "xdp". Now the tag lives in
    the fast path's PHV and a frame that leaves as long as it came forwards in the kernel;
    and the run's recorded path is the one the switch's counters say forwarded (a run can
    no longer say "xdp" while the engine forwarded everything)."""
    text = textwrap.dedent("""\
        [study]
        name = "vlan-auto"
        [topology]
        kind = "single"
        hosts = 2
        [[architecture]]
        name = "p4-vlan"
        kind = "p4"
        app = "proactive"
        program = "vlan"
        datapath = "auto"
        [[workload]]
        name = "ping"
        kind = "ping"
        pairs = [["h1", "h2"]]
        count = 200
        interval = 0.005
        """)
    loaded = load_study_text(text, "vlan-auto.toml", tmp_path)
    run = plan_runs(loaded)[0]  # one repetition is enough
    result = execute_run(loaded, run, tmp_path / "run")
    assert result.status == "ok", result.error
    got = {s.metric: s.value for s in result.summaries}
    facts = result.params["facts"]
    print("vlan auto:", got, facts["datapath"], facts["xdp_share"], "load", os.getloadavg())
    # what the run records is what the counters say forwarded
    counted = forwarded_by(
        Choice(facts["datapath_started"], ""), got["xdp_forwarded"], got["engine_tx"]
    )
    assert (facts["datapath"], facts["xdp_share"]) == (counted.datapath, counted.xdp_share), (
        facts,
        got,
    )
    # and that is the kernel: the 200 requests and 200 replies (ARP floods go to the engine)
    assert facts["datapath_started"] == "xdp" and facts["datapath"] == "xdp", facts
    assert got["xdp_forwarded"] >= 2 * 200 * 0.95, got
    assert got["engine_tx"] < 0.1 * got["xdp_forwarded"], got
