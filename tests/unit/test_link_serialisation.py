"""The serialising link model (`serialise = true`, issue 22: thesis 003's theoretical RTT
needs every packet held for its transmission time, as netem's `rate` does): declared in
the study file, validated, refused by name where the kernel lacks sch_netem and the
architecture leaves its links to the kernel, given to our switch's ports, and to kernel
links as a netem qdisc. The capability is faked both ways here; the real detection is
tests/e2e/test_link_features.py's (sch_netem) and tests/e2e/test_link_serialisation.py
runs the path this machine has (our switch)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from sdnperf.arch import ArchitectureError, check_architecture
from sdnperf.arch.link_support import check_link_features
from sdnperf.emulation.capabilities import Capability
from sdnperf.emulation.network import EmulationError, netem_rate_argv
from sdnperf.study.loader import StudyError, load_study_text
from sdnperf.topo.mininet_adapter import link_opts
from sdnperf.topo.registry import build_topology
from sdnperf.topo.spec import Link, TopologyError

NO_NETEM = Capability("netem", False, "sch_netem missing from this kernel (Error: unknown)")
NETEM = Capability("netem", True, "sch_netem works")
ARCHS = {
    "bridge": '[[architecture]]\nname = "bridge"\nkind = "bridge"\n',
    "p4": '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "proactive"\n',
    "bmv2": '[[architecture]]\nname = "p4-bmv2"\nkind = "p4"\ntarget = "bmv2"\napp = "proactive"\n',
}


def study(archs, link="bw = 1\nserialise = true"):
    text = (
        f'[study]\nname = "t"\n[topology]\nkind = "single"\nhosts = 2\n[topology.link]\n{link}\n'
        + "".join(ARCHS[a] for a in archs)
        + '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n'
    )
    return load_study_text(text, "t.toml", Path("."))


def test_declared_per_link_and_per_tier():
    s = study(["p4"])
    assert [(x.node1, x.node2, x.bw, x.serialise) for x in s.topology.links()] == [
        ("h1", "s1", 1.0, True),
        ("h2", "s1", 1.0, True),
    ]
    assert len(s.topology.serialised_links()) == 2
    assert s.topology.needs_netem()  # on kernel links it is netem's rate
    # per tier: only the core links of a chain
    spec = build_topology("linear", {"switches": 2}, seed=1).with_tier_defaults(
        "core", bw=10, serialise=True
    )
    assert [(x.node1, x.node2) for x in spec.serialised_links()] == [("s1", "s2")]


def test_an_unshaped_link_has_nothing_to_serialise():
    # a bw sweep with "unlimited" beside serialise = true: those points are plain links
    s = study(["p4"], link="serialise = true")
    assert s.topology.serialised_links() == []
    assert not s.topology.needs_netem()


def test_a_bad_value_names_the_field():
    with pytest.raises(StudyError, match="serialise"):
        study(["p4"], link='bw = 1\nserialise = "maybe"')
    spec = build_topology("single", {"hosts": 2}, seed=1)
    spec.graph.edges["h1", "s1"]["serialise"] = 1
    with pytest.raises(TopologyError, match="link s1-h1: serialise must be true or false, got 1"):
        spec.validate()


def test_kernel_links_get_netem_rate_not_htb():
    link = Link("h1", "s1", bw=0.1, delay_ms=2.5, loss_pct=1, serialise=True)
    assert link_opts(link) == {}  # no htb: netem's rate shapes it (set_link_serialisation)
    assert netem_rate_argv("h1-eth0", link) == [
        "tc", "qdisc", "replace", "dev", "h1-eth0", "root", "netem",
        "delay", "2.5ms", "loss", "1%", "rate", "100000bit",
    ]  # fmt: skip
    plain = Link("h1", "s1", bw=0.1, serialise=True)
    assert netem_rate_argv("s1-eth1", plain)[-3:] == ["netem", "rate", "100000bit"]
    assert link_opts(Link("h1", "s1", bw=1, serialise=False)) == {"bw": 1}


def test_without_netem_kernel_links_are_refused_by_name():
    s = study(["bridge", "p4"])
    with pytest.raises(EmulationError) as exc:
        check_link_features(s.topology, s.config.architecture, netem=NO_NETEM)
    msg = str(exc.value)
    assert "serialise = true (link(s) h1-s1, h2-s1)" in msg
    assert "architecture(s) bridge cannot run it here" in msg
    assert "sch_netem missing from this kernel" in msg
    # p4 on our switch serialises on its ports: runs without sch_netem
    only_p4 = study(["p4"])
    check_link_features(only_p4.topology, only_p4.config.architecture, netem=NO_NETEM)
    # with sch_netem every architecture runs
    check_link_features(s.topology, s.config.architecture, netem=NETEM)


def test_architecture_check_leaves_bmv2_out_without_netem(monkeypatch):
    """`study run` leaves an architecture out by its check (study_cli.machine_rule):
    BMv2's links are the kernel's, so without sch_netem it is refused with the field."""
    from sdnperf import tools

    monkeypatch.setattr(tools, "locate", lambda binary: f"/bin/{binary}")
    monkeypatch.setattr(tools, "find_bmv2", lambda binary, reference=False: f"/bin/{binary}")
    s = study(["p4", "bmv2"])
    p4, bmv2 = s.config.architecture
    with pytest.raises(ArchitectureError, match=r"'p4-bmv2': serialise = true .* sch_netem"):
        check_architecture(bmv2, s.topology, netem=NO_NETEM)
    check_architecture(bmv2, s.topology, netem=NETEM)
    check_architecture(p4, s.topology, netem=NO_NETEM)


@pytest.mark.parametrize("kernel_netem", [True, False])
def test_switch_ports_serialise(tmp_path, kernel_netem):
    from sdnperf.arch.config import P4Config
    from sdnperf.arch.p4 import P4Architecture

    spec = build_topology("single", {"hosts": 1}, seed=1).with_link_defaults(1, serialise=True)
    arch = P4Architecture(P4Config(kind="p4", name="p4"), spec, tmp_path, needs={})
    sent: list[str] = []

    class Intf:
        node = None

    hi, si = Intf(), Intf()
    s1 = NS(name="s1", ports={si: 1}, device_id=1, ctl=lambda *c: sent.extend(c))
    hi.node, si.node = NS(name="h1", ports={hi: 0}), s1
    net = NS(switches=[s1], links=[NS(intf1=hi, intf2=si)])
    done = arch.impair_switch_ports(net, kernel_netem)
    expected = {1: "rate=1mbit,serialise=1"}
    if not kernel_netem:  # the host's end: no htb on a serialised link, the port's ingress
        expected["1-in"] = "rate=1mbit,serialise=1"
    assert done == {"s1": expected}
    assert all(",serialise=1,seed=" in c for c in sent)
