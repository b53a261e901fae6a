"""TopoSpec -> mininet.topo.Topo keeps nodes, links and only the link options that are set."""

import pytest

from sdnperf.topo import TopologyError, build_topology
from sdnperf.topo.mininet_adapter import check_links, link_opts, to_mininet_topo
from sdnperf.topo.spec import Link

pytest.importorskip("mininet.topo")


def link_set(pairs):
    return {frozenset(p) for p in pairs}


@pytest.mark.parametrize(
    "kind", ["single", "linear", "tree", "campus", "spine-leaf", "grid", "transit-stub"]
)
def test_same_nodes_and_links(kind):
    spec = build_topology(kind, {}, 5)
    topo = to_mininet_topo(spec)
    assert topo.hosts() == spec.hosts()
    assert topo.switches() == spec.switches()
    assert link_set(topo.links()) == link_set(spec.graph.edges)
    assert len(topo.links()) == spec.graph.number_of_edges()


def test_link_options_only_when_set():
    spec = build_topology("linear", {"switches": 2}, 1)
    spec.graph.edges["s1", "s2"].update(bw=10, delay_ms=2.5, loss_pct=1)
    topo = to_mininet_topo(spec)
    info = topo.linkInfo("s1", "s2")
    assert info["bw"] == 10 and info["delay"] == "2.5ms" and info["loss"] == 1
    host_info = topo.linkInfo("h1", "s1")
    assert not {"bw", "delay", "loss"} & set(host_info)


def test_zero_delay_and_loss_need_no_netem():
    assert link_opts(Link("h1", "s1", bw=100, delay_ms=0, loss_pct=0)) == {"bw": 100}
    assert link_opts(Link("h1", "s1", delay_ms=0.0125)) == {"delay": "0.013ms"} or link_opts(
        Link("h1", "s1", delay_ms=0.0125)
    ) == {"delay": "0.012ms"}
    assert link_opts(Link("h1", "s1", delay_ms=20)) == {"delay": "20ms"}


def test_bandwidth_mininet_cannot_shape_is_refused():
    with pytest.raises(TopologyError, match="1000 Mbit/s"):
        link_opts(Link("h1", "s1", bw=10_000))
    spec = build_topology("single", {}, 1)
    check_links(spec.with_link_defaults(bw=1000))
    with pytest.raises(TopologyError, match="h1-s1: bw 2000"):
        check_links(spec.with_link_defaults(bw=2000))


@pytest.mark.parametrize(
    "ours,theirs",
    [
        (("single", {"hosts": 4}), ("SingleSwitchTopo", {"k": 4})),
        (("linear", {"switches": 5}), ("LinearTopo", {"k": 5, "n": 1})),
        (("tree", {"depth": 3, "fanout": 2}), ("TreeTopo", {"depth": 3, "fanout": 2})),
    ],
)
def test_same_graph_as_mininets_own_generators(ours, theirs):
    import mininet.topo
    import mininet.topolib

    cls = getattr(mininet.topo, theirs[0], None) or getattr(mininet.topolib, theirs[0])
    reference = cls(**theirs[1])
    topo = to_mininet_topo(build_topology(*ours, 1))
    assert topo.hosts() == reference.hosts() and topo.switches() == reference.switches()
    assert link_set(topo.links()) == link_set(reference.links())


def test_without_kernel_netem_only_bandwidth_reaches_mininet():
    """netem=False (the switches emulate delay/loss): Mininet's TCLink must not try netem."""
    link = Link("h1", "s1", bw=10, delay_ms=5, loss_pct=2)
    assert link_opts(link, netem=False) == {"bw": 10}
    assert link_opts(link) == {"bw": 10, "delay": "5ms", "loss": 2}
    spec = build_topology("single", {"hosts": 2}, 1).with_link_defaults(None, 5, 2)
    topo = to_mininet_topo(spec, netem=False)
    assert not {"delay", "loss"} & set(topo.linkInfo("h1", "s1"))
