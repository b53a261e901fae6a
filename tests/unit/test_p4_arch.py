"""The `p4` architecture's checks and configuration (no network)."""

from __future__ import annotations

import pydantic
import pytest

from sdnperf.arch import ARCHITECTURE_MODULES, ArchitectureError, check_architecture
from sdnperf.arch.config import P4Config
from sdnperf.study.loader import load_study_text
from sdnperf.topo.registry import build_topology


def test_registered_and_validated():
    assert ARCHITECTURE_MODULES["p4"] == ("sdnperf.arch.p4", "P4Architecture")
    cfg = P4Config(kind="p4", name="p4")
    assert cfg.app == "l2-learning" and cfg.target == "sdnperf"
    with pytest.raises(pydantic.ValidationError):
        P4Config(kind="p4", name="p4", app="flood-everything")


def test_study_file_with_p4():
    study = load_study_text(
        '[study]\nname = "x"\n[topology]\nkind = "single"\n'
        '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "proactive"\n'
        '[[workload]]\nname = "ping"\nkind = "ping"\n'
        'pairs = [["h1", "h2"]]\n',
        "<t>",
        base_dir=".",
    )
    assert study.config.architecture[0].app == "proactive"


def test_l2_learning_refused_on_loops(tmp_path):
    spec = build_topology("grid", {"rows": 2, "cols": 2}, seed=1)
    with pytest.raises(ArchitectureError, match="topo-forwarding"):
        check_architecture(P4Config(kind="p4", name="p4", app="l2-learning"), spec)


