"""BatchedTCLink (emulation/batched_links.py) leaves every interface as Mininet's TCLink
does: the same qdiscs and classes (shaping, delay, loss), offloads and link state, on
both ends of host and switch links; and it deletes every veth it made. (Shaping and queue
limits only: netem, which delay and loss need, is missing on some machines.)"""

from __future__ import annotations

import re
import subprocess

from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

LINKS = [
    ("h1", "s1", {"bw": 100}),
    ("s1", "s2", {"bw": 50}),
    ("s2", "h2", {"bw": 10, "max_queue_size": 100}),
    ("h3", "s2", {}),
]


def _state(net, intf) -> dict:
    node = intf.node
    tc = node.cmd(f"tc qdisc show dev {intf.name}; tc class show dev {intf.name}")
    offloads = node.cmd(f"ethtool -k {intf.name}")
    wanted = ("generic-receive-offload", "tx-checksumming", "rx-checksumming")
    up = node.cmd(f"cat /sys/class/net/{intf.name}/flags").strip()
    return {
        # direct_packets_stat counts packets (traffic, not configuration): left out
        "tc": re.sub(r"\s+", " ", re.sub(r"direct_packets_stat \d+", "", tc)).strip(),
        "offloads": sorted(line for line in offloads.splitlines() if line.startswith(wanted)),
        "flags": up,
    }


def _build(link_cls) -> tuple[dict, list[str]]:
    from mininet.net import Mininet
    from mininet.node import OVSBridge  # noqa: F401 (Mininet needs a switch class)
    from mininet.topo import Topo

    from sdnperf.arch.bridge import LinuxBridgeSwitch

    topo = Topo()
    for h in ("h1", "h2", "h3"):
        topo.addHost(h)
    for s in ("s1", "s2"):
        topo.addSwitch(s)
    for a, b, opts in LINKS:
        topo.addLink(a, b, **opts)
    net = Mininet(topo=topo, link=link_cls, switch=LinuxBridgeSwitch, controller=None)
    names: list[str] = []
    try:
        net.start()
        states = {}
        for link in net.links:
            for intf in (link.intf1, link.intf2):
                states[intf.name] = _state(net, intf)
                names.append(intf.name)
        # configured again over its own qdisc (as OVS's start re-applies tc to its ports)
        again = net.get("s1").intf("s1-eth2")
        again.config(**again.params)
        states["again"] = _state(net, again)
        # the network forwards (a bridge port may still miss the very first packet)
        out = net.get("h1").cmd("ping -c 3 -i 0.2 -W 2 10.0.0.3")
        assert re.search(r" [1-3] received", out), out
    finally:
        net.stop()
    return states, names


def test_batched_links_configure_and_delete_as_mininets_own():
    from mininet.link import TCLink

    from sdnperf.emulation.batched_links import BatchedTCLink

    theirs, _ = _build(TCLink)
    ours, names = _build(BatchedTCLink)
    assert set(ours) == set(theirs)
    for name in [*names, "again"]:
        assert ours[name] == theirs[name], name
    assert "rate 50Mbit" in ours["s1-eth2"]["tc"], ours["s1-eth2"]["tc"]
    left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert not [n for n in names if re.search(rf"\b{re.escape(n)}[@:]", left)]


def test_a_tc_error_is_reported_like_mininets(capsys):
    """A command that fails (a delay tc refuses) shows up in the results as Mininet's would."""
    from mininet.net import Mininet
    from mininet.topo import Topo

    from sdnperf.emulation.batched_links import BatchedTCIntf, BatchedTCLink

    topo = Topo()
    topo.addHost("h1")
    topo.addHost("h2")
    topo.addLink("h1", "h2", bw=10)
    net = Mininet(topo=topo, link=BatchedTCLink, controller=None)
    try:
        net.start()
        intf = net.get("h1").intf("h1-eth0")
        assert isinstance(intf, BatchedTCIntf)
        result = intf.config(bw=20, delay="not-a-delay")
        # one output per command (clear the root, htb qdisc, htb class, netem): netem's
        # refusal (a bad delay, or no sch_netem) is kept as the last one's words
        assert len(result["tcoutputs"]) == 4, result
        assert result["tcoutputs"][:2] == ["", ""], result
        assert result["tcoutputs"][-1], result
    finally:
        net.stop()
