"""Link delay/loss without sch_netem: p4 on our switch runs (its ports impair both
directions), every other architecture is refused by name. The kernel capability is faked
both ways here; tests/e2e/test_link_features.py checks the real detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdnperf.arch.link_support import check_link_features
from sdnperf.emulation import capabilities
from sdnperf.emulation.capabilities import Capability
from sdnperf.emulation.network import EmulationError
from sdnperf.runner import StudyRefused, preflight
from sdnperf.study.loader import load_study_text

NO_NETEM = Capability(
    "netem",
    False,
    "sch_netem missing from this kernel (Error: Specified "
    "qdisc kind is unknown.): link delay, jitter and loss cannot be emulated "
    "by the kernel",
)
NETEM = Capability("netem", True, "sch_netem works")

ARCHS = {
    "bridge": '[[architecture]]\nname = "bridge"\nkind = "bridge"\n',
    "openflow": '[[architecture]]\nname = "of"\nkind = "openflow"\ncontroller = "osken"\n',
    "p4": '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "proactive"\n',
    "bmv2": '[[architecture]]\nname = "p4-bmv2"\nkind = "p4"\ntarget = "bmv2"\napp = "proactive"\n',
}


def study(archs, delay_ms=10, loss_pct=0):
    text = (
        f'[study]\nname = "t"\n[topology]\nkind = "single"\nhosts = 2\n'
        f"[topology.link]\ndelay_ms = {delay_ms}\nloss_pct = {loss_pct}\n"
        + "".join(ARCHS[a] for a in archs)
        + '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n'
    )
    return load_study_text(text, "t.toml", Path("."))


def refusal(archs, cap, **link) -> str | None:
    s = study(archs, **link)
    try:
        check_link_features(s.topology, s.config.architecture, netem=cap)
    except EmulationError as exc:
        return str(exc)
    return None


def test_without_netem_p4_runs_and_the_others_are_named():
    msg = refusal(["bridge", "openflow", "p4"], NO_NETEM)
    assert msg is not None
    assert "sch_netem" in msg and "Specified qdisc kind is unknown" in msg
    assert "architecture(s) bridge, of (openflow) cannot run this study here" in msg
    assert "p4 would use its switch's per-port impairment" in msg
    assert 'kind = "p4"' in msg


def test_without_netem_p4_alone_is_accepted():
    assert refusal(["p4"], NO_NETEM) is None
    assert refusal(["p4"], NO_NETEM, delay_ms=0, loss_pct=3) is None


def test_without_netem_bmv2_is_refused():
    msg = refusal(["p4", "bmv2"], NO_NETEM)
    assert msg is not None and "p4-bmv2 (p4, target bmv2) cannot run" in msg


def test_with_netem_everything_runs():
    assert refusal(["bridge", "openflow", "p4", "bmv2"], NETEM) is None


def test_no_delay_or_loss_needs_no_netem():
    assert refusal(["bridge"], NO_NETEM, delay_ms=0, loss_pct=0) is None


def test_loss_alone_also_needs_netem():
    msg = refusal(["bridge"], NO_NETEM, delay_ms=0, loss_pct=1)
    assert msg is not None and "bridge cannot run" in msg


@pytest.mark.parametrize("kernel_has_netem", [True, False])
def test_preflight_uses_the_detected_capability(monkeypatch, kernel_has_netem):
    """The runner's preflight asks capabilities.netem() (faked here both ways)."""
    monkeypatch.setattr(capabilities, "netem", lambda: NETEM if kernel_has_netem else NO_NETEM)
    s = study(["bridge"])
    if kernel_has_netem:
        preflight(s)
    else:
        with pytest.raises(StudyRefused, match="sch_netem.*bridge cannot run"):
            preflight(s)


@pytest.mark.parametrize("kernel_has_netem", [True, False])
def test_p4_refuses_a_delayed_host_to_host_link_without_netem(
    monkeypatch, tmp_path, kernel_has_netem
):
    """Only switch ports impair without sch_netem: a host-host link (a custom Topo's) with
    delay would keep none, so p4 refuses it there instead of running it undelayed."""
    import networkx as nx

    from sdnperf.arch import ArchitectureError, check_architecture
    from sdnperf.arch.config import P4Config
    from sdnperf.topo.spec import TopoSpec

    monkeypatch.setattr(capabilities, "netem", lambda: NETEM if kernel_has_netem else NO_NETEM)
    monkeypatch.setenv("SDNPERF_SWITCH_GRPC_BIN", "/bin/true")  # built or not
    g = nx.Graph()
    g.add_node("h1", kind="host")
    g.add_node("h2", kind="host")
    g.add_node("s1", kind="switch")
    g.add_edge("h1", "h2", delay_ms=5)
    g.add_edge("h1", "s1")
    config = P4Config(kind="p4", name="p4", app="proactive")
    if kernel_has_netem:
        check_architecture(config, TopoSpec("hh", g))
    else:
        with pytest.raises(ArchitectureError, match="h1-h2 set delay/loss but join two hosts"):
            check_architecture(config, TopoSpec("hh", g))
