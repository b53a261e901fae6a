"""A controller benchmark is a study of the one pipeline: `sdnperf ctlbench run` resumes
after Ctrl-C, sweeps a [load] parameter, and `sdnperf run FILE --cluster local:2` spreads its
blocks over two Ray nodes, with the real probe and real controllers."""

from __future__ import annotations

import json
import signal
import sqlite3
import textwrap
from pathlib import Path

import pytest

from sdnperf.cluster import ray_missing
from tests.e2e.ctlbench_support import probe_built  # noqa: F401 (fixture)
from tests.e2e.test_cluster import assert_blocks_intact, ray_processes, wait_until
from tests.e2e.test_study_cli import runs_in, sdnperf

STUDY = textwrap.dedent("""\
    [study]
    name = "cb"
    repetitions = {reps}

    [[controller]]
    kind = "echo"

    [[controller]]
    kind = "ovs-testcontroller"

    [load]
    mode = "throughput"
    switches = [1]
    warmup = 0.3
    duration = 1.0
    drain = 0.3
    ceiling = false
    {load}
    """)


def study_file(tmp_path: Path, reps: int = 1, load: str = "", extra: str = "") -> Path:
    path = tmp_path / "cb.toml"
    path.write_text(STUDY.format(reps=reps, load=load) + extra)
    return path


def stored(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select id, key, status, error, params, point from run").fetchall()
    return [
        {"id": i, "key": k, "status": s, "error": e, "point": json.loads(pt), **json.loads(p)}
        for i, k, s, e, p, pt in rows
    ]


def test_ctlbench_study_resumes_after_ctrl_c(tmp_path, probe_built):  # noqa: F811
    path = study_file(tmp_path, reps=3)
    out_dir = tmp_path / "results"
    db = out_dir / "study.sqlite"
    args = ("ctlbench", "run", str(path), "--results", str(out_dir), "--no-report")
    proc = sdnperf(*args, run_root=tmp_path / "rr")
    try:
        wait_until(lambda: any(s == "ok" for _, s in runs_in(db)), 120, "a first stored run")
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the run under way stops, stored ones stay
        out, _ = proc.communicate(timeout=60)
    before = [r for r in stored(db) if r["status"] == "ok"]
    assert proc.returncode == 130 and "--resume" in out, out
    assert 0 < len(before) < 6
    resumed = sdnperf(*args, "--resume", run_root=tmp_path / "rr")
    out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, out
    assert "resuming:" in out
    runs = stored(db)
    ok = {r["key"]: r for r in runs if r["status"] == "ok"}
    assert len(ok) == 6, runs  # 2 controllers × 3 repetitions
    for r in before:  # the runs stored before Ctrl-C were kept, not run again
        assert ok[r["key"]]["id"] == r["id"]
    assert not (tmp_path / "rr").exists() or not any((tmp_path / "rr").iterdir())


def test_ctlbench_study_sweeps_a_load_parameter(tmp_path, probe_built):  # noqa: F811
    path = study_file(tmp_path, extra='\n[[sweep]]\nparam = "load.window"\nvalues = [4, 64]\n')
    out_dir = tmp_path / "results"
    proc = sdnperf(
        "ctlbench", "run", str(path), "--results", str(out_dir), run_root=tmp_path / "rr"
    )
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    runs = stored(out_dir / "study.sqlite")
    assert sorted(r["key"] for r in runs) == [
        "echo|throughput|1sw|load.window=4|1",
        "echo|throughput|1sw|load.window=64|1",
        "ovs-testcontroller|throughput|1sw|load.window=4|1",
        "ovs-testcontroller|throughput|1sw|load.window=64|1",
    ]
    assert all(r["status"] == "ok" for r in runs), runs
    for r in runs:  # the probe really ran with the swept window
        window = r["point"]["load.window"]
        argv = r["probe_argv"]
        assert argv[argv.index("--window") + 1] == str(window), argv
    with sqlite3.connect(out_dir / "study.sqlite") as conn:
        params = conn.execute("select distinct param, value from run_param").fetchall()
    assert sorted(params) == [("load.window", 4), ("load.window", 64)]
    assert (out_dir / "report.html").is_file()


@pytest.mark.skipif(
    ray_missing() is not None,
    reason="ray is not installed: pip install 'sdnperf[cluster]' (scripts/install.sh does it)",
)
def test_ctlbench_study_runs_on_a_local_cluster(tmp_path, monkeypatch, probe_built):  # noqa: F811
    temp = tmp_path / "fresh-tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    path = study_file(tmp_path, reps=2)
    proc = sdnperf(
        "run",
        str(path),
        "--out",
        str(tmp_path / "out"),
        "--cluster",
        "local:2",
        "--no-report",
        run_root=tmp_path / "rr",
    )
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert "preflight on 2 node(s)" in out
    runs = stored(tmp_path / "out" / "cb" / "study.sqlite")
    assert sorted(r["key"] for r in runs) == sorted(
        f"{c}|throughput|1sw|{rep}" for c in ("echo", "ovs-testcontroller") for rep in (1, 2)
    )
    assert all(r["status"] == "ok" for r in runs), runs
    assert_blocks_intact(runs)  # both controllers of a repetition on one node
    assert not ray_processes()
