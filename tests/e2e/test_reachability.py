"""All-pairs reachability (0 % loss) on every built-in topology for every architecture,
through real Mininet + Linux bridge / Open vSwitch + os-ken (and Faucet, ovs-testcontroller)."""

from __future__ import annotations

import pytest

from sdnperf.arch import ArchitectureError, check_architecture
from sdnperf.arch.config import BridgeConfig, OpenflowConfig, OvsStandaloneConfig
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_MININET, TOPOLOGIES

pytestmark = NEEDS_MININET


def arch_config(kind: str, loops: bool):
    if kind == "bridge":
        return BridgeConfig(kind="bridge", name="bridge")
    if kind == "ovs-standalone":
        return OvsStandaloneConfig(kind="ovs-standalone", name="ovs")
    app = "topo-forwarding" if loops else "l2-learning"
    return OpenflowConfig(kind="openflow", name="of", app=app)


def ping_all(spec, config, tmp_path):
    with started_network(spec, config, tmp_path / "run", ready_timeout=90) as started:
        arch, net = started.arch, started.net
        loss = net.pingAll(timeout=2)
        # IPv6 is off by default: no solicitations reach reactive controllers.
        assert net.hosts[0].cmd("cat /proc/sys/net/ipv6/conf/all/disable_ipv6").strip() == "1"
        stats = arch.control_stats()
    return loss, arch.facts(), stats


@pytest.mark.parametrize("arch_kind", ["bridge", "ovs-standalone", "openflow"])
@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_all_pairs_reachable(topo, arch_kind, tmp_path):
    spec = build_topology(topo, TOPOLOGIES[topo], seed=1)
    loss, facts, stats = ping_all(spec, arch_config(arch_kind, spec.has_loops()), tmp_path)
    assert loss == 0.0
    if arch_kind == "bridge":
        assert facts["stp"] == spec.has_loops()
    else:
        assert facts["ovs_datapath"] in ("kernel", "user")
    if arch_kind == "openflow":
        # The reactive controller really did the forwarding decisions.
        assert stats["packet_ins"] > 0 and stats["flow_mods"] > 0


@pytest.mark.parametrize("controller", ["faucet", "ovs-testcontroller"])
def test_alternative_controllers(controller, tmp_path):
    spec = build_topology("linear", {"switches": 2, "hosts_per_switch": 2}, seed=1)
    config = OpenflowConfig(kind="openflow", name=controller, controller=controller)
    loss, facts, _ = ping_all(spec, config, tmp_path)
    assert loss == 0.0 and facts["controller"] == controller


def test_flooding_controller_refused_on_loops(tmp_path):
    spec = build_topology("grid", {"rows": 2, "cols": 2}, seed=1)
    with pytest.raises(ArchitectureError, match="topo-forwarding"):
        check_architecture(OpenflowConfig(kind="openflow", name="of", app="l2-learning"), spec)
