"""Link delay/loss need sch_netem: detected, and a study that needs it is refused in words
(never run with the delay silently missing, as Mininet's TCLink would)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdnperf.emulation import capabilities
from sdnperf.runner import StudyRefused, preflight
from sdnperf.study.loader import load_study

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(os.geteuid() != 0, reason="probing qdiscs needs root")]

DELAY_STUDY = Path(__file__).resolve().parents[2] / "examples" / "topo-graphml-delay.toml"


def test_netem_detection_agrees_with_the_kernel():
    cap = capabilities.netem()
    module_loaded = Path("/sys/module/sch_netem").exists()
    if module_loaded:
        assert cap.ok
    if not cap.ok:
        assert "sch_netem" in cap.detail and "cannot be emulated" in cap.detail


def test_delay_study_refused_without_netem(tmp_path):
    study = load_study(DELAY_STUDY)
    assert study.topology.needs_netem()
    if capabilities.netem().ok:
        preflight(study)  # the kernel can do it: accepted
        return
    with pytest.raises(StudyRefused, match="sch_netem"):
        preflight(study)
    proc = subprocess.run([sys.executable, "-m", "sdnperf.cli", "run", str(DELAY_STUDY),
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "sch_netem" in proc.stderr + proc.stdout
