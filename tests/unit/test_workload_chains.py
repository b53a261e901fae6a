"""The workload-complexity chains off our P4 switch, without a network: the OVS flows
equivalent to the P4 programs (arch/ovs_flows.py), the kernel router's configuration
(arch/router.py) and both architectures' checks and study-file entries."""

from __future__ import annotations

import re

import pydantic
import pytest

from sdnperf.arch import ARCHITECTURE_MODULES, ArchitectureError, check_architecture
from sdnperf.arch.config import OvsFlowsConfig, RouterConfig
from sdnperf.arch.ovs_flows import flows_for
from sdnperf.arch.router import router_commands
from sdnperf.p4.catalog import BROADCAST, ROUTER_MAC, VLAN_ID
from sdnperf.study.loader import load_study_text
from sdnperf.topo.builder import SpecBuilder
from sdnperf.topo.registry import build_topology

HOSTS = [  # given out of port order: the builders sort
    {"port": 2, "mac": "00:00:00:00:00:02", "ip": "10.0.0.2"},
    {"port": 1, "mac": "00:00:00:00:00:01", "ip": "10.0.0.1"},
]


def tables_of(flows: list[str]) -> set[int]:
    return {int(re.match(r"table=(\d+),", f).group(1)) for f in flows}


def actions_of(flows: list[str], **match: str) -> list[str]:
    """The actions of the flows whose match holds every key=value given."""
    out = []
    for f in flows:
        head, _, actions = f.partition(",actions=")
        fields = dict(p.partition("=")[::2] for p in head.split(","))
        if all(fields.get(k) == v for k, v in match.items()):
            out.append(actions)
    return out


@pytest.mark.parametrize("program", ["l2", "ipv4", "vlan", "pipeline8"])
def test_every_table_holds_a_flow_and_broadcast_floods(program):
    fs = flows_for(program, HOSTS)
    assert tables_of(fs.flows) == set(range(fs.tables))
    flood = fs.groups[0]
    assert flood.startswith("group_id=1,type=all,")
    assert re.findall(r"output:(\d+)", flood) == ["1", "2"]
    assert any(BROADCAST in f and "group:1" in f for f in fs.flows)


def test_l2_forwards_each_mac_to_its_port():
    fs = flows_for("l2", HOSTS)
    assert actions_of(fs.flows, dl_dst="00:00:00:00:00:02") == ["output:2"]
    assert fs.tables == 1


def test_ipv4_routes_each_host_by_a_slash_32_with_mac_rewrite_and_ttl():
    fs = flows_for("ipv4", HOSTS)
    assert actions_of(fs.flows, table="0", priority="100") == ["goto_table:1"]
    (route,) = actions_of(fs.flows, table="1", nw_dst="10.0.0.1/32")
    assert route == (
        f"set_field:{ROUTER_MAC}->eth_src,set_field:00:00:00:00:00:01->eth_dst,dec_ttl,output:1"
    )
    # a /32 outranks any shorter prefix: priorities grow with the prefix length
    assert all("priority=1032" in f for f in fs.flows if f.startswith("table=1,"))


def test_vlan_tags_on_ingress_forwards_per_vlan_and_mac_untags_on_egress():
    fs = flows_for("vlan", HOSTS)
    (tag,) = actions_of(fs.flows, table="0", in_port="1")
    assert tag == f"push_vlan:0x8100,set_field:{0x1000 | VLAN_ID}->vlan_vid,goto_table:1"
    (fwd,) = actions_of(fs.flows, table="1", dl_dst="00:00:00:00:00:02")
    assert fwd == "set_field:2->xreg0,goto_table:2"
    assert actions_of(fs.flows, table="2", xreg0="2") == ["pop_vlan,output:2"]
    assert fs.groups[0].count("pop_vlan,output:") == 2  # flooded copies leave untagged


