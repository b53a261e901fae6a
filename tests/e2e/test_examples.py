"""Every example study in examples/ runs end to end (one repetition) on this machine —
including the GraphML import, the transit-stub generator and a user's own Mininet Topo
class — or, when it needs a kernel feature this machine lacks, is refused with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sdnperf.emulation import capabilities
from sdnperf.study.loader import load_study
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("topo-*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_study_runs(path, tmp_path):
    needs_netem = load_study(path).topology.needs_netem()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sdnperf.cli",
            "run",
            str(path),
            "--repetitions",
            "1",
            "--no-report",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    if needs_netem and not capabilities.netem().ok:
        assert proc.returncode == 2 and "sch_netem" in output, output
        return
    assert proc.returncode == 0, output
    assert "loss_pct" in output
