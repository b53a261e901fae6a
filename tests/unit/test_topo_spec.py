"""TopoSpec: naming contract, natural ordering, loops, link defaults."""

import networkx as nx
import pytest

from sdnperf.topo import TopologyError, TopoSpec, build_topology, natural_key
from sdnperf.topo.builder import SpecBuilder


def small_spec():
    b = SpecBuilder()
    s1, s2 = b.switch(), b.switch()
    b.link(s1, s2, bw=10)
    for _ in range(11):
        b.host(s1)
    return b.spec("small")


def test_natural_order():
    assert sorted(["h10", "h2", "h1"], key=natural_key) == ["h1", "h2", "h10"]
    spec = small_spec()
    assert spec.hosts()[:3] == ["h1", "h2", "h3"] and spec.hosts()[-1] == "h11"
    assert spec.switches() == ["s1", "s2"]


def test_links_are_host_first_and_carry_attrs():
    links = small_spec().links()
    assert len(links) == 12
    switch_link = [l for l in links if l.node1 == "s1" and l.node2 == "s2"]
    assert switch_link and switch_link[0].bw == 10 and switch_link[0].delay_ms is None
    assert all(l.node1.startswith("h") for l in links if "h" in l.node1 + l.node2[0])


def test_unset_link_attrs_are_none():
    g = nx.Graph()
    g.add_node("h1", kind="host")
    g.add_node("s1", kind="switch")
    g.add_edge("h1", "s1")
    spec = TopoSpec("t", g)
    assert spec.graph.edges["h1", "s1"] == {
        "bw": None,
        "delay_ms": None,
        "loss_pct": None,
        "mtu": None,
        "serialise": None,
    }


def test_loops_detected_only_among_switches():
    assert not build_topology("campus", {}, 1).has_loops()
    assert not build_topology("tree", {"depth": 3, "fanout": 3}, 1).has_loops()
    assert build_topology("spine-leaf", {}, 1).has_loops()
    assert build_topology("grid", {"rows": 2, "cols": 2}, 1).has_loops()
    assert not build_topology("grid", {"rows": 1, "cols": 4}, 1).has_loops()
    assert not build_topology("spine-leaf", {"spines": 1}, 1).has_loops()


def test_switch_graph_has_only_switches():
    g = build_topology("campus", {}, 1).switch_graph()
    assert g.number_of_nodes() == 10 and g.number_of_edges() == 9


def test_with_link_defaults_fills_only_unset_and_copies():
    spec = small_spec()
    filled = spec.with_link_defaults(bw=100, delay_ms=2, loss_pct=None)
    assert filled.graph.edges["s1", "s2"]["bw"] == 10  # kept
    assert filled.graph.edges["h1", "s1"]["bw"] == 100  # filled
    assert filled.graph.edges["h1", "s1"]["delay_ms"] == 2
    assert filled.graph.edges["h1", "s1"]["loss_pct"] is None
    assert spec.graph.edges["h1", "s1"]["bw"] is None  # original untouched
    assert filled.needs_netem() and not spec.needs_netem()
    assert not spec.with_link_defaults(bw=10, delay_ms=0, loss_pct=0).needs_netem()


def test_describe():
    text = build_topology("campus", {}, 1).describe()
    assert "10 switches" in text and "28 hosts" in text and "no loops" in text
    assert "1 switch," in build_topology("single", {}, 1).describe()


@pytest.mark.parametrize(
    "name,kind",
    [("x1", "host"), ("s1", "host"), ("s01", "switch"), ("s0", "switch"), ("sw1", "switch")],
)
def test_validate_rejects_bad_names(name, kind):
    g = nx.Graph()
    g.add_node(name, kind=kind)
    with pytest.raises(TopologyError, match=name):
        TopoSpec("bad", g).validate()


def test_validate_rejects_bad_link_values():
    spec = small_spec()
    spec.graph.edges["s1", "s2"]["loss_pct"] = 150
    with pytest.raises(TopologyError, match="loss_pct"):
        spec.validate()
    spec.graph.edges["s1", "s2"]["loss_pct"] = None
    spec.graph.edges["s1", "s2"]["bw"] = 0
    with pytest.raises(TopologyError, match="bw"):
        spec.validate()
