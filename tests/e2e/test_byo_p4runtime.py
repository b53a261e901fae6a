"""Bring your own P4Runtime controller: a controller written by the test with
p4runtime-shell, started by sdnperf through `controller = "command"` with the switches'
addresses in {switches_json} and the network in {topology_json}; the same controller run by
the test itself for `controller = "remote"` (fixed gRPC ports); and its failures."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.support import NEEDS_MININET
from tests.e2e.test_byo_openflow import leftovers, ping_loss, run_arch

pytestmark = NEEDS_MININET
REPO = Path(__file__).resolve().parents[2]

# The example's own P4Runtime controller (p4runtime-shell, proactive L2 for l2.p4).
CONTROLLER = REPO / "examples" / "byo_apps" / "p4rt_shell_l2.py"

# the architecture entry every test here starts from (HEAD: a 2-switch chain, h1 pings h2)
P4_ARCH = textwrap.dedent("""\
    name = "mine"
    kind = "p4"
    program = "l2"
    """)


@pytest.fixture(autouse=True)
def needs_switch_and_shell():
    from sdnperf import tools

    if tools.locate("sdnperf-switch-grpc") is None:
        pytest.skip("sdnperf-switch-grpc is not built")
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.environ['PROTOCOL_BUFFERS_PYTHON_"
            "IMPLEMENTATION'] = 'python'; import p4runtime_sh.shell",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode:
        pytest.skip(f"p4runtime-shell not importable: {r.stderr.strip()[-200:]}")


@pytest.fixture
def controller_file(tmp_path):
    path = tmp_path / "mycontroller.py"  # beside the study: found through {study_dir}
    shutil.copy(CONTROLLER, path)
    return path


def run_p4(tmp_path: Path, extra: str, count: int = 10):
    return run_arch(tmp_path, P4_ARCH + textwrap.dedent(extra), count=count)


def test_p4runtime_shell_controller_started_by_command(tmp_path, controller_file):
    result = run_p4(
        tmp_path,
        f"""\
        controller = "command"
        command = ["{sys.executable}", "{{study_dir}}/mycontroller.py", "{{switches_json}}",
                   "{{topology_json}}"]
        """,
    )
    assert result.status == "ok", result.error
    assert ping_loss(result) == 0
    facts = result.params["facts"]
    assert facts["controller"] == "command" and facts["app"] is None
    assert "controller" in result.cpu.per_role
    switches = json.loads((tmp_path / "run" / "switches.json").read_text())
    assert [s["device_id"] for s in switches["switches"]] == [1, 2]
    assert Path(switches["p4info"]).is_file() and Path(switches["bmv2_json"]).is_file()
    log = (tmp_path / "run" / "controller-command.log").read_text()
    assert "programmed s1" in log and "programmed s2" in log
    assert not leftovers(str(tmp_path))


def _free_base() -> int:
    """A base port with the next one free too (s1, s2)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base < 65000:
            with socket.socket() as t:
                try:
                    t.bind(("127.0.0.1", base + 1))
                    return base
                except OSError:
                    continue
    raise RuntimeError("no two free ports")


def test_remote_p4runtime_controller_dials_fixed_ports(tmp_path, controller_file):
    """The test plays a controller that is already running: it waits for the switches
    on the ports the study fixed, then programs them; sdnperf starts no controller."""
    base = _free_base()
    from sdnperf.p4 import compiled

    program = compiled("l2")
    switches = {
        "p4info": str(program.p4info),
        "bmv2_json": str(program.json),
        "switches": [
            {"name": f"s{n}", "device_id": n, "grpc_address": f"127.0.0.1:{base + n - 1}"}
            for n in (1, 2)
        ],
    }
    # the remote controller knows the network its own way: here, the switches' ports and
    # links, but no host MACs (Mininet draws them per run), so it floods unicast too
    topo = {
        "hosts": [],
        "switches": [
            {"name": "s1", "ports": {"1": "", "2": ""}},
            {"name": "s2", "ports": {"1": "", "2": ""}},
        ],
        "links": [{"a": "s1", "a_port": 2, "b": "s2", "b_port": 2}],
    }
    (tmp_path / "sw.json").write_text(json.dumps(switches))
    (tmp_path / "topo.json").write_text(json.dumps(topo))
    ctl = subprocess.Popen(
        [
            sys.executable,
            str(controller_file),
            str(tmp_path / "sw.json"),
            str(tmp_path / "topo.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        result = run_p4(
            tmp_path,
            f"""\
            controller = "remote"
            grpc_base_port = {base}
            """,
            count=5,
        )
        assert result.status == "ok", result.error
        assert result.params["facts"]["controller"] == "remote"
        assert "not measured" in result.params["facts"]["controller_cpu"]
        assert "controller" not in result.cpu.per_role
    finally:
        ctl.kill()
        out = ctl.communicate(timeout=10)[0]
    assert "programmed s1" in out and "programmed s2" in out, out


def test_p4_command_that_exits_at_once(tmp_path):
    result = run_p4(
        tmp_path,
        f"""\
        controller = "command"
        command = ["{sys.executable}", "-c", "import sys; sys.exit('cannot reach ' + sys.argv[1])", "{{grpc_addresses}}"]
        """,
    )
    assert result.status == "failed"
    assert "exited with code 1" in result.error and "cannot reach 127.0.0.1:" in result.error
    assert not leftovers(str(tmp_path))


def test_p4_command_that_never_sets_a_pipeline(tmp_path, monkeypatch):
    import sdnperf.runner

    monkeypatch.setattr(sdnperf.runner, "READY_TIMEOUT_S", 6.0)
    result = run_p4(
        tmp_path,
        f"""\
        controller = "command"
        command = ["{sys.executable}", "-c", "import time; print('thinking', flush=True); time.sleep(600)"]
        """,
    )
    assert result.status == "failed"
    assert "timed out" in result.error and "still without one: s1, s2" in result.error
    assert "thinking" in result.error
    assert not leftovers(str(tmp_path))


def test_p4_command_that_dies_mid_run(tmp_path, controller_file):
    # the example controller, made to give up 8 s after it started (long enough to set
    # the pipelines under load). The ping (10 s) starts only once they are set, after the
    # controller started, so the death always falls inside it; check_alive() sees it when
    # it ends.
    gives_up = (
        "import os, runpy, sys, threading, time\n"
        "def later():\n"
        "    time.sleep(8); print('controller gave up', flush=True); os._exit(4)\n"
        "threading.Thread(target=later, daemon=True).start()\n"
        "sys.argv = sys.argv[1:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    (tmp_path / "gives_up.py").write_text(gives_up)
    result = run_p4(
        tmp_path,
        f"""\
        controller = "command"
        command = ["{sys.executable}", "{{study_dir}}/gives_up.py", "{{study_dir}}/mycontroller.py",
                   "{{switches_json}}", "{{topology_json}}"]
        """,
        count=100,
    )
    assert result.status == "failed"
    assert "died" in result.error and "controller gave up" in result.error
    assert not leftovers(str(tmp_path))
