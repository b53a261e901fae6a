"""`direct` (seed paper 001's direct connection): the one switch between two hosts is taken
out and the hosts share one link with the first host's link settings; anything else is
refused before a network is built."""

from __future__ import annotations

import networkx as nx
import pytest

from sdnperf.arch import ArchitectureError, check_architecture
from sdnperf.arch.config import DirectConfig
from sdnperf.arch.direct import DirectArchitecture, direct_spec
from sdnperf.topo.spec import TopoSpec

CFG = DirectConfig(name="direct", kind="direct")


def spec_of(edges, hosts, switches, **link) -> TopoSpec:
    g = nx.Graph()
    for h in hosts:
        g.add_node(h, kind="host")
    for s in switches:
        g.add_node(s, kind="switch")
    for a, b in edges:
        g.add_edge(a, b, **link)
    return TopoSpec("t", g)


def test_switch_taken_out_link_settings_kept():
    spec = spec_of([("h1", "s1"), ("h2", "s1")], ["h1", "h2"], ["s1"], bw=100.0, delay_ms=1.0)
    assert check_architecture(CFG, spec) == {}
    built = DirectArchitecture.network_spec(CFG, spec)
    assert built.switches() == [] and built.hosts() == ["h1", "h2"]
    (link,) = built.links()
    assert (link.node1, link.node2, link.bw, link.delay_ms, link.loss_pct) == (
        "h1",
        "h2",
        100.0,
        1.0,
        None,
    )
    assert spec.switches() == ["s1"]  # the study's topology is left as it was
    assert direct_spec(spec).graph.number_of_edges() == 1


@pytest.mark.parametrize(
    "edges, hosts, switches",
    [
        ([("h1", "s1"), ("h2", "s2"), ("s1", "s2")], ["h1", "h2"], ["s1", "s2"]),
        ([("h1", "s1"), ("h2", "s1"), ("h3", "s1")], ["h1", "h2", "h3"], ["s1"]),
    ],
)
def test_refused_unless_one_switch_between_two_hosts(edges, hosts, switches):
    with pytest.raises(ArchitectureError, match="direct connection replaces the one switch"):
        check_architecture(CFG, spec_of(edges, hosts, switches))


def test_link_mtu_is_validated_and_defaulted():
    from sdnperf.topo.spec import TopologyError

    spec = spec_of([("h1", "s1"), ("h2", "s1")], ["h1", "h2"], ["s1"])
    with_mtu = spec.with_link_defaults(mtu=2000)
    assert {link.mtu for link in with_mtu.links()} == {2000}
    assert {link.mtu for link in spec.links()} == {None}  # a copy: the original unchanged
    (link,) = direct_spec(with_mtu).links()
    assert link.mtu == 2000  # the direct link keeps the MTU
    for bad in (10, 70000, 1500.5, True):
        with pytest.raises(TopologyError, match="mtu must be a whole number of bytes"):
            spec.with_link_defaults(mtu=bad)  # type: ignore[arg-type]  # a wrong type on purpose


def test_study_file_link_mtu(tmp_path):
    from sdnperf.study.loader import load_study

    path = tmp_path / "s.toml"
    path.write_text(
        '[study]\nname = "s"\n[topology]\nkind = "single"\nhosts = 2\n[topology.link]\n'
        'mtu = 2000\n[[architecture]]\nname = "direct"\nkind = "direct"\n[[workload]]\n'
        'name = "p"\nkind = "ping"\npairs = [["h1", "h2"]]\ncount = 2\n'
    )
    study = load_study(path)
    assert {link.mtu for link in study.topology.links()} == {2000}
