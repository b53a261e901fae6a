"""Every built-in study at its smoke size (1 repetition, at most 2 sweep points, seconds-long
workloads) through `sdnperf study run NAME --scale smoke`: real Mininet, switches,
controllers and traffic (ctlbench: the probe and real controllers). Each must store ok
runs and open its report with the question and an answer computed from them; CHECKS adds a
study's own checks on its store (workload-complexity: seed paper 001's direct connection and
user-space forwarder baselines)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sdnperf.store import Store
from sdnperf.studies import builtin
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

# what each answer must say (computed from the runs, so only its shape is asserted)
EXPECT = {
    "recirculation": ["µs", "TCP throughput", "switch CPU"],
    "architectures-campus": [
        "First packet RTT (lowest first): ",
        "TCP throughput (best first): ",
        "UDP jitter (best first): ",
    ],
    "workload-complexity": [
        "UDP one-way delay with 110-byte frames",
        "TCP throughput with a 10M window",
        "Against P4 L2 bridging",
        "Against OVS L2 bridging",
        "Against kernel L2 bridging",
    ],
    "topologies-traffic": ["multi-path: ", "grid: ", "transit-stub: ", "mixed: SYN delay"],
    "controller-capacity": [
        "(openflow13): answered",
        "(p4runtime): answered",
        "p4rt-l2-learning: stage breakdown at ",
    ],
}


def _summary(store, run, metric):
    return next(
        s.value for s in store.summaries(run.study_id) if s.run_id == run.id and s.metric == metric
    )


def complexity_baselines(db: Path) -> None:
    """Seed paper 001's two baselines among workload-complexity's smoke runs: the direct
    connection (the two hosts on one link, no switch) and the Linux user-space IPv4
    forwarder (AF_PACKET, sdnperf/arch/userfwd.py). Moved here from
    test_complexity_baselines.py, which ran the same smoke runs again with --only."""
    with Store(db) as store:
        (study,) = store.studies()
        runs = store.runs(study.id)
        direct = [r for r in runs if r.architecture == "direct"]
        assert {r.workload for r in direct} == {"owd", "tcp"}, [r.key for r in direct]
        assert all(r.status == "ok" for r in direct), [r.error for r in direct]
        for run in direct:
            assert run.params["facts"]["forwarding"] == "none: the hosts share one link"
            assert run.cpu.switch_ms is None  # no switch on the path: nothing paced
            if run.workload == "owd":  # the timestamped stream: one-way delay
                assert _summary(store, run, "loss_pct") == 0.0
                assert _summary(store, run, "owd_ms") > 0
            else:
                assert _summary(store, run, "throughput_mbps") > 0
        user = [r for r in runs if r.architecture == "user-ipv4"]
        assert {r.workload for r in user} == {"owd", "tcp"}, [r.key for r in user]
        assert all(r.status == "ok" for r in user), [r.error for r in user]
        for run in user:
            assert "user-space" in run.params["facts"]["forwarding"]
            assert "switch" in run.cpu.per_role  # the forwarder's CPU is sampled as the switch's
            if run.workload == "owd":
                assert _summary(store, run, "loss_pct") < 5.0
            else:
                assert _summary(store, run, "throughput_mbps") > 0


# what a study's runs must show beyond the answer (checked on its store)
CHECKS = {"workload-complexity": complexity_baselines}


@pytest.mark.parametrize("name", [s.name for s in builtin.available()])
def test_smoke_run(name, tmp_path):
    study = builtin.find(name)
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot")}
    env.pop("SDNPERF_TAG", None)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "sdnperf.cli",
            "study",
            "run",
            name,
            "--scale",
            "smoke",
            "--out",
            str(tmp_path / "results"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert study.question in r.stdout
    answers = [line for line in r.stdout.splitlines() if line.startswith("  - ")]
    assert answers and not any(
        "no answer computed" in a or "No finished run" in a for a in answers
    ), out[-4000:]
    for expected in EXPECT.get(name, []):
        assert any(expected in a for a in answers), (expected, answers)
    if study.then:  # e.g. recirculation: the commands that measure what the sweep extrapolates
        assert study.then.splitlines()[-1].strip().split(" --from")[0] in r.stdout
    stores = sorted((tmp_path / "results").glob("*/study.sqlite"))
    assert len(stores) == len(study.files("smoke"))
    for db in stores:
        with sqlite3.connect(db) as conn:
            ok = conn.execute("select count(*) from run where status = 'ok'").fetchone()[0]
        assert ok > 0, db
        html = (db.parent / "report.html").read_text()
        assert "<h2>Question</h2>" in html and study.question in html
        if name in CHECKS:
            CHECKS[name](db)
