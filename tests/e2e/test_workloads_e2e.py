"""Workloads through a real Mininet network of Linux bridges (no controller, no OVS)."""

import os
import shutil

import pytest

from sdnperf.workloads import (
    IperfTcpConfig,
    IperfUdpConfig,
    PingConfig,
    WorkloadError,
    run_workload,
)
from tests.e2e.support import (
    NetContext,
    WrongAddressContext,
    assert_all_reaped,
    bridge_network,
)
from tests.e2e.support import summary_metrics as metrics

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
    pytest.mark.skipif(
        not shutil.which("iperf3") or not shutil.which("mnexec"), reason="needs iperf3 and Mininet"
    ),
]


@pytest.fixture(scope="module")
def ctx():
    from mininet.topo import SingleSwitchTopo

    with bridge_network(SingleSwitchTopo(3)) as context:
        yield context


def test_ping(ctx):
    cfg = PingConfig(
        kind="ping", name="ping", pairs=[["h1", "h2"], ["h3", "h2"]], count=5, interval=0.05
    )
    out = run_workload(cfg, ctx)
    m = metrics(out)
    assert m["loss_pct"] == 0 and m["loss_first_pct"] == 0
    assert m["rtt_first_ms"] > 0 and m["rtt_ms"] > 0
    assert 0 < m["rtt_min_ms"] <= m["rtt_ms"] <= m["rtt_max_ms"]
    phases = [s.phase for s in out.samples if s.metric == "rtt_ms"]
    assert phases.count("cold") == 2 and phases.count("steady") == 10
    assert out.processes_started == 4
    assert_all_reaped(ctx)


def test_tcp_duration_and_bytes(ctx):
    out = run_workload(
        IperfTcpConfig(kind="iperf-tcp", name="tcp", pairs={"all_to_one": "h1"}, duration=2), ctx
    )
    m = metrics(out)
    assert m["throughput_mbps"] > 0 and m["bytes"] > 0
    flows = {s.flow for s in out.samples}
    assert flows == {"h2->h1", "h3->h1"}  # two pairs sharing one destination
    assert len([s for s in out.samples if s.flow == "h2->h1"]) >= 2
    out = run_workload(
        IperfTcpConfig(kind="iperf-tcp", name="tcpb", pairs={"permutation": 3}, bytes="20M"), ctx
    )
    assert metrics(out)["transfer_time_s"] > 0
    assert_all_reaped(ctx)


def test_udp(ctx):
    out = run_workload(
        IperfUdpConfig(kind="iperf-udp", name="udp", pairs=[["h1", "h3"]], rate="10M", duration=2),
        ctx,
    )
    m = metrics(out)
    assert m["throughput_mbps"] == pytest.approx(10, rel=0.2)
    assert m["loss_pct"] == 0 and m["reordered_pct"] == 0 and m["jitter_ms"] >= 0
    assert_all_reaped(ctx)


def test_failure_is_reported_and_nothing_left_behind(ctx):
    # A destination that exists but whose server cannot bind: an address it does not have.
    bad = WrongAddressContext(ctx.net)
    with pytest.raises(WorkloadError, match="h1->h2"):
        run_workload(
            IperfTcpConfig(kind="iperf-tcp", name="tcp", pairs=[["h1", "h2"]], duration=1), bad
        )
    assert_all_reaped(bad)


def test_time_limit_kills_real_iperf3(ctx):
    killer = NetContext(ctx.net)
    with pytest.raises(WorkloadError, match="hung and was killed after 1 s"):
        run_workload(
            IperfUdpConfig(
                kind="iperf-udp", name="udp", pairs=[["h2", "h3"]], duration=5, time_limit=1
            ),
            killer,
        )
    assert len(killer.pids) == 2
    assert_all_reaped(killer)


def test_cpu_sampler_sees_the_traffic(ctx):
    from sdnperf.fidelity import CpuSampler

    sampler = CpuSampler(interval=0.25)
    watched = NetContext(ctx.net)
    watched.on_process = lambda pid: (watched.pids.append(pid), sampler.watch("traffic", pid))
    with sampler:
        run_workload(
            IperfTcpConfig(kind="iperf-tcp", name="tcp", pairs=[["h1", "h2"]], duration=2), watched
        )
    report = sampler.stop()
    assert report.per_role["traffic"] > 10  # iperf3 at full speed uses most of a core
    assert report.peak_total > 0 and len(report.per_core) == os.cpu_count()
    assert_all_reaped(watched)
