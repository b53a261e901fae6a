"""`kind = "bridge"` with `vlan = N`: the kernel's VLAN tagging chain (a vlan_filtering
bridge, every port an access port of VLAN N: tagged on ingress, untagged on egress). Where
the kernel has VLAN filtering, pings pass and the kernel reports the ports in VLAN N as
PVID, egress untagged; where it has not (detected in a throwaway namespace), the
architecture is refused before anything starts, naming the kernel feature."""

from __future__ import annotations

import subprocess

import pytest

from sdnperf.arch.base import ArchitectureError
from sdnperf.arch.config import BridgeConfig
from sdnperf.emulation import capabilities
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET


def test_vlan_bridge_tags_and_untags_or_is_refused(tmp_path):
    spec = build_topology("single", {"hosts": 2}, seed=1)
    config = BridgeConfig(kind="bridge", name="kernel-vlan", vlan=10)
    probe = subprocess.run(
        ["ip", "link", "add", "sdnvlanprobe", "type", "bridge", "vlan_filtering", "1"],
        capture_output=True,
        text=True,
    )
    subprocess.run(["ip", "link", "del", "sdnvlanprobe"], capture_output=True)
    assert capabilities.bridge_vlan_filtering().ok == (probe.returncode == 0)
    if probe.returncode != 0:
        with pytest.raises(
            ArchitectureError,
            match="kernel-vlan.*vlan = 10 needs VLAN filtering "
            "in Linux bridges: this kernel's bridges cannot",
        ):
            with started_network(spec, config, tmp_path / "run"):
                pass
        return
    with started_network(spec, config, tmp_path / "run") as started:
        out = started.net.get("h1").cmd("ping -c 3 -i 0.1 -W 2 10.0.0.2")
        vlans = subprocess.run(["bridge", "vlan", "show"], capture_output=True, text=True).stdout
        facts = started.arch.facts()
    assert " 0% packet loss" in out, out
    ports = [line for line in vlans.splitlines() if line.startswith("s1-eth")]
    assert len(ports) == 2 and all("10 PVID Egress Untagged" in p for p in ports), vlans
    assert facts["vlan"] == 10
