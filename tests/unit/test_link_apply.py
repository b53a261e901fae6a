"""How a link setting reaches a running network, on fake nodes: tc changed in place (never
deleted and recreated), our switch's port_impair, and who takes delay/loss without netem."""

from __future__ import annotations

import subprocess

import pytest

from sdnperf.links import htb
from sdnperf.links.apply import ApplyError, SwitchPort, TcEnd, htb_change, netem_change
from sdnperf.links.element import element_links, port_spec, without_links
from sdnperf.links.schedule import Setting
from sdnperf.topo.registry import build_topology


class FakeNode:
    name = "h1"

    def __init__(self, fail: bool = False):
        self.argv: list[list[str]] = []
        self.fail = fail

    def popen(self, argv, **kwargs):
        self.argv.append(argv)
        return subprocess.Popen(["false" if self.fail else "true"], **kwargs)


class FakeSwitch:
    def __init__(self):
        self.commands: list[str] = []

    def ctl(self, command: str) -> str:
        self.commands.append(command)
        return ""


def test_tc_commands_change_mininets_qdiscs_in_place():
    assert htb_change("h1-eth0", 10) == (
        "tc class change dev h1-eth0 parent 5:0 classid 5:1 htb rate 10Mbit burst 15k".split()
    )
    assert netem_change("s1-eth1", Setting(None, 20, 5, 1.5), under_htb=True) == (
        "tc qdisc change dev s1-eth1 parent 5:1 handle 10: netem delay 20ms 5ms loss 1.5%".split()
    )
    assert netem_change("x", Setting(None, 0, 0, 0), under_htb=False, verb="add")[:8] == (
        "tc qdisc add dev x root handle 10:".split()
    )


def test_a_tc_end_changes_only_what_changed():
    node = FakeNode()
    end = TcEnd(node, "h1-eth0", htb=True, netem=True, netem_installed=False)
    end(Setting(100))
    end(Setting(10))
    end(Setting(10, delay_ms=20))  # netem not there yet: added once, then changed
    end(Setting(10, delay_ms=40))
    verbs = [argv[1:3] for argv in node.argv]
    assert verbs == [["class", "change"]] * 2 + [["qdisc", "add"], ["qdisc", "change"]]
    assert not any("del" in argv for argv in node.argv)


def test_without_netem_a_hosts_delay_goes_to_the_switch_port_ingress():
    node, switch = FakeNode(), FakeSwitch()
    end = TcEnd(node, "h1-eth0", True, False, False, rest=SwitchPort(switch, 1, "in"))
    end(Setting(50, delay_ms=5, loss_pct=1))
    assert node.argv[0][:3] == ["tc", "class", "change"]
    assert switch.commands == ["port_impair 1 direction=in delay=5ms,loss=1%"]
    with pytest.raises(ApplyError, match="without sch_netem"):
        TcEnd(FakeNode(), "h2-eth0", True, False, False)(Setting(50, delay_ms=5))
    with pytest.raises(ApplyError, match="tc class change"):
        TcEnd(FakeNode(fail=True), "h1-eth0", True, True, True)(Setting(5))


def test_our_switch_port_gets_the_whole_setting():
    switch = FakeSwitch()
    SwitchPort(switch, 3, "out")(Setting(10, 20, 2, 0.5))
    # the rate's token bucket has the burst Mininet's htb has at 10 Mbit/s (links/htb.py)
    burst = htb.htb_burst_bytes(10, htb.host_hz())
    assert switch.commands == [
        f"port_impair 3 direction=out rate=10mbit,delay=20ms,jitter=2ms,loss=0.5%,burst={burst}"
    ]
    # strict pacing (port_burst = "packet"): no burst
    SwitchPort(switch, 3, "out", "packet")(Setting(10))
    assert switch.commands[-1] == "port_impair 3 direction=out rate=10mbit"
    assert port_spec(Setting()) == ""  # removes the impairment


def test_which_links_get_a_link_element():
    spec = build_topology("single", {"hosts": 2}, 1).with_link_defaults(bw=10, delay_ms=5)
    spec.graph.graph["link_element"] = "auto"
    assert [(x.node1, x.node2) for x in element_links(spec, False, False)] == [
        ("h1", "s1"),
        ("h2", "s1"),
    ]
    assert element_links(spec, True, False) == []  # the kernel has netem
    assert element_links(spec, False, True) == []  # p4 impairs its own ports
    bare = without_links(spec, element_links(spec, False, False))
    # the element delays and drops; the rate stays with htb (changed by the clock)
    assert not bare.needs_netem() and bare.needs_htb()
    spec.graph.graph["link_element"] = "off"
    assert element_links(spec, False, False) == []
