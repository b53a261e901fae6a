"""Built-in generators: shapes, counts, determinism, parameter validation."""

import networkx as nx
import pydantic
import pytest

from sdnperf.topo import TOPOLOGIES, build_topology

BUILTIN = ["single", "linear", "tree", "campus", "spine-leaf", "grid", "transit-stub"]


def fingerprint(spec):
    """Everything about a spec, as a string: nodes, edges and all their attributes."""
    g = spec.graph
    nodes = sorted((n, sorted(d.items())) for n, d in g.nodes(data=True))
    edges = sorted((tuple(sorted((a, b))), sorted(d.items())) for a, b, d in g.edges(data=True))
    return repr((spec.name, nodes, edges))


def test_registry_lists_every_kind():
    assert set(BUILTIN + ["graphml", "custom"]) <= set(TOPOLOGIES)


@pytest.mark.parametrize("kind", BUILTIN)
def test_deterministic(kind):
    assert fingerprint(build_topology(kind, {}, 7)) == fingerprint(build_topology(kind, {}, 7))


@pytest.mark.parametrize("kind", BUILTIN)
def test_connected_and_named(kind):
    spec = build_topology(kind, {}, 3)
    assert nx.is_connected(spec.graph)
    assert spec.hosts()[0] == "h1" and spec.switches()[0] == "s1"
    # names are consecutive numbers, like Mininet's generators
    assert spec.hosts() == [f"h{i}" for i in range(1, len(spec.hosts()) + 1)]
    assert spec.switches() == [f"s{i}" for i in range(1, len(spec.switches()) + 1)]


def test_transit_stub_seed_changes_graph_but_not_counts():
    params = {"transit_domains": 2, "transit_nodes": 4, "nodes_per_stub": 4, "extra_edge_prob": 0.5}
    graphs = {fingerprint(build_topology("transit-stub", params, seed)) for seed in range(5)}
    assert len(graphs) > 1
    spec = build_topology("transit-stub", params, 11)
    assert len(spec.switches()) == 2 * 4 + 2 * 4 * 2 * 4
    assert len(spec.hosts()) == 2 * 4 * 2 * 4


def test_transit_stub_roles_and_hosts_on_stubs_only():
    spec = build_topology("transit-stub", {"extra_edge_prob": 1.0}, 1)
    g = spec.graph
    for host in spec.hosts():
        (switch,) = spec.host_switches(host)
        assert g.nodes[switch]["role"] == "stub"
    transit = [s for s in spec.switches() if g.nodes[s]["role"] == "transit"]
    assert len(transit) == 3
    # extra_edge_prob = 1 makes every domain a full mesh: loops
    assert spec.has_loops()
    assert not build_topology("transit-stub", {"extra_edge_prob": 0.0}, 1).has_loops()


def test_single():
    spec = build_topology("single", {"hosts": 5}, 1)
    assert spec.switches() == ["s1"] and len(spec.hosts()) == 5
    assert build_topology("single", {}, 1).hosts() == ["h1", "h2"]


def test_linear():
    spec = build_topology("linear", {"switches": 4, "hosts_per_switch": 2}, 1)
    assert len(spec.switches()) == 4 and len(spec.hosts()) == 8
    assert spec.host_switches("h3") == ["s2"]
    assert nx.diameter(spec.switch_graph()) == 3


def test_tree_matches_mininet_treetopo_shape():
    spec = build_topology("tree", {"depth": 2, "fanout": 3}, 1)
    assert len(spec.switches()) == 4 and len(spec.hosts()) == 9
    # Mininet numbers depth-first: s1 root, s2 first child with h1..h3
    assert sorted(spec.graph["s1"]) == ["s2", "s3", "s4"]
    assert spec.host_switches("h1") == ["s2"] and spec.host_switches("h9") == ["s4"]


def test_campus_shape():
    spec = build_topology("campus", {}, 1)
    assert len(spec.switches()) == 10 and len(spec.hosts()) == 28
    assert nx.is_tree(spec.switch_graph())
    tiers = nx.get_node_attributes(spec.graph, "tier")
    assert [s for s, t in tiers.items() if t == "core"] == ["s1"]
    assert sorted(s for s, t in tiers.items() if t == "distribution") == ["s2", "s3"]
    access = [s for s, t in tiers.items() if t == "access"]
    assert len(access) == 7
    assert all(len([n for n in spec.graph[s] if spec.is_host(n)]) == 4 for s in access)


def test_spine_leaf():
    spec = build_topology("spine-leaf", {"spines": 3, "leaves": 5, "hosts_per_leaf": 2}, 1)
    assert len(spec.switches()) == 8 and len(spec.hosts()) == 10
    g = spec.switch_graph()
    assert g.number_of_edges() == 15
    leaves = [s for s in spec.switches() if spec.graph.nodes[s]["tier"] == "leaf"]
    assert all(g.degree(leaf) == 3 for leaf in leaves)


def test_grid():
    spec = build_topology("grid", {"rows": 3, "cols": 4, "hosts_per_switch": 2}, 1)
    assert len(spec.switches()) == 12 and len(spec.hosts()) == 24
    assert spec.switch_graph().number_of_edges() == 3 * 3 + 2 * 4
    assert spec.graph.nodes["s1"]["pos"] == (0.0, 0.0)


def test_unknown_kind_lists_valid_kinds():
    with pytest.raises(ValueError, match="unknown topology kind 'ring'.*campus.*spine-leaf"):
        build_topology("ring", {}, 1)


@pytest.mark.parametrize(
    "kind,params,field,message",
    [
        ("tree", {"depth": 2, "fanuot": 3}, "fanuot", "Extra inputs are not permitted"),
        ("tree", {"depth": 0}, "depth", "greater than or equal to 1"),
        ("tree", {"depth": 8, "fanout": 8}, None, "at most 1000 switches"),
        ("campus", {"hosts": 3}, "hosts", "Extra inputs"),
        ("single", {"hosts": "many"}, "hosts", "valid integer"),
        ("single", {"hosts": True}, "hosts", "valid integer"),
        ("grid", {"rows": 100}, "rows", "less than or equal to 32"),
        ("transit-stub", {"extra_edge_prob": 1.5}, "extra_edge_prob", "less than or equal to 1"),
        ("spine-leaf", {"spines": 0}, "spines", "greater than or equal to 1"),
        ("linear", {"hosts_per_switch": 0}, "hosts_per_switch", "greater than or equal to 1"),
        ("linear", {"switches": 900, "hosts_per_switch": 3}, None, "at most 2000 hosts"),
    ],
)
def test_bad_params_raise_validation_errors(kind, params, field, message):
    with pytest.raises(pydantic.ValidationError) as info:
        build_topology(kind, params, 1)
    error = info.value.errors()[0]
    if field is not None:
        assert error["loc"] == (field,)
    assert message in str(info.value)


def test_transit_stub_graph_is_pinned():
    # A study's seed must give the same Internet in every sdnperf version: changing the
    # generator's draws would silently change published studies. Update only on purpose.
    spec = build_topology("transit-stub", {}, 1)
    switch_links = sorted((l.node1, l.node2) for l in spec.links() if not spec.is_host(l.node1))
    assert switch_links == [
        ("s1", "s2"),
        ("s1", "s3"),
        ("s1", "s4"),
        ("s1", "s7"),
        ("s10", "s11"),
        ("s12", "s13"),
        ("s14", "s15"),
        ("s2", "s10"),
        ("s2", "s8"),
        ("s3", "s12"),
        ("s3", "s14"),
        ("s4", "s5"),
        ("s6", "s7"),
        ("s8", "s9"),
    ]
