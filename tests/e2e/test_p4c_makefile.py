"""A P4 tutorials-style Makefile builds with sdnperf-p4c in p4c-bm2-ss's place.

tests/e2e/data/p4c_makefile/ holds our own stand-in for the tutorials' build rule
(`$(P4C) --p4v 16 --p4runtime-files build/X.p4.p4info.txtpb -o build/X.json X.p4`, as in
p4lang/tutorials utils/Makefile) and a program shaped like their `basic` exercise. `make
build P4C=sdnperf-p4c` must write both files; the JSON then forwards on our switch (STF)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sdnperf import tools

FIXTURE = Path(__file__).parent / "data" / "p4c_makefile"


@pytest.fixture
def project(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    dest = tmp_path / "basic"
    shutil.copytree(FIXTURE, dest)
    return dest


def test_tutorial_makefile_builds_with_our_compiler(project):
    p4c = tools.find("sdnperf-p4c")
    proc = subprocess.run(
        ["make", "build", f"P4C={p4c}"], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--p4v 16 --p4runtime-files build/basic.p4.p4info.txtpb -o build/basic.json" in (
        proc.stdout
    )
    p4info = (project / "build" / "basic.p4.p4info.txtpb").read_text()
    assert 'name: "MyIngress.ipv4_lpm"' in p4info
    stf = subprocess.run(
        [tools.find("sdnperf-switch"), "stf", "build/basic.json", "basic.stf"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stf.returncode == 0, stf.stdout + stf.stderr
    assert "PASS: 1 expectation(s) held" in stf.stdout


def test_a_flag_we_cannot_honour_stops_the_build_by_name(project):
    p4c = tools.find("sdnperf-p4c")
    proc = subprocess.run(
        ["make", "build", f"P4C={p4c} --arch psa"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "--arch psa is not supported: the v1model architecture only" in proc.stderr
    assert not (project / "build" / "basic.json").exists()
