"""Custom topologies: a user's mininet.topo.Topo subclass, imported and converted."""

import textwrap

import pydantic
import pytest

from sdnperf.topo import TopologyError, build_topology
from sdnperf.topo.generators.custom import parse_delay_ms, scheme_names

pytest.importorskip("mininet.topo")

MODULE = textwrap.dedent("""
    from mininet.topo import Topo

    class Canonical(Topo):
        def build(self, n=2):
            s1, s2 = self.addSwitch("s1"), self.addSwitch("s2")
            self.addLink(s1, s2, bw=10, delay="5ms", loss=1)
            for i in range(1, n + 1):
                self.addLink(self.addHost(f"h{i}"), s1 if i % 2 else s2)

    class Odd(Topo):
        def build(self):
            core = self.addSwitch("core", dpid="00000000000000aa")
            edge = self.addSwitch("s7")
            self.addLink(core, edge, port1=3, port2=4, delay="250us")
            for name in ("server", "client", "h9"):
                self.addLink(self.addHost(name, ip="10.0.0.%d/24" % len(name)), edge)

    class Parallel(Topo):
        def build(self):
            s1, s2 = self.addSwitch("s1"), self.addSwitch("s2")
            self.addLink(s1, s2)
            self.addLink(s1, s2)

    class Broken(Topo):
        def build(self, n):
            raise RuntimeError("boom")

    NotATopo = dict

    def not_a_topo_factory():
        return 42

    topos = {"canon": lambda n=2: Canonical(n=n), "weird": not_a_topo_factory}
""")


@pytest.fixture
def study_dir(tmp_path):
    (tmp_path / "mytopos.py").write_text(MODULE)
    return tmp_path


def build(study_dir, target, **args):
    return build_topology("custom", {"class": target, "args": args}, 1, base_dir=study_dir)


def test_canonical_names_and_link_options_kept(study_dir):
    spec = build(study_dir, "mytopos:Canonical", n=4)
    assert spec.hosts() == ["h1", "h2", "h3", "h4"] and spec.switches() == ["s1", "s2"]
    assert spec.name_map == {}
    edge = spec.graph.edges["s1", "s2"]
    assert (edge["bw"], edge["delay_ms"], edge["loss_pct"]) == (10.0, 5.0, 1.0)
    assert spec.host_switches("h2") == ["s2"]


def test_other_names_renumbered_with_name_map(study_dir):
    spec = build(study_dir, "mytopos:Odd")
    # h9 and s7 fit the scheme and stay; others are numbered after them in natural order
    assert spec.hosts() == ["h9", "h10", "h11"] and spec.switches() == ["s7", "s8"]
    assert spec.name_map == {"h10": "client", "h11": "server", "s8": "core"}
    assert any("server->h11" in note for note in spec.notes)
    # node options and port numbers survive (a P4 program's port numbers depend on them)
    assert spec.graph.nodes["s8"]["opts"] == {"dpid": "00000000000000aa"}
    assert spec.graph.nodes["h11"]["opts"] == {"ip": "10.0.0.6/24"}
    assert spec.graph.edges["s8", "s7"]["ports"] == {"s8": 3, "s7": 4}
    assert spec.graph.edges["s8", "s7"]["delay_ms"] == pytest.approx(0.25)


def test_mn_custom_topos_dict(study_dir):
    # files written for `mn --custom FILE --topo NAME` register factories in `topos`
    spec = build(study_dir, "mytopos:canon", n=3)
    assert spec.hosts() == ["h1", "h2", "h3"]


def test_neighbour_import(tmp_path):
    (tmp_path / "helpers.py").write_text("HOSTS = 3\n")
    (tmp_path / "uses.py").write_text(
        "from mininet.topo import SingleSwitchTopo\nimport helpers\n"
        "class T(SingleSwitchTopo):\n    def build(self):\n"
        "        super().build(k=helpers.HOSTS)\n"
    )
    assert len(build(tmp_path, "uses:T").hosts()) == 3


def test_file_path_form(study_dir):
    spec = build_topology("custom", {"class": "mytopos.py:Canonical"}, 1, base_dir=study_dir)
    assert len(spec.hosts()) == 2


def test_round_trip_through_adapter(study_dir):
    from sdnperf.topo.mininet_adapter import to_mininet_topo

    spec = build(study_dir, "mytopos:Odd")
    topo = to_mininet_topo(spec)
    assert topo.nodeInfo("s8")["dpid"] == "00000000000000aa"
    assert topo.port("s8", "s7") == (3, 4)
    assert topo.linkInfo("s8", "s7")["delay"] == "0.25ms"


@pytest.mark.parametrize(
    "target,args,match",
    [
        ("mytopos:Missing", {}, "no 'Missing'"),
        ("nosuchmodule_xyz:Topo", {}, "cannot import 'nosuchmodule_xyz'"),
        ("mytopos:NotATopo", {}, "not a mininet.topo.Topo subclass"),
        ("mytopos:Broken", {"n": 1}, "building it failed: RuntimeError: boom"),
        ("mytopos:Canonical", {"bogus": 1}, "building it failed: TypeError"),
        ("mytopos:Parallel", {}, "parallel links"),
        ("mytopos:weird", {}, "returned a int, not a mininet.topo.Topo"),
        ("missing.py:Topo", {}, "missing.py not found"),
    ],
)
def test_errors_are_clear(study_dir, target, args, match):
    with pytest.raises(TopologyError, match=match):
        build(study_dir, target, **args)


def test_import_error_inside_module_names_the_file(tmp_path):
    (tmp_path / "bad.py").write_text("import nonexistent_module_abc\n")
    with pytest.raises(TopologyError, match=r"bad\.py: importing it failed: ModuleNotFound"):
        build(tmp_path, "bad:Topo")


def test_params_validated():
    with pytest.raises(pydantic.ValidationError) as info:
        build_topology("custom", {"class": "no-colon"}, 1)
    assert info.value.errors()[0]["loc"] == ("class",)
    assert 'must be "module:Class"' in str(info.value)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        build_topology("custom", {"class": "a:B", "kwargs": {}}, 1)


def test_scheme_names_and_delays():
    assert scheme_names(["h2", "x", "h10", "a1"], "host") == {
        "h2": "h2",
        "h10": "h10",
        "a1": "h11",
        "x": "h12",
    }
    assert scheme_names(["s01", "s1"], "switch") == {"s1": "s1", "s01": "s2"}
    assert parse_delay_ms("5ms", "w") == 5 and parse_delay_ms("1s", "w") == 1000
    assert parse_delay_ms(2, "w") == 2 and parse_delay_ms(None, "w") is None
    with pytest.raises(TopologyError, match="cannot understand delay"):
        parse_delay_ms("fast", "w")
