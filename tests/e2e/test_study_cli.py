"""Whole studies through the `sdnperf` command: run, report, resume, Ctrl-C, kill -9 + clean."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

STUDY = textwrap.dedent("""\
    [study]
    name = "small"
    repetitions = 2

    [topology]
    kind = "tree"
    depth = 2
    fanout = 2

    [[architecture]]
    name = "bridge"
    kind = "bridge"

    [[architecture]]
    name = "openflow"
    kind = "openflow"

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h4"], ["h2", "h3"]]
    count = {count}
    interval = 0.1

    [[workload]]
    name = "tcp"
    kind = "iperf-tcp"
    pairs = [["h1", "h4"]]
    duration = 2
    """)


def _ctrl_c_default() -> None:
    # A background job of a non-interactive shell inherits SIGINT ignored, and Python
    # then keeps ignoring it: the study must see Ctrl-C as it would from a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sdnperf(*args, run_root: Path, **kwargs):
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(run_root)}
    env.pop("SDNPERF_TAG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "sdnperf.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_ctrl_c_default,
        **kwargs,
    )


def runs_in(db: Path) -> list[tuple]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("select key, status from run order by key").fetchall()
    except sqlite3.OperationalError:  # the study is still creating its schema
        return []


@pytest.fixture
def study_file(tmp_path):
    def make(count=5):
        path = tmp_path / "small.toml"
        path.write_text(STUDY.format(count=count))
        return path

    return make


def test_run_report_and_resume(study_file, tmp_path):
    out, run_root = tmp_path / "results", tmp_path / "runroot"
    proc = sdnperf("run", str(study_file()), "--out", str(out), run_root=run_root)
    stdout, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, stdout
    results = out / "small"
    db = results / "study.sqlite"
    assert [status for _, status in runs_in(db)] == ["ok"] * 8
    # The table: both architectures, first-packet RTT apart from the steady RTT.
    assert "rtt_first_ms" in stdout and "rtt_ms" in stdout and "openflow" in stdout
    html = (results / "report.html").read_text()
    assert html.count("<img") >= 3
    assert (results / "csv" / "samples.csv").exists()
    with sqlite3.connect(db) as conn:
        first = conn.execute(
            "select count(*) from summary s join run r on s.run_id = r.id "
            "where r.architecture = 'openflow' and s.metric = 'rtt_first_ms'"
        ).fetchone()[0]
        env = json.loads(conn.execute("select environment from study").fetchone()[0])
    assert first == 2
    assert "kernel" in str(env) or env
    # Resume with everything done runs nothing; a failed run is run again.
    with sqlite3.connect(db) as conn:
        conn.execute(
            "update run set status = 'failed' where key = 'tree-d2-f2|openflow|tcp|2'".replace(
                "tree-d2-f2", runs_in(db)[0][0].split("|")[0]
            )
        )
    proc = sdnperf("run", "--resume", str(study_file()), "--out", str(out), run_root=run_root)
    stdout, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, stdout
    assert "7 of 8 runs already stored" in stdout
    assert [status for _, status in runs_in(db)] == ["ok"] * 8
    # `report` re-reads the store on its own.
    proc = sdnperf("report", str(results), run_root=run_root)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "rtt_first_ms" in stdout


def _wait_for_network(run_root: Path, proc, timeout=120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for registry in run_root.glob("*/*/registry.json"):
            data = json.loads(registry.read_text())
            if all(Path(f"/sys/class/net/{i}").exists() for i in data["interfaces"]):
                return data
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.1)
    raise AssertionError("the study never built its network")


def _tagged(tag: str) -> list[int]:
    from sdnperf.emulation.cleanup import _tag_of, tagged_processes

    return [pid for pid in tagged_processes() if _tag_of(pid) == tag]


def test_kill_9_then_clean_leaves_nothing(study_file, tmp_path):
    out, run_root = tmp_path / "results", tmp_path / "runroot"
    proc = sdnperf("run", str(study_file(count=200)), "--out", str(out), run_root=run_root)
    registry = _wait_for_network(run_root, proc)
    time.sleep(1.0)  # the workload is running now
    tag = registry["tag"]
    assert _tagged(tag), "the study's processes carry its tag"
    proc.kill()
    proc.wait()
    left = [i for i in registry["interfaces"] if Path(f"/sys/class/net/{i}").exists()]
    assert left, "kill -9 leaves the network behind (else this test tests nothing)"
    clean = sdnperf("clean", run_root=run_root)
    stdout, _ = clean.communicate(timeout=60)
    assert clean.returncode == 0, stdout
    assert _tagged(tag) == []
    assert [
        i
        for i in registry["interfaces"] + registry["bridges"]
        if Path(f"/sys/class/net/{i}").exists()
    ] == []
    assert list(run_root.iterdir()) == []
    assert "removed" in stdout


def test_ctrl_c_keeps_finished_runs_and_cleans_up(study_file, tmp_path):
    out, run_root = tmp_path / "results", tmp_path / "runroot"
    proc = sdnperf("run", str(study_file(count=30)), "--out", str(out), run_root=run_root)
    db = out / "small" / "study.sqlite"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (db.exists() and runs_in(db)):
        time.sleep(0.2)
    assert runs_in(db), "a first run finished"
    registry = _wait_for_network(run_root, proc)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout
    assert "--resume" in stdout
    assert runs_in(db) and all(status == "ok" for _, status in runs_in(db))
    assert _tagged(registry["tag"]) == []
    assert [i for i in registry["interfaces"] if Path(f"/sys/class/net/{i}").exists()] == []
