"""ParallelMininet (emulation/parallel_build.py) builds the campus network as Mininet's
sequential build does: the same hosts in the same order with the same addresses, the same
links (names, ports, MACs, qdiscs and classes, link state) in the same order, the same
host configuration (addresses, routes, loopback); the network forwards and leaves
nothing behind."""

from __future__ import annotations

import logging
import random
import re
import subprocess

from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET


def _intf_state(intf) -> dict:
    node = intf.node
    show = node.cmd(
        f"tc qdisc show dev {intf.name}; tc class show dev {intf.name}; "
        f"cat /sys/class/net/{intf.name}/flags /sys/class/net/{intf.name}/address; "
        f"ip -o addr show dev {intf.name} | sed 's/valid_lft.*//'"
    )
    # direct_packets_stat counts packets (traffic, not configuration), an ifindex is the
    # kernel's count of interfaces made so far, "tentative" marks an IPv6 link-local
    # address whose duplicate detection (about 1 s after link up) is still running: all
    # left out
    show = re.sub(r"direct_packets_stat \d+|^\d+: | tentative\b", "", show, flags=re.M)
    return {"state": re.sub(r"\s+", " ", show).strip()}


def _build(mininet_cls) -> tuple[dict, list[str]]:
    from sdnperf.arch.bridge import LinuxBridgeSwitch
    from sdnperf.emulation.batched_links import BatchedTCLink
    from sdnperf.emulation.network import _host_class
    from sdnperf.study.loader import load_study
    from sdnperf.topo.mininet_adapter import to_mininet_topo

    topo = to_mininet_topo(load_study(None).topology)  # the default study's campus
    random.seed(7)  # Mininet draws the links' MACs from `random`: the same for both builds
    net = mininet_cls(
        topo=topo,
        link=BatchedTCLink,
        host=_host_class(False),
        switch=LinuxBridgeSwitch,
        controller=None,
        autoSetMacs=True,
        waitConnected=False,
    )
    names: list[str] = []
    try:
        net.start()
        state: dict = {
            "hosts": [(h.name, h.IP(), h.MAC()) for h in net.hosts],
            "switches": [s.name for s in net.switches],
            "links": [
                (link.intf1.name, link.intf2.name, link.intf1.MAC(), link.intf2.MAC())
                for link in net.links
            ],
        }
        for node in net.hosts + net.switches:
            state[node.name] = sorted(node.ports.items(), key=lambda kv: kv[1])
            state[node.name] = [(str(i), p) for i, p in state[node.name]]
        for host in net.hosts:
            state[f"{host.name} routes"] = host.cmd("ip route; ip -o link show lo").strip()
            state[f"{host.name} ipv6"] = host.cmd("sysctl -n net.ipv6.conf.all.disable_ipv6")
        for link in net.links:
            for intf in (link.intf1, link.intf2):
                state[intf.name] = _intf_state(intf)
                names.append(intf.name)
        # the network forwards across the campus (a bridge port may miss the first packet)
        out = net.get("h1").cmd("ping -c 3 -i 0.2 -W 2", net.get("h28").IP())
        assert re.search(r" [1-3] received", out), out
    finally:
        net.stop()
    return state, names


def test_parallel_build_makes_the_network_mininet_makes():
    from mininet.net import Mininet

    from sdnperf.emulation.parallel_build import ParallelMininet

    theirs, _ = _build(Mininet)
    ours, names = _build(ParallelMininet)
    assert len(ours["hosts"]) == 28 and len(ours["links"]) == len(names) // 2
    assert set(ours) == set(theirs)
    for key in theirs:
        assert ours[key] == theirs[key], key
    left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert not [n for n in names if re.search(rf"\b{re.escape(n)}[@:]", left)]
    netns = subprocess.run(["ip", "netns"], capture_output=True, text=True).stdout
    assert netns.strip() == ""


def test_ovs_ports_keep_their_shaping_after_the_batched_start(tmp_path):
    """OVS's start re-applies tc to every port it added, all switches at once
    (arch/ovs.py, batched_links.collected_configs): every link end, switch ports
    included, ends with the study's 100 Mbit/s htb, and no error was reported."""
    from mininet.log import lg

    from sdnperf.runner import started_network
    from sdnperf.study.loader import load_study

    study = load_study(None)
    config = next(a for a in study.config.architecture if a.kind == "openflow")
    errors: list[str] = []
    handler = _Collect(errors)
    lg.addHandler(handler)
    try:
        with started_network(study.topology, config, tmp_path / "run") as started:
            net = started.net
            ends = [intf for link in net.links for intf in (link.intf1, link.intf2)]
            assert len(ends) == 2 * len(study.topology.links())
            for intf in ends:
                tc = intf.node.cmd(f"tc qdisc show dev {intf.name}; tc class show dev {intf}")
                assert "qdisc htb 5: root" in tc and "rate 100Mbit" in tc, (intf.name, tc)
            out = net.get("h1").cmd("ping -c 3 -i 0.2 -W 2", net.get("h28").IP())
            assert re.search(r" [1-3] received", out), out
    finally:
        lg.removeHandler(handler)
    assert [e for e in errors if "quantum of class" not in e] == []


class _Collect(logging.Handler):
    def __init__(self, into: list[str]):
        super().__init__(level=logging.ERROR)
        self.into = into

    def emit(self, record):
        self.into.append(record.getMessage())


def _p4_switches(mininet_cls, tmp_path) -> list[tuple]:
    """The campus's P4 switches as the p4 architecture's switch factory makes them in a
    network built (not started) by `mininet_cls`: name, device id, gRPC port, dpid, ports."""
    from sdnperf.arch.config import P4Config
    from sdnperf.arch.p4 import P4Architecture
    from sdnperf.study.loader import load_study
    from sdnperf.topo.mininet_adapter import to_mininet_topo

    spec = load_study(None).topology
    arch = P4Architecture(P4Config(kind="p4", name="p4"), spec, tmp_path, needs={})
    net = mininet_cls(
        topo=to_mininet_topo(spec),
        autoSetMacs=True,
        waitConnected=False,
        build=False,
        **arch.mininet_options(),
    )
    try:
        net.build()
        made = [
            (s.name, s.device_id, s.grpc_port, s.dpid, sorted(s.port_names().items()))
            for s in net.switches
        ]
        # each switch got what the architecture planned for it (the controller's view)
        assert {s[0]: (s[1], s[2]) for s in made} == arch.switches
        return [(name, dev, dpid, ports) for name, dev, _port, dpid, ports in made]
    finally:
        net.stop()


def test_p4_switches_made_at_once_get_the_device_ids_of_a_sequential_build(tmp_path):
    from mininet.net import Mininet

    from sdnperf.emulation.parallel_build import ParallelMininet

    theirs = _p4_switches(Mininet, tmp_path / "seq")
    ours = _p4_switches(ParallelMininet, tmp_path / "par")
    assert len(ours) == 10 and [s[1] for s in ours] == list(range(1, 11))
    assert ours == theirs
