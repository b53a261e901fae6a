"""Provenance: what produced a study, traceable (hashes of the study file and named files)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from sdnperf.emulation.ovs import USERSPACE_OTHER_CONFIG
from sdnperf.fidelity.provenance import collect_provenance, named_files
from sdnperf.study.loader import load_study
from sdnperf.study.plan import plan_runs

REPO = Path(__file__).resolve().parents[2]


def test_runtime_files_and_programs_are_hashed(monkeypatch):
    monkeypatch.chdir(REPO)
    study = load_study(REPO / "examples" / "p4-runtime-json.toml")
    plan = plan_runs(study)
    prov = collect_provenance(study, plan, {"iperf3": "3.12", "kernel": "6.1", "netem": False})
    assert prov["study_sha256"] == hashlib.sha256(study.text.encode()).hexdigest()
    assert prov["study_text"] == study.text
    files = prov["architecture_files"]
    runtime = sorted((REPO / "examples/data/p4-runtime-linear").rglob("*"))
    runtime = [p for p in runtime if p.is_file()]
    assert runtime and all(
        files[str(p)] == hashlib.sha256(p.read_bytes()).hexdigest() for p in runtime
    )
    assert "l2l3.p4" in prov["p4_programs"] and len(prov["p4_programs"]["l2l3.p4"]) == 64
    assert prov["tools"]["iperf3"] == "3.12" and prov["kernel"]["netem"] is False
    assert prov["run_order"]["keys"] == [r.key for r in plan]
    assert prov["git"]["commit"] and len(prov["git"]["commit"]) == 40
    assert prov["hostname"]
    # what the lab sets on OVS's userspace datapath to cut its cost (issue 27)
    assert prov["ovs_userspace_other_config"] == USERSPACE_OTHER_CONFIG
    assert prov["ovs_userspace_other_config"]["max-revalidator"] == "2000"


def test_named_files_ignores_strings_that_are_not_files(tmp_path):
    (tmp_path / "prog.p4").write_text("x")
    found = named_files(
        {"a": ["prog.p4", "l2-learning", "no/such.json"], "b": {"c": 1}}, [tmp_path]
    )
    assert list(found) == [str(tmp_path / "prog.p4")]


def test_check_prints_the_matrix_and_an_estimate(tmp_path):
    from tests.unit.test_study_sweeps import BASE, SWEEP_BW

    path = tmp_path / "s.toml"
    path.write_text(BASE + SWEEP_BW)
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "check", str(path), "--out", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "matrix: 1 topology × 3 sweep points × 2 architectures × 1 workload × "
        "2 repetitions → 12 runs, order interleaved"
    ) in proc.stdout
    assert "estimated duration: ~" in proc.stdout and "12 runs assuming 5 s" in proc.stdout