def test_bmv2_refused_without_simple_switch_grpc(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SDNPERF_BMV2_DIR", raising=False)
    monkeypatch.delenv("SDNPERF_P4_REFERENCE", raising=False)
    spec = build_topology("single", {"hosts": 2}, seed=1)
    with pytest.raises(ArchitectureError, match="simple_switch_grpc"):
        check_architecture(P4Config(kind="p4", name="p4", target="bmv2"), spec)


def test_runtime_json_needs_a_file_per_switch(tmp_path):
    spec = build_topology("linear", {"switches": 3}, seed=1)
    (tmp_path / "s1-runtime.json").write_text("{}")
    cfg = P4Config(kind="p4", name="p4", app="runtime-json", runtime_dir=str(tmp_path))
    try:
        check_architecture(cfg, spec)
    except ArchitectureError as exc:
        if "not built" in str(exc):
            pytest.skip(str(exc))
        assert "s2-runtime.json" in str(exc)
    else:
        pytest.fail("missing runtime files accepted")
    with pytest.raises(ArchitectureError, match="runtime_dir"):
        check_architecture(P4Config(kind="p4", name="p4", app="runtime-json"), spec)


def test_example_runtime_files_are_valid():
    from pathlib import Path

    from sdnperf import p4
    from sdnperf.controllers.p4rt import runtime_json
    from sdnperf.controllers.p4rt.schema import Schema

    folder = Path(__file__).resolve().parents[2] / "examples/data/p4-runtime-linear"
    try:
        schema = Schema.from_file(p4.compiled("l2l3").p4info)
    except p4.P4ProgramError as exc:
        pytest.skip(str(exc))
    for _name, path in runtime_json.files_for(folder, ["s1", "s2", "s3"]).items():
        assert runtime_json.load(path).build_updates(schema)


@pytest.mark.parametrize("kernel_netem", [True, False])
def test_switch_ports_get_their_links_shaping(tmp_path, kernel_netem):
    """tc is bypassed on our switch's ports: each switch port gets its link's bw/delay/loss
    as port impairment (hosts' own ports stay with tc). Without sch_netem, a host-facing
    port also delays/drops what it receives (the host end's share: bw stays with htb)."""
    from types import SimpleNamespace as NS

    from sdnperf.arch.p4 import P4Architecture

    spec = build_topology("linear", {"switches": 2}, seed=1).with_link_defaults(100, 2, 0.5)
    arch = P4Architecture(P4Config(kind="p4", name="p4"), spec, tmp_path, needs={})
    assert "port impairment" in arch.shaping_caveat(spec)
    assert arch.shaping_caveat(build_topology("linear", {"switches": 2}, seed=1)) is None
    sent = {}

    def node(name, ports):
        n = NS(name=name, ports=ports, device_id=int(name[1:]))
        n.ctl = lambda *cmds: sent.setdefault(name, []).extend(cmds)
        return n

    class Intf:
        node = None

    i = {k: Intf() for k in ("h1", "s1a", "s1b", "s2a", "s2b", "h2")}
    s1 = node("s1", {i["s1a"]: 1, i["s1b"]: 2})
    s2 = node("s2", {i["s2a"]: 1, i["s2b"]: 2})
    h1, h2 = node("h1", {i["h1"]: 0}), node("h2", {i["h2"]: 0})
    for k, n in (("h1", h1), ("s1a", s1), ("s1b", s1), ("s2a", s2), ("s2b", s2), ("h2", h2)):
        i[k].node = n
    net = NS(
        switches=[s1, s2],
        links=[
            NS(intf1=i["h1"], intf2=i["s1a"]),
            NS(intf1=i["s1b"], intf2=i["s2b"]),
            NS(intf1=i["h2"], intf2=i["s2a"]),
        ],
    )
    arch.psched_hz = 1_000_000_000  # tc's clock on a high-resolution-timer kernel
    done = arch.impair_switch_ports(net, kernel_netem)
    # the rate's token bucket has Mininet's htb burst at 100 Mbit/s (links/htb.py)
    link = "rate=100mbit,delay=2ms,loss=0.5%,burst=1600"
    assert arch.port_bursts == {"100": 1600}
    expected = {"s1": {1: link, 2: link}, "s2": {2: link, 1: link}}
    if not kernel_netem:  # the host-facing ports: s1 port 1 (h1), s2 port 1 (h2)
        expected["s1"]["1-in"] = expected["s2"]["1-in"] = "delay=2ms,loss=0.5%"
    assert done == expected
    out = [f"port_impair 1 direction=out {link}", f"port_impair 2 direction=out {link}"]
    inn = [] if kernel_netem else ["port_impair 1 direction=in delay=2ms,loss=0.5%"]
    unseeded = {name: sorted(c.rsplit(",seed=", 1)[0] for c in cmds) for name, cmds in sent.items()}
    assert unseeded["s1"] == sorted(out + inn)
    assert unseeded["s2"] == sorted(out + inn)
    assert "h1" not in sent
    # every port side draws its own loss sequence; another run seed gives other sequences
    seeds = [c.rsplit(",seed=", 1)[1] for cmds in sent.values() for c in cmds]
    assert len(set(seeds)) == len(seeds)
    arch.seed = 7
    sent.clear()
    arch.impair_switch_ports(net, kernel_netem)
    assert not set(seeds) & {c.rsplit(",seed=", 1)[1] for cmds in sent.values() for c in cmds}


def test_switch_processes_default_and_choices():
    from sdnperf.arch.config import SWITCH_PROCESSES_DEFAULT

    assert P4Config(kind="p4", name="p4").switch_processes == SWITCH_PROCESSES_DEFAULT
    assert P4Config(kind="p4", name="p4", target="bmv2").switch_processes == "per-switch"
    cfg = P4Config(kind="p4", name="p4", switch_processes="per-switch")
    assert cfg.switch_processes == "per-switch"
    with pytest.raises(pydantic.ValidationError, match="switch_processes"):
        P4Config(kind="p4", name="p4", switch_processes="one")
    with pytest.raises(pydantic.ValidationError, match='switch_processes = "shared" needs target'):
        P4Config(kind="p4", name="p4", target="bmv2", switch_processes="shared")


def test_switch_processes_error_names_the_study_field():
    from sdnperf.study.loader import StudyError

    text = (
        '[study]\nname = "x"\n[topology]\nkind = "single"\n'
        '[[architecture]]\nname = "p4"\nkind = "p4"\nswitch_processes = "all"\n'
        '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n'
    )
    with pytest.raises(StudyError, match="switch_processes"):
        load_study_text(text, "<t>", base_dir=".")


def test_shared_process_command_line(tmp_path):
    from sdnperf.emulation.p4switch import P4SwitchError, SharedSwitchProcess, member_spec

    spec = member_spec(3, 50003, "/run/s3.ctl", {2: "s3-eth2", 1: "s3-eth1"})
    assert spec == "device=3;grpc=127.0.0.1:50003;ctl=/run/s3.ctl;ports=1@s3-eth1,2@s3-eth2"
    with pytest.raises(P4SwitchError, match="ctl socket"):
        member_spec(1, 1, "/a;b", {})

    class Node:  # what SharedSwitchProcess reads of a P4Switch
        def __init__(self, dev, cpu=255):
            self.device_id, self.grpc_port, self.cpu_port = dev, 50000 + dev, cpu
            self.ctl_socket = f"/r/s{dev}.ctl"

        def port_names(self):
            return {1: f"s{self.device_id}-eth1"}

    shared = SharedSwitchProcess("/bin/sw", str(tmp_path), ["--no-vnet"])
    for dev in (1, 2):
        shared.join(Node(dev))
    argv = shared.argv()
    assert argv[:5] == ["/bin/sw", "--cpu-port", "255", "--die-with-parent", "--no-vnet"]
    assert argv.count("--switch") == 2 and argv[-1].startswith("device=2;")
    shared.join(Node(3, cpu=254))
    with pytest.raises(P4SwitchError, match="one CPU port"):
        shared.argv()
