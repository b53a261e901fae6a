"""A per-link MTU (`[topology.link] mtu`): 2000-byte frames (seed paper 001's Table 3 goes to
2000 bytes) cross a Linux bridge, the kernel router, our P4 switch, the user-space
forwarder and the direct connection unfragmented (ping with "don't fragment": a frame above a port's MTU would be
refused or dropped); without the setting the same ping is refused at 1500."""

from __future__ import annotations

import pytest

from sdnperf.arch.config import (
    BridgeConfig,
    DirectConfig,
    P4Config,
    RouterConfig,
    UserspaceConfig,
)
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

PING_2000 = "ping -M do -s 1958 -c 3 -i 0.1 -W 2 10.0.0.2"  # 1958 + 8 + 20 + 14 = 2000 bytes


@pytest.mark.parametrize(
    "config",
    [
        BridgeConfig(kind="bridge", name="kernel-l2"),
        RouterConfig(kind="router", name="kernel-ipv4"),
        P4Config(kind="p4", name="p4-l2", app="proactive", program="l2"),
        DirectConfig(kind="direct", name="direct"),
        UserspaceConfig(kind="userspace", name="user-ipv4"),
    ],
    ids=lambda c: c.name,
)
def test_2000_byte_frames_pass_where_the_links_allow_them(tmp_path, config):
    spec = build_topology("single", {"hosts": 2}, seed=1).with_link_defaults(mtu=2000)
    with started_network(spec, config, tmp_path / "run") as started:
        h1 = started.net.get("h1")
        out = h1.cmd(PING_2000)
        mtu = h1.cmd("cat /sys/class/net/h1-eth0/mtu").strip()
    assert mtu == "2000"
    assert " 0% packet loss" in out, out


def test_without_the_setting_2000_byte_frames_are_refused(tmp_path):
    spec = build_topology("single", {"hosts": 2}, seed=1)
    with started_network(spec, BridgeConfig(kind="bridge", name="b"), tmp_path / "run") as s:
        out = s.net.get("h1").cmd(PING_2000)
    assert "0% packet loss" not in out.replace("100% packet loss", ""), out
