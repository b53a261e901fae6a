"""What a killed or interrupted network leaves must not outlive it: a persistent TAP no
process holds (a killed userspace ovs-vswitchd's bridge) does not stop the next network that
uses its name (a held one is left alone), and a link Ctrl-C interrupted half-way is deleted
when the network stops."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
from pathlib import Path

import pytest

from sdnperf.arch.config import BridgeConfig
from sdnperf.emulation.cleanup import orphaned_taps
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

TUNSETIFF, IFF_TAP, IFF_NO_PI = 0x400454CA, 0x0002, 0x1000


def exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def persistent_tap(name: str) -> None:
    subprocess.run(["ip", "tuntap", "add", "dev", name, "mode", "tap"], check=True)


def test_only_unheld_persistent_taps_are_orphans():
    orphan, held, veth = (f"sdpo{os.getpid() % 10000}{k}" for k in "abc")
    persistent_tap(orphan)
    fd = os.open("/dev/net/tun", os.O_RDWR)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", held.encode(), IFF_TAP | IFF_NO_PI))
        subprocess.run(
            ["ip", "link", "add", veth, "type", "veth", "peer", "name", veth + "p"], check=True
        )
        assert orphaned_taps([orphan, held, veth, "sdpo-none"]) == [orphan]
    finally:
        os.close(fd)  # a non-persistent TAP goes with its last holder
        for name in (orphan, veth):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
    assert not exists(held)


def test_network_starts_over_a_dead_switchs_tap(tmp_path):
    if exists("s1"):
        pytest.skip("s1 exists (another network is running)")
    persistent_tap("s1")
    try:
        spec = build_topology("single", {"hosts": 2}, seed=1)
        config = BridgeConfig(kind="bridge", name="bridge")
        with started_network(spec, config, tmp_path / "run") as started:
            assert started.net.pingAll(timeout=2) == 0.0
    finally:
        subprocess.run(["ip", "link", "del", "s1"], capture_output=True)


def test_ctrl_c_inside_add_link_leaves_no_interface(tmp_path, monkeypatch):
    """Ctrl-C between creating a link's veth pair and Mininet recording it: the pair is in
    no node's list, so only the registry can find it when the network stops."""
    from mininet.link import Link
    from mininet.nodelib import LinuxBridge

    from sdnperf.emulation.network import Network

    real = Link.makeIntfPair.__func__
    made = []

    def interrupted_after_a_switch_to_switch_pair(cls, *args, **kwargs):
        # both ends in the root namespace (a host's end would go with its namespace)
        result = real(cls, *args, **kwargs)
        if all(name.startswith("s") for name in args[:2]):
            made.append(args[:2])
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(
        Link, "makeIntfPair", classmethod(interrupted_after_a_switch_to_switch_pair)
    )
    spec = build_topology("linear", {"switches": 3}, seed=1)
    network = Network(
        spec, tmp_path / "run", {"switch": LinuxBridge, "controller": None}, netem=False
    )
    with pytest.raises(KeyboardInterrupt):
        network.start()
    half_made = [name for pair in made for name in pair if exists(name)]
    assert half_made, "the interrupted pair exists before the stop"
    network.stop()
    left = [n for n in network.registry.interfaces + network.registry.bridges if exists(n)]
    assert left == []
