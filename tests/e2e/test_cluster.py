"""`sdnperf run --cluster local:2`: two Ray nodes on this machine, real Mininet runs in
their own network namespaces. Same runs as a local study, blocks kept on one node, a node
killed mid-study, the driver killed and the study resumed; nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import textwrap
import time
from pathlib import Path

import pytest

from sdnperf.cluster import ray_missing
from tests.e2e.support import NEEDS_MININET
from tests.e2e.test_study_cli import runs_in, sdnperf

pytestmark = [
    *NEEDS_MININET,
    pytest.mark.skipif(
        ray_missing() is not None,
        reason="ray is not installed: pip install 'sdnperf[cluster]' (scripts/install.sh does it)",
    ),
]

STUDY = textwrap.dedent("""\
    [study]
    name = "cl"
    repetitions = {reps}

    [topology]
    kind = "linear"
    switches = 2

    [[architecture]]
    name = "bridge"
    kind = "bridge"

    [[architecture]]
    name = "ovs"
    kind = "ovs-standalone"

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = {count}
    interval = 0.2
    """)


@pytest.fixture(autouse=True)
def fresh_temp_dir(tmp_path, monkeypatch):
    """A machine where Ray never ran: the studies' TMPDIR (so Ray's default folder
    TMPDIR/ray) is empty, and stays without a `ray` folder: a local cluster keeps its
    address file in its own folder (a fresh machine once crashed on the missing /tmp/ray)."""
    temp = tmp_path / "fresh-tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    yield
    assert not (temp / "ray").exists(), "a local cluster wrote into Ray's default folder"


@pytest.fixture
def study_file(tmp_path):
    def make(reps=2, count=3):
        path = tmp_path / "cl.toml"
        path.write_text(STUDY.format(reps=reps, count=count))
        return path

    return make


def stored(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select key, status, error, params from run").fetchall()
    return [{"key": k, "status": s, "error": e, **json.loads(p)} for k, s, e, p in rows]


def assert_blocks_intact(runs: list[dict]) -> None:
    """Every architecture of a block (workload, repetition) ran on the same node."""
    nodes_of_block: dict[str, set] = {}
    for run in runs:
        assert run["node"], run
        nodes_of_block.setdefault(run["cluster"]["block"], set()).add(run["node"])
    assert all(len(nodes) == 1 for nodes in nodes_of_block.values()), nodes_of_block


def ray_processes() -> list[str]:
    """Processes of any local cluster sdnperf started (its Ray folder), and every process an
    isolated run started (they carry its session mark: OVS daemons, controllers, shells)."""
    from sdnperf.cluster.isolated import SESSION_ENV

    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if "sdnperf-ray-" in cmd or f"{SESSION_ENV}=".encode() in environ:
                found.append(f"{entry.name}: {cmd[:120]}")
    return found


def wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


def running_isolated_run() -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"sdnperf.cluster.isolated" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    return None


def test_local_cluster_stores_the_same_runs_as_one_machine(study_file, tmp_path):
    study = study_file()
    local = sdnperf(
        "run", str(study), "--out", str(tmp_path / "local"), "--no-report", run_root=tmp_path / "rr"
    )
    out, _ = local.communicate(timeout=300)
    assert local.returncode == 0, out
    started = time.monotonic()
    cluster = sdnperf(
        "run",
        str(study),
        "--out",
        str(tmp_path / "cluster"),
        "--cluster",
        "local:2",
        run_root=tmp_path / "rr",
    )
    out, _ = cluster.communicate(timeout=300)
    assert cluster.returncode == 0, out
    print(f"local:2 study took {time.monotonic() - started:.0f}s")
    assert "preflight on 2 node(s)" in out
    local_keys = {k for k, s in runs_in(tmp_path / "local" / "cl" / "study.sqlite")}
    runs = stored(tmp_path / "cluster" / "cl" / "study.sqlite")
    assert {r["key"] for r in runs} == local_keys and len(local_keys) == 4
    assert all(r["status"] == "ok" for r in runs), runs
    assert_blocks_intact(runs)
    assert len({r["node"] for r in runs}) == 2  # the two blocks went to both nodes
    report = (tmp_path / "cluster" / "cl" / "report.html").read_text()
    assert "<h2>Nodes</h2>" in report and runs[0]["node"] in report
    assert not ray_processes()


def test_a_node_killed_mid_study_fails_its_run_and_its_block_reruns_elsewhere(study_file, tmp_path):
    db = tmp_path / "out" / "cl" / "study.sqlite"
    proc = sdnperf(
        "run",
        str(study_file(reps=2, count=25)),
        "--out",
        str(tmp_path / "out"),
        "--cluster",
        "local:2",
        "--no-report",
        run_root=tmp_path / "rr",
    )
    try:
        child = wait_until(running_isolated_run, 120, "a run to start on a node")
        raylet = child
        while comm(raylet) != "raylet":  # the run's worker, then its node's raylet
            raylet = parent_of(raylet)
        os.kill(raylet, signal.SIGKILL)  # the node is gone, as if its machine died
        failed = wait_until(
            lambda: [r for r in stored(db) if r["status"] == "failed"] if db.exists() else None,
            120,
            "the lost run to be stored as failed",
        )
        assert "lost mid-run" in failed[0]["error"], failed
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "runs again on another node" in out
    runs = stored(db)
    assert len(runs) == 4 and all(r["status"] == "ok" for r in runs), runs
    assert_blocks_intact(runs)
    retried = [r for r in runs if r["cluster"]["attempt"] == 2]
    assert retried, runs
    lost_node = retried[0]["cluster"]["previous"][0]["node"]
    assert all(r["node"] != lost_node for r in retried)
    assert "lost mid-run" in retried[0]["cluster"]["previous"][0]["error"]
    wait_until(lambda: not ray_processes(), 60, "the cluster's processes to end")


def test_resume_after_the_driver_is_killed(study_file, tmp_path):
    study = study_file(reps=3, count=10)
    db = tmp_path / "out" / "cl" / "study.sqlite"
    args = (
        "run",
        str(study),
        "--out",
        str(tmp_path / "out"),
        "--cluster",
        "local:2",
        "--no-report",
    )
    proc = sdnperf(*args, run_root=tmp_path / "rr")
    try:
        wait_until(lambda: any(s == "ok" for _, s in runs_in(db)), 180, "a first stored run")
    finally:
        proc.kill()  # SIGKILL: no clean-up code of the driver runs
        proc.communicate(timeout=30)
    done_before = runs_in(db)
    assert 0 < len(done_before) < 6
    # Ray's nodes die with the driver; the runs under way take their networks down.
    wait_until(lambda: not ray_processes(), 90, "the cluster's processes to end")
    resumed = sdnperf(*args, "--resume", run_root=tmp_path / "rr")
    out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, out
    assert "resuming:" in out
    runs = stored(db)
    assert len(runs) == 6 and all(r["status"] == "ok" for r in runs), runs
    assert_blocks_intact(runs)
    assert not ray_processes()


def test_nodes_refuse_a_study_their_kernel_cannot_run(study_file, tmp_path):
    from sdnperf.emulation.capabilities import netem

    if netem().ok:
        pytest.skip("this kernel has sch_netem: every node can run a study with link delay")
    study = study_file()
    study.write_text(
        study.read_text().replace("switches = 2", "switches = 2\nlink = { delay_ms = 5 }")
    )
    proc = sdnperf(
        "run",
        str(study),
        "--out",
        str(tmp_path / "out"),
        "--cluster",
        "local:2",
        run_root=tmp_path / "rr",
    )
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2, out
    text = " ".join(out.split())
    assert f"node {os.uname().nodename}-1 refuses" in text, out
    assert "sch_netem" in text and "no node can run this study" in text
    assert not runs_in(tmp_path / "out" / "cl" / "study.sqlite")
    assert not ray_processes()


def test_controllers_and_the_p4_switch_work_inside_a_runs_namespace(study_file, tmp_path):
    """Controllers listen on 127.0.0.1 inside the run's namespace; the P4 switch's
    P4Runtime server too; every daemon's run dir is the namespace's private tmpfs."""
    study = study_file(reps=1)
    study.write_text(
        study.read_text().replace(
            'name = "ovs"\nkind = "ovs-standalone"',
            'name = "osken"\nkind = "openflow"\n\n[[architecture]]\nname = "p4"\nkind = "p4"',
        )
    )
    proc = sdnperf(
        "run",
        str(study),
        "--out",
        str(tmp_path / "out"),
        "--cluster",
        "local:1",
        "--no-report",
        run_root=tmp_path / "rr",
    )
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    runs = stored(tmp_path / "out" / "cl" / "study.sqlite")
    assert sorted(r["architecture"]["name"] for r in runs) == ["bridge", "osken", "p4"]
    assert all(r["status"] == "ok" for r in runs), runs
    assert not ray_processes()
    assert not any((tmp_path / "rr").glob("*/*")), "run dirs must stay inside the namespace"
