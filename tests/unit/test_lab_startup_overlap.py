"""The lab's own waiting cut (issue 27): our P4Runtime controller spawned before the
network exists and released with its config, stopped without waiting where the tear-down
allows; our os-ken apps say when a switch confirmed its table-miss entry; the p4
controller's counters asked of it directly; every switch's ctl asked at once."""

from __future__ import annotations

import io
import json
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from sdnperf.controllers import process
from sdnperf.controllers.p4rt import controller as p4rt_controller


def test_wait_for_config_exits_on_end_of_input_without_reading_the_config(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    # the file does not exist: read, it would fail with code 2
    assert p4rt_controller.main(["--config", str(tmp_path / "none.json"), "--wait-for-config"]) == 0


def test_wait_for_config_reads_the_config_once_told(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("go\n"))
    (tmp_path / "c.json").write_text(json.dumps({"transport": "carrier-pigeon"}))
    code = p4rt_controller.main(["--config", str(tmp_path / "c.json"), "--wait-for-config"])
    assert code == 2  # it read the file given (and refused it)
    assert "carrier-pigeon" in capsys.readouterr().err


def _fake_waiting_controller(tmp_path: Path) -> process.ControllerProcess:
    """p4rt_controller(wait_for_config=True) whose program is a stand-in: it waits for a
    line on stdin, then copies the config file it was given into its log."""
    proc = process.p4rt_controller(
        {"app": "l2-learning", "switches": []}, tmp_path, wait_for_config=True
    )
    config_path = proc.argv[proc.argv.index("--config") + 1]
    assert "--wait-for-config" in proc.argv
    assert not Path(config_path).exists()  # written only by release()
    script = (
        "import sys; line = sys.stdin.readline(); "
        f"print(line.strip(), open({config_path!r}).read() if line else '', flush=True)"
    )
    proc.argv = [sys.executable, "-c", script]
    return proc


def test_release_writes_the_network_config_with_the_labs_own_keys(tmp_path):
    proc = _fake_waiting_controller(tmp_path)
    proc.spawn()
    try:
        proc.release({"app": "l2-learning", "switches": [{"name": "s1"}], "status_port": 1})
        assert proc.spawned().wait(10) == 0
    finally:
        proc.stop()
    said, _, text = proc.log_path.read_text().partition(" ")
    config = json.loads(text)
    assert said == "go"
    assert config["switches"] == [{"name": "s1"}]
    # the status port and state file are the lab's, not overridable by the network config
    assert config["status_port"] == proc.port and config["status_port"] != 1
    assert config["state_file"] == str(proc.state_file)


def test_a_controller_never_released_exits_when_stopped(tmp_path):
    proc = _fake_waiting_controller(tmp_path)
    proc.spawn()
    proc.signal_stop()  # SIGTERM, not waited for
    proc.stop()  # waits (it is gone or goes now)
    assert not proc.alive()
    assert proc.spawned().stdin is None  # the pipe is closed with it


def test_release_before_spawn_is_refused(tmp_path):
    proc = process.p4rt_controller({"app": "l2-learning"}, tmp_path, wait_for_config=True)
    with pytest.raises(process.ControllerError, match="not started"):
        proc.release({})


def test_release_of_a_controller_given_its_config_is_refused(tmp_path):
    proc = process.p4rt_controller({"app": "l2-learning"}, tmp_path)
    assert json.loads((tmp_path / "p4rt-controller.json").read_text())["app"] == "l2-learning"
    proc.argv = [sys.executable, "-c", "pass"]
    proc.spawn()
    try:
        with pytest.raises(process.ControllerError, match="not waiting"):
            proc.release({})
    finally:
        proc.stop()


def test_status_snapshot_reads_the_controllers_answer():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer():
        conn, _ = server.accept()
        with conn:
            conn.sendall(json.dumps({"packet_ins": 7, "flow_mods": 3}).encode() + b"\n")

    t = threading.Thread(target=answer)
    t.start()
    try:
        assert process.status_snapshot(port) == {"packet_ins": 7, "flow_mods": 3}
    finally:
        t.join(5)
        server.close()


def test_status_snapshot_is_none_when_nothing_answers():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        assert process.status_snapshot(port, timeout=0.5) is None


class _Parser:
    class OFPBarrierRequest:
        def __init__(self, datapath):
            self.datapath, self.xid = datapath, None


class _Datapath:
    ofproto_parser = _Parser

    def __init__(self, dpid: int):
        self.id, self.sent, self._xid = dpid, [], 40

    def set_xid(self, msg):
        self._xid += 1
        msg.xid = self._xid

    def send_msg(self, msg):
        self.sent.append(msg)


class _Reply:
    def __init__(self, datapath, xid):
        self.datapath, self.xid = datapath, xid


def test_osken_state_marks_a_switch_programmed_only_on_its_own_barriers_reply(
    tmp_path, monkeypatch
):
    pytest.importorskip("os_ken")
    from sdnperf.controllers.osken_apps import common

    path = tmp_path / "state.json"
    monkeypatch.setenv("SDNPERF_CONTROLLER_STATE", str(path))
    monkeypatch.setattr(common.hub, "spawn", lambda *a, **k: object())  # no flusher thread
    state = common.StateFile()
    dp = _Datapath(5)
    state.table_miss_sent(dp)
    (barrier,) = dp.sent
    assert barrier.xid == 41
    state.barrier_replied(_Reply(dp, 40))  # someone else's barrier, sent before ours
    state.touch(force=True)
    assert json.loads(path.read_text())["programmed"] == []
    state.barrier_replied(_Reply(dp, 41))
    doc = json.loads(path.read_text())
    assert doc["programmed"] == [5]


def test_all_counters_asks_every_switch_at_once_in_order(monkeypatch):
    from sdnperf.arch import p4

    started: list[str] = []
    both_in = threading.Barrier(2, timeout=5)

    def counters(sw):
        started.append(sw.name)
        both_in.wait()  # each waits for the other: they run at the same time
        return sw.name, {}

    class Sw:
        def __init__(self, name):
            self.name = name

    class Net:
        switches = [Sw("s1"), Sw("s2")]

    monkeypatch.setattr(p4, "switch_counters", counters)
    t = time.monotonic()
    assert [name for name, _ in p4.all_counters(Net())] == ["s1", "s2"]
    assert sorted(started) == ["s1", "s2"] and time.monotonic() - t < 5
