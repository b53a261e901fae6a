"""A persistent TAP that no process holds (what a killed userspace ovs-vswitchd leaves of a
bridge) does not stop the next network that uses its name; a held one is left alone."""

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
