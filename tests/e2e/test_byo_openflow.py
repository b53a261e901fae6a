"""Bring your own OpenFlow controller: a study's own os-ken app file, os-ken started through
`controller = "command"`, a controller the test runs itself (`remote`), POX when a checkout
is present, and each way such a controller fails (a failed run with the controller's own
words, nothing left running)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sdnperf.controllers.process import free_port, port_open, pox_home, venv_tool
from sdnperf.runner import execute_run
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

# A study's own app: the smallest OpenFlow 1.3 L2 switch (flood + learn, no flow entries:
# every packet goes through the controller, so it is plainly not one of ours).
APP = textwrap.dedent("""\
    from os_ken.base import app_manager
    from os_ken.controller import ofp_event
    from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
    from os_ken.lib.packet import ethernet, packet
    from os_ken.ofproto import ofproto_v1_3


    class MiniHub(app_manager.OSKenApp):
        OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.where = {}

        @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
        def features(self, ev):
            dp = ev.msg.datapath
            p, o = dp.ofproto_parser, dp.ofproto
            miss = [p.OFPInstructionActions(o.OFPIT_APPLY_ACTIONS,
                                            [p.OFPActionOutput(o.OFPP_CONTROLLER, o.OFPCML_NO_BUFFER)])]
            dp.send_msg(p.OFPFlowMod(datapath=dp, priority=0, match=p.OFPMatch(), instructions=miss))

        @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
        def packet_in(self, ev):
            msg = ev.msg
            dp = msg.datapath
            p, o = dp.ofproto_parser, dp.ofproto
            eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
            table = self.where.setdefault(dp.id, {})
            table[eth.src] = msg.match["in_port"]
            out = table.get(eth.dst, o.OFPP_FLOOD)
            dp.send_msg(p.OFPPacketOut(datapath=dp, buffer_id=o.OFP_NO_BUFFER,
                                       in_port=msg.match["in_port"],
                                       actions=[p.OFPActionOutput(out)], data=msg.data))
    """)

HEAD = textwrap.dedent("""\
    [study]
    name = "byo"
    repetitions = 1
    [topology]
    kind = "linear"
    switches = 2
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = {count}
    interval = 0.1
    """)


def run_arch(tmp_path: Path, arch: str, count: int = 5):
    study = load_study_text(
        HEAD.format(count=count) + "[[architecture]]\n" + textwrap.dedent(arch),
        str(tmp_path / "byo.toml"),
        tmp_path,
    )
    run = plan_runs(study)[0]
    return execute_run(study, run, tmp_path / "run")


def ping_loss(result) -> float:
    return next(s.value for s in result.summaries if s.metric == "loss_pct")


def leftovers(marker: str, grace: float = 5.0) -> list[str]:
    """Processes whose command line or environment names `marker` (the test's tmp folder),
    after up to `grace` seconds for exiting ones to go."""
    deadline = time.monotonic() + grace
    while (found := _processes_naming(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def _processes_naming(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker.encode() in blob:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return found


@pytest.fixture
def app_file(tmp_path):
    path = tmp_path / "apps" / "minihub.py"
    path.parent.mkdir()
    path.write_text(APP)
    return path


def test_own_osken_app_file_relative_to_the_study(tmp_path, app_file):
    result = run_arch(
        tmp_path,
        """\
        name = "mine"
        kind = "openflow"
        controller = "osken"
        app = "apps/minihub.py"
        """,
    )
    assert result.status == "ok", result.error
    assert ping_loss(result) == 0
    assert result.params["facts"]["app"] == str(app_file)
    assert "controller" in result.cpu.per_role  # its CPU was sampled
    assert not leftovers(str(tmp_path))


def test_osken_launched_by_command_with_placeholders(tmp_path, app_file):
    result = run_arch(
        tmp_path,
        f"""\
        name = "cmd"
        kind = "openflow"
        controller = "command"
        command = ["{venv_tool("osken-manager")}", "--ofp-listen-host", "{{host}}",
                   "--ofp-tcp-listen-port", "{{port}}", "{app_file}"]
        """,
    )
    assert result.status == "ok", result.error
    assert ping_loss(result) == 0
    argv = result.params["facts"]["command"]
    port = argv[argv.index("--ofp-tcp-listen-port") + 1]
    assert port.isdigit() and argv[argv.index("--ofp-listen-host") + 1] == "127.0.0.1"
    assert "controller" in result.cpu.per_role
    topo = json.loads((tmp_path / "run" / "topology.json").read_text())
    assert {h["name"]: h["ip"] for h in topo["hosts"]} == {"h1": "10.0.0.1", "h2": "10.0.0.2"}
    assert [s["dpid_int"] for s in topo["switches"]] == [1, 2]
    assert topo["links"] == [
        {
            "a": "s1",
            "a_port": topo["links"][0]["a_port"],
            "b": "s2",
            "b_port": topo["links"][0]["b_port"],
        }
    ]
    assert {h["switch"] for h in topo["hosts"]} == {"s1", "s2"}
    assert not leftovers(str(tmp_path))


def test_remote_controller_started_by_the_test(tmp_path, app_file):
    port = free_port()
    ctl = subprocess.Popen(
        [
            venv_tool("osken-manager"),
            "--ofp-listen-host",
            "127.0.0.1",
            "--ofp-tcp-listen-port",
            str(port),
            str(app_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not port_open(port) and time.monotonic() < deadline:
            assert ctl.poll() is None, "the test's controller exited"
            time.sleep(0.2)
        result = run_arch(
            tmp_path,
            f"""\
            name = "remote"
            kind = "openflow"
            controller = "remote"
            address = "127.0.0.1:{port}"
            """,
        )
        assert result.status == "ok", result.error
        assert ping_loss(result) == 0
        assert "not measured" in result.params["facts"]["controller_cpu"]
        assert "controller" not in result.cpu.per_role
        assert ctl.poll() is None  # sdnperf never stops what it did not start
    finally:
        ctl.terminate()
        ctl.wait(timeout=10)


def test_remote_controller_that_is_not_there(tmp_path):
    result = run_arch(
        tmp_path,
        f"""\
        name = "remote"
        kind = "openflow"
        controller = "remote"
        address = "127.0.0.1:{free_port()}"
        """,
    )
    assert result.status == "failed"
    assert "nothing listens there" in result.error


@pytest.mark.skipif(
    pox_home() is None,
    reason="POX checkout not found ($POX_HOME or pox.py on "
    "PATH; git clone https://github.com/noxrepo/pox)",
)
def test_pox_forwarding_l2_learning(tmp_path):
    result = run_arch(
        tmp_path,
        """\
        name = "pox"
        kind = "openflow"
        controller = "pox"
        app = "forwarding.l2_learning"
        """,
    )
    assert result.status == "ok", result.error
    assert ping_loss(result) == 0
    assert result.params["facts"]["openflow"] == "OpenFlow10"
    assert "controller" in result.cpu.per_role
    assert not leftovers(str(tmp_path))


# ---------------------------------------------------------------- failures


def test_command_binary_missing(tmp_path):
    result = run_arch(
        tmp_path,
        """\
        name = "cmd"
        kind = "openflow"
        controller = "command"
        command = ["/nonexistent/my-controller", "{port}"]
        """,
    )
    assert result.status == "failed"
    assert "/nonexistent/my-controller" in result.error and "No such file" in result.error
    assert not leftovers(str(tmp_path))


def test_command_exits_at_once(tmp_path):
    result = run_arch(
        tmp_path,
        f"""\
        name = "cmd"
        kind = "openflow"
        controller = "command"
        command = ["{sys.executable}", "-c", "import sys; sys.exit('no licence for port ' + sys.argv[1])", "{{port}}"]
        """,
    )
    assert result.status == "failed"
    assert "exited with code 1" in result.error and "no licence for port" in result.error
    assert not leftovers(str(tmp_path))


def test_command_never_connects(tmp_path, monkeypatch):
    import sdnperf.runner

    monkeypatch.setattr(sdnperf.runner, "READY_TIMEOUT_S", 6.0)
    # listens on the port, never answers OpenFlow
    script = (
        "import socket, sys, time; s = socket.socket(); "
        "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); "
        "print('listening but mute', file=sys.stderr, flush=True); time.sleep(600)"
    )
    result = run_arch(
        tmp_path,
        f"""\
        name = "cmd"
        kind = "openflow"
        controller = "command"
        command = ["{sys.executable}", "-c", "{script}", "{{port}}"]
        """,
    )
    assert result.status == "failed"
    assert "timed out" in result.error and "listening but mute" in result.error
    assert not leftovers(str(tmp_path))


def test_command_dies_mid_run(tmp_path, app_file):
    # os-ken serves, then the wrapper kills it 6 s after it started and leaves a last word.
    # The ping (8 s) starts only once the switches are connected, after the controller
    # started, so the death always falls inside it; check_alive() sees it when it ends.
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text(
        f'#!/bin/sh\n"{venv_tool("osken-manager")}" --ofp-listen-host 127.0.0.1 '
        f'--ofp-tcp-listen-port "$1" "{app_file}" &\nsleep 6\nkill $!\n'
        'echo "controller gave up" >&2\nexit 4\n'
    )
    wrapper.chmod(0o755)
    result = run_arch(
        tmp_path,
        f"""\
        name = "cmd"
        kind = "openflow"
        controller = "command"
        command = ["{wrapper}", "{{port}}"]
        """,
        count=80,
    )
    assert result.status == "failed"
    assert "died" in result.error and "controller gave up" in result.error
    assert not leftovers(str(tmp_path))


def test_the_study_goes_on_and_keeps_the_failed_controllers_log(tmp_path, app_file):
    study = tmp_path / "two.toml"
    study.write_text(
        HEAD.format(count=5)
        + textwrap.dedent(f"""\
        [[architecture]]
        name = "broken"
        kind = "openflow"
        controller = "command"
        command = ["{sys.executable}", "-c", "import os, sys; sys.exit('bad licence ' + os.environ.get('SDNPERF_TAG', 'untagged'))"]
        [[architecture]]
        name = "mine"
        kind = "openflow"
        controller = "osken"
        app = "apps/minihub.py"
        """)
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sdnperf.cli",
            "run",
            str(study),
            "--no-report",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    import sqlite3

    db = next((tmp_path / "out").rglob("study.sqlite"))
    rows = {
        arch: (status, error)
        for arch, status, error in sqlite3.connect(db).execute(
            "SELECT architecture, status, error FROM run"
        )
    }
    assert rows["mine"][0] == "ok", output
    assert rows["broken"][0] == "failed" and "bad licence" in rows["broken"][1]
    logs = list((tmp_path / "out").rglob("logs/*broken*/controller-command.log"))
    assert logs and "bad licence sdnperf-" in logs[0].read_text()  # tagged for `sdnperf clean`
    assert not leftovers(str(tmp_path))
