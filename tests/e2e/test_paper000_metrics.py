"""Seed paper 000's table columns we measure ourselves, through a real Mininet network of
Linux bridges with the real tools: UDP one-way delay (iperf3's send stamps against a
capture at the receiver), TCP retransmissions as a share of segments, and the live
stream's jitter over time, its Eq. 1 jitter and the data it moved."""

import glob
import os
import tempfile

import pytest

from sdnperf.workloads import IperfTcpConfig, IperfUdpConfig, run_workload
from sdnperf.workloads.traffic_config import LiveVideoConfig
from tests.e2e.support import NEEDS_MININET, assert_all_reaped, bridge_network
from tests.e2e.support import summary_metrics as metrics

pytestmark = NEEDS_MININET


@pytest.fixture(scope="module")
def ctx():
    from mininet.link import TCLink
    from mininet.topo import Topo

    class Bottleneck(Topo):
        """h1, h2 on free links; h3 behind a 5 Mbit/s (htb) link."""

        def build(self):
            s1 = self.addSwitch("s1")
            self.addLink(self.addHost("h1"), s1)
            self.addLink(self.addHost("h2"), s1)
            self.addLink(self.addHost("h3"), s1, bw=5)

    with bridge_network(Bottleneck(), link=TCLink) as context:
        yield context


def owd_dirs():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "sdnperf-cap-*")))


def test_udp_one_way_delay_sees_the_queue(ctx):
    before = owd_dirs()
    free = run_workload(
        IperfUdpConfig(
            kind="iperf-udp",
            name="udp",
            pairs=[["h1", "h2"]],
            rate="4M",
            duration=2,
            one_way_delay=True,
        ),
        ctx,
    )
    m = metrics(free)
    # an idle bridge: well under a few ms, never negative (one clock for every host)
    assert 0 < m["owd_ms"] < 20 and m["owd_ms"] <= m["owd_max_ms"]
    assert [s.flow for s in free.samples if s.metric == "owd_ms"] == ["h1->h2"]
    # 8 Mbit/s into a 5 Mbit/s link: the htb queue fills, each datagram waits longer
    queued = run_workload(
        IperfUdpConfig(
            kind="iperf-udp",
            name="udpq",
            pairs=[["h1", "h3"]],
            rate="8M",
            duration=3,
            one_way_delay=True,
        ),
        ctx,
    )
    q = metrics(queued)
    assert q["owd_ms"] > 10 * m["owd_ms"] and q["owd_ms"] > 20, (m, q)
    assert owd_dirs() == before  # the pcaps are removed
    assert_all_reaped(ctx)


def test_udp_without_one_way_delay_captures_nothing(ctx):
    out = run_workload(
        IperfUdpConfig(kind="iperf-udp", name="udp", pairs=[["h1", "h2"]], rate="2M", duration=1),
        ctx,
    )
    assert "owd_ms" not in metrics(out)
    assert_all_reaped(ctx)


def test_tcp_retransmit_share(ctx):
    out = run_workload(
        IperfTcpConfig(kind="iperf-tcp", name="tcp", pairs=[["h1", "h3"]], duration=3), ctx
    )
    m = metrics(out)
    # the 5 Mbit/s link's queue overflows under an unbounded sender: some segments are
    # sent again; the share is below 100 % and agrees with the count
    assert 0 <= m["retransmit_pct"] < 100
    assert (m["retransmit_pct"] > 0) == (m["retransmits"] > 0)
    assert_all_reaped(ctx)


def test_live_stream_jitter_over_time_eq1_and_bytes(ctx):
    out = run_workload(
        LiveVideoConfig(
            kind="live-video", name="cdn", pairs=[["h1", "h2"]], bitrate="2M", duration=3
        ),
        ctx,
    )
    m = metrics(out)
    assert m["jitter_eq1_ms"] >= 0 and m["jitter_rfc3550_ms"] >= 0
    # 2 Mbit/s for 3 s is 750 kB of video (+ 40 B of our headers per packet, in the payload)
    assert m["bytes"] == pytest.approx(750_000, rel=0.1)
    over_time = sorted(
        (s.seq, s.t) for s in out.samples if s.metric == "jitter_rfc3550_ms" and s.t is not None
    )
    assert len(over_time) >= 3 and [seq for seq, _ in over_time][:3] == [0, 1, 2]
    assert_all_reaped(ctx)


def test_ping_with_control_frames_counts_the_arp_exchange(ctx):
    from sdnperf.workloads import PingConfig

    for host in ctx.net.hosts:  # empty ARP caches: the first ping must ask
        host.cmd("ip neigh flush all")
    before = owd_dirs()
    out = run_workload(
        PingConfig(
            kind="ping",
            name="ping",
            pairs=[["h1", "h2"]],
            count=3,
            interval=1.0,
            size=1472,
            control_frames=True,
        ),
        ctx,
    )
    arp = [s for s in out.samples if s.metric == "arp_frames_per_s"]
    lldp = [s for s in out.samples if s.metric == "lldp_frames_per_s"]
    # h1 asks for h2 and hears the answer (h2 may ask back later): at least two ARP frames;
    # Linux bridges send no LLDP
    assert sum(s.value for s in arp) >= 2 and sum(s.value for s in lldp) == 0
    assert {s.flow for s in arp} == {"h1"}
    # a bin for every second of the run (3 pings at 1 s, one cold first), from t = 1 s on
    assert len(arp) >= 3 and [s.t for s in arp][:3] == [1.0, 2.0, 3.0]
    # the ICMP throughput series is still there, unchanged by the capture
    assert any(s.metric == "icmp_throughput_bps" for s in out.samples)
    assert owd_dirs() == before
    assert_all_reaped(ctx)
