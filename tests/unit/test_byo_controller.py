"""Bring-your-own controllers without a network: command placeholders, the topology JSON a
command may read, and the study fields that choose such a controller."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

from sdnperf.controllers import external
from sdnperf.controllers.process import ControllerError, ControllerProcess
from sdnperf.study.loader import StudyError, load_study_text


def test_placeholders_are_filled_argument_by_argument():
    argv = ["ctl", "--listen={address}", "{run_dir}/log file.txt", "--x", "{{literal}}", "{port}"]
    out = external.substitute(
        argv, {"address": "127.0.0.1:6653", "run_dir": "/r u n", "port": 6653}
    )
    # a value with spaces stays inside its own argument: no shell ever splits it
    assert out == [
        "ctl",
        "--listen=127.0.0.1:6653",
        "/r u n/log file.txt",
        "--x",
        "{literal}",
        "6653",
    ]


@pytest.mark.parametrize(
    "arg, words",
    [
        ("{nope}", "unknown placeholder(s) {nope}"),
        ("{port", "literal braces"),
        ("{port!r}", "plain name"),
        ("{port:>5}", "plain name"),
        ("{0}", "plain name"),
    ],
)
def test_bad_placeholders_are_named(arg, words):
    with pytest.raises(external.PlaceholderError, match=None) as info:
        external.substitute(["ctl", arg], {"port": 1})
    assert words in str(info.value)


class _Intf:
    """Hashable like Mininet's Intf (a switch's `ports` is keyed by interface)."""

    def __init__(self, node, name):
        self.node, self.name, self.link = node, name, None


_intf = _Intf


def _fake_net():
    """Two switches with dpids, two hosts, links h1-s1 (s1 port 1), s1-s2 (2, 1), h2-s2 (2)."""
    s1 = SimpleNamespace(name="s1", dpid="1", intfs={}, ports={})
    s2 = SimpleNamespace(name="s2", dpid="0000000000000002", intfs={}, ports={})
    hosts = []
    for n in (1, 2):
        h = SimpleNamespace(
            name=f"h{n}", IP=lambda n=n: f"10.0.0.{n}", MAC=lambda n=n: f"00:00:00:00:00:0{n}"
        )
        h.intf = _intf(h, f"h{n}-eth0")
        h.intfList = lambda h=h: [h.intf]
        hosts.append(h)
    links = []

    def join(a, ia, b, ib):
        link = SimpleNamespace(intf1=ia, intf2=ib)
        ia.link = ib.link = link
        links.append(link)

    def port(sw, number):
        intf = _intf(sw, f"{sw.name}-eth{number}")
        sw.intfs[number], sw.ports[intf] = intf, number
        return intf

    join(hosts[0], hosts[0].intf, s1, port(s1, 1))
    join(s1, port(s1, 2), s2, port(s2, 1))
    join(hosts[1], hosts[1].intf, s2, port(s2, 2))
    s1.intfs[0] = _intf(s1, "lo")
    return SimpleNamespace(switches=[s1, s2], hosts=hosts, links=links)


def test_topology_description():
    topo = external.topology_description(_fake_net(), lambda sw: {"extra": sw.name.upper()})
    assert topo["hosts"] == [
        {"name": "h1", "ip": "10.0.0.1", "mac": "00:00:00:00:00:01", "switch": "s1", "port": 1},
        {"name": "h2", "ip": "10.0.0.2", "mac": "00:00:00:00:00:02", "switch": "s2", "port": 2},
    ]
    assert topo["switches"] == [
        {
            "name": "s1",
            "dpid": "0000000000000001",
            "dpid_int": 1,
            "ports": {"1": "s1-eth1", "2": "s1-eth2"},
            "extra": "S1",
        },
        {
            "name": "s2",
            "dpid": "0000000000000002",
            "dpid_int": 2,
            "ports": {"1": "s2-eth1", "2": "s2-eth2"},
            "extra": "S2",
        },
    ]
    assert topo["links"] == [{"a": "s1", "a_port": 2, "b": "s2", "b_port": 1}]


def test_missing_program_is_a_controller_error(tmp_path):
    proc = ControllerProcess("command", ["/nonexistent/ctl"], tmp_path, None)
    with pytest.raises(ControllerError, match="/nonexistent/ctl.*cannot be started"):
        proc.start()


def test_a_portless_controller_must_survive_its_start(tmp_path):
    quits = ControllerProcess("command", ["sh", "-c", "echo bye >&2; exit 2"], tmp_path, None)
    with pytest.raises(ControllerError, match="exited with code 2(.|\n)*bye"):
        quits.start()
    stays = ControllerProcess("command", ["sleep", "30"], tmp_path, None)
    stays.start()
    try:
        assert stays.alive()
    finally:
        stays.stop()
    assert not stays.alive()


HEAD = textwrap.dedent("""\
    [study]
    name = "byo"
    [topology]
    kind = "linear"
    switches = 2
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    [[architecture]]
    name = "x"
    kind = "openflow"
    """)


def load(tmp_path, arch: str):
    return load_study_text(HEAD + textwrap.dedent(arch), str(tmp_path / "s.toml"), tmp_path)


def test_app_file_is_relative_to_the_study(tmp_path):
    study = load(tmp_path, 'controller = "osken"\napp = "apps/mine.py"\n')
    assert study.config.architecture[0].app == str(tmp_path / "apps" / "mine.py")
    ours = load(tmp_path, 'controller = "osken"\napp = "topo-forwarding"\n')
    assert ours.config.architecture[0].app == "topo-forwarding"


def test_protocols_follow_the_controller(tmp_path):
    assert (
        load(tmp_path, 'controller = "pox"\napp = "forwarding.l2_learning"\n')
        .config.architecture[0]
        .switch_protocols()
        == "OpenFlow10"
    )
    cfg = load(
        tmp_path, 'controller = "remote"\naddress = "10.1.2.3:6633"\nopenflow = ["1.0", "1.3"]\n'
    ).config.architecture[0]
    assert cfg.switch_protocols() == "OpenFlow10,OpenFlow13"


@pytest.mark.parametrize(
    "arch, words",
    [
        ('controller = "command"\n', 'command = [...] goes with controller = "command"'),
        ('command = ["x"]\n', 'command = [...] goes with controller = "command"'),
        ('controller = "command"\ncommand = []\n', "at least 1 item"),
        ('controller = "command"\ncommand = ["ctl", "{p0rt}"]\n', "unknown placeholder(s) {p0rt}"),
        ('controller = "remote"\n', 'address = "host:port" goes with controller = "remote"'),
        ('controller = "remote"\naddress = "localhost"\n', "must be host:port"),
        ('controller = "remote"\naddress = "h:70000"\n', "must be host:port"),
        ('controller = "pox"\n', 'needs app = "<components>"'),
        ('controller = "osken"\napp = "my_app"\n', "an app file ending in .py"),
        ('openflow = ["2.0"]\n', "openflow"),
    ],
)
def test_config_mistakes_are_named(tmp_path, arch, words):
    with pytest.raises(StudyError) as info:
        load(tmp_path, arch)
    assert words in str(info.value)
    assert "s.toml" in str(info.value)


def test_pox_is_found_by_pox_home_or_path_and_doctor_says_how_to_get_it(tmp_path, monkeypatch):
    from sdnperf import doctor
    from sdnperf.controllers import process

    monkeypatch.delenv("POX_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert process.pox_home() is None
    cap = doctor._pox()
    assert not cap.ok and "git clone https://github.com/noxrepo/pox" in cap.detail
    checkout = tmp_path / "pox"
    checkout.mkdir()
    (checkout / "pox.py").write_text("#!/bin/sh\n")
    (checkout / "pox.py").chmod(0o755)
    monkeypatch.setenv("PATH", str(checkout))
    assert process.pox_home() == checkout
    monkeypatch.setenv("POX_HOME", str(tmp_path / "elsewhere"))  # a wrong POX_HOME wins: said
    assert process.pox_home() is None
    monkeypatch.setenv("POX_HOME", str(checkout))
    assert doctor._pox().ok and doctor._pox().detail == str(checkout)
    argv = process.pox(["forwarding.l2_learning", "--foo=1"], tmp_path).argv
    assert argv[1:] == [
        str(checkout / "pox.py"),
        "log.level",
        "--INFO",
        "openflow.of_01",
        "--address=127.0.0.1",
        argv[6],
        "forwarding.l2_learning",
        "--foo=1",
    ]
    assert argv[6].startswith("--port=")


def test_study_dir_placeholder_is_the_study_files_folder(tmp_path):
    cfg = load(
        tmp_path, 'controller = "command"\ncommand = ["ctl", "{study_dir}/app.py"]\n'
    ).config.architecture[0]
    assert cfg._study_dir == str(tmp_path.resolve())


P4_HEAD = HEAD.replace('kind = "openflow"', 'kind = "p4"')


@pytest.mark.parametrize(
    "arch, words",
    [
        ('controller = "command"\n', 'command = [...] goes with controller = "command"'),
        ('command = ["ctl"]\n', 'command = [...] goes with controller = "command"'),
        ('controller = "command"\ncommand = ["ctl", "{port}"]\n', "unknown placeholder(s) {port}"),
        ('controller = "remote"\ngrpc_base_port = 80\n', "grpc_base_port"),
    ],
)
def test_p4_controller_mistakes_are_named(tmp_path, arch, words):
    with pytest.raises(StudyError) as info:
        load_study_text(P4_HEAD + arch, str(tmp_path / "s.toml"), tmp_path)
    assert words in str(info.value)


def test_p4_remote_gets_the_tutorials_ports_and_a_command_its_placeholders(tmp_path):
    remote = load_study_text(P4_HEAD + 'controller = "remote"\n', "s.toml", tmp_path)
    assert remote.config.architecture[0].grpc_base_port == 50051
    cmd = load_study_text(
        P4_HEAD + 'controller = "command"\ncommand = ["c", "{switches_json}", '
        '"{grpc_addresses}", "{device_ids}", "{p4info}", "{bmv2_json}", '
        '"{cpu_port}", "{topology_json}", "{study_dir}", "{run_dir}"]\n',
        "s.toml",
        tmp_path,
    ).config.architecture[0]
    assert cmd.grpc_base_port is None and cmd._study_dir == str(tmp_path.resolve())


def test_a_timeout_and_a_dead_controller_say_what_the_controller_said(tmp_path):
    from sdnperf.arch.base import ArchitectureError, check_controller, controller_log, wait_until

    dead = ControllerProcess(
        "command", ["sh", "-c", "echo 'no licence' >&2; exit 3"], tmp_path, None
    )
    dead.spawn()
    dead.proc.wait(timeout=10)
    with pytest.raises(
        ArchitectureError, match=r"controller command died \(exit code 3\):\nno licence"
    ):
        check_controller(dead, "died")
    check_controller(None, "died")  # nothing started: nothing to say
    with pytest.raises(ArchitectureError, match=r"waiting for x; command's log ends:\nno licence"):
        wait_until(lambda: False, 0.1, "x", explain=lambda: controller_log(dead))
    assert controller_log(None) == ""


def test_the_conditions_line_says_a_remote_controllers_cpu_was_not_measured(tmp_path):
    from sdnperf.report import series
    from sdnperf.samples import RunResult
    from sdnperf.store.sqlite import Store

    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        for arch, facts in (
            ("ours", {"controller": "osken"}),
            ("onos", {"controller": "remote", "controller_cpu": "not measured"}),
        ):
            store.record_run(
                sid, RunResult(f"t|{arch}|ping|0", "t", arch, "ping", 0, {"facts": facts}, "ok")
            )
        assert series.conditions(store, sid).endswith(
            "controller CPU not measured for onos (remote)"
        )


def test_someone_elses_p4_controller_may_run_any_program(tmp_path):
    # l2.p4 has no app of ours but runtime-json; a command brings its own logic
    cfg = load_study_text(
        P4_HEAD + 'program = "l2"\ncontroller = "command"\ncommand = ["c"]\n', "s.toml", tmp_path
    ).config.architecture[0]
    assert cfg.program == "l2"
    with pytest.raises(StudyError, match="cannot be driven by app"):
        load_study_text(P4_HEAD + 'program = "l2"\n', "s.toml", tmp_path)