def test_pipeline8_chains_eight_tables_through_an_ecmp_select_group():
    fs = flows_for("pipeline8", HOSTS)
    assert fs.tables == 8
    (lpm,) = actions_of(fs.flows, table="2", nw_dst="10.0.0.2/32")
    assert lpm == "set_field:2->xreg2,goto_table:3"
    assert actions_of(fs.flows, table="3", xreg2="2") == ["group:3"]
    assert "group_id=3,type=select,bucket=actions=set_field:2->xreg3,resubmit(,4)" in fs.groups
    (nexthop,) = actions_of(fs.flows, table="4", xreg3="2")
    assert "dec_ttl" in nexthop and "set_field:00:00:00:00:00:02->eth_dst" in nexthop
    assert actions_of(fs.flows, table="6", xreg0="2") == [
        f"set_field:{ROUTER_MAC}->eth_src,goto_table:7"
    ]
    # every goto leads forward, to a table that exists
    gotos = {int(t) for f in fs.flows for t in re.findall(r"goto_table:(\d+)", f)}
    assert gotos <= set(range(1, 8))


def test_flows_are_plain_argument_text_never_shell():
    for program in ("l2", "ipv4", "vlan", "pipeline8"):
        fs = flows_for(program, HOSTS)
        assert not any(ch in line for line in fs.flows + fs.groups for ch in ";|&$`\n")


def test_router_commands_forward_proxy_arp_and_route_each_host():
    hosts = [{**h, "intf": f"s1-eth{h['port']}"} for h in HOSTS]
    cmds = router_commands(["s1-eth1", "s1-eth2"], hosts)
    assert cmds[0] == ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]
    assert ["sysctl", "-q", "-w", "net.ipv4.conf.s1-eth2.proxy_arp=1"] in cmds
    assert ["sysctl", "-q", "-w", "net.ipv4.neigh.s1-eth1.proxy_delay=0"] in cmds
    assert ["ip", "route", "replace", "10.0.0.1/32", "dev", "s1-eth1"] in cmds
    assert [
        "ip", "neigh", "replace", "10.0.0.2", "lladdr", "00:00:00:00:00:02", "dev", "s1-eth2",
        "nud", "permanent",
    ] in cmds  # fmt: skip
    assert all(isinstance(a, str) for argv in cmds for a in argv)


def test_registered_and_refused_off_one_switch():
    assert ARCHITECTURE_MODULES["router"] == ("sdnperf.arch.router", "RouterArchitecture")
    assert ARCHITECTURE_MODULES["ovs-flows"] == ("sdnperf.arch.ovs", "OvsFlowsArchitecture")
    one = build_topology("single", {"hosts": 3}, seed=1)
    two = build_topology("linear", {"switches": 2}, seed=1)
    router = RouterConfig(kind="router", name="r")
    flows = OvsFlowsConfig(kind="ovs-flows", name="o", program="pipeline8")
    assert check_architecture(router, one) == {} and check_architecture(flows, one) == {}
    assert check_architecture(router, two) == {}  # routes from the topology: any shape
    apart = SpecBuilder()
    for _ in range(2):
        apart.hosts(apart.switch(), 1)
    with pytest.raises(ArchitectureError, match=r"'r'.*parts no route joins"):
        check_architecture(router, apart.spec("apart"))
    with pytest.raises(ArchitectureError, match=r"'o'.*'pipeline8' flows.*has 2 switches"):
        check_architecture(flows, two)


def test_study_file_entries():
    study = load_study_text(
        '[study]\nname = "x"\n[topology]\nkind = "single"\n'
        '[[architecture]]\nname = "r"\nkind = "router"\n'
        '[[architecture]]\nname = "o"\nkind = "ovs-flows"\nprogram = "vlan"\n'
        '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n',
        "<t>",
        base_dir=".",
    )
    assert [a.kind for a in study.config.architecture] == ["router", "ovs-flows"]
    assert study.config.architecture[1].program == "vlan"
    with pytest.raises(pydantic.ValidationError, match="program"):
        OvsFlowsConfig(kind="ovs-flows", name="o", program="recirc")
    with pytest.raises(pydantic.ValidationError):
        RouterConfig(kind="router", name="r", vlan=10)
