"""Link delay/loss need sch_netem: detected, and a study that needs it is refused in words
(never run with the delay silently missing, as Mininet's TCLink would) — except on the p4
architecture with our switch, which impairs its ports itself. All with the real detection;
tests/unit/test_link_impairment_check.py fakes the capability both ways."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdnperf.emulation import capabilities
from sdnperf.runner import StudyRefused, preflight
from sdnperf.study.loader import load_study

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="probing qdiscs needs root"),
]

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
    with pytest.raises(StudyRefused, match="sch_netem") as refused:
        preflight(study)
    # names the architectures that cannot run it, and the one that could
    assert "architecture(s) bridge, openflow cannot run this study here" in str(refused.value)
    assert 'kind = "p4"' in str(refused.value)
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "run", str(DELAY_STUDY), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "sch_netem" in proc.stderr + proc.stdout
    # `check` refuses what `run` refuses (one validation path), with the same words
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "check", str(DELAY_STUDY)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "`sdnperf run` refuses it here" in proc.stderr and "sch_netem" in proc.stderr


def study_text(archs: str) -> str:
    return (
        '[study]\nname = "t"\n[topology]\nkind = "single"\nhosts = 2\n'
        "[topology.link]\ndelay_ms = 5\nloss_pct = 1\n"
        + archs
        + '[[workload]]\nname = "ping"\nkind = "ping"\npairs = [["h1", "h2"]]\n'
    )


P4 = '[[architecture]]\nname = "p4"\nkind = "p4"\napp = "proactive"\n'
BMV2 = '[[architecture]]\nname = "bmv2"\nkind = "p4"\ntarget = "bmv2"\napp = "proactive"\n'
OPENFLOW = '[[architecture]]\nname = "of"\nkind = "openflow"\ncontroller = "osken"\n'


def test_p4_delay_study_accepted_either_way(tmp_path):
    from sdnperf import tools
    from sdnperf.study.loader import load_study_text

    if tools.locate("sdnperf-switch-grpc") is None:
        pytest.skip("sdnperf-switch-grpc is not built")
    preflight(load_study_text(study_text(P4), "t.toml", tmp_path))  # netem or not


@pytest.mark.parametrize(
    "archs,named", [(P4 + OPENFLOW, "of (openflow)"), (P4 + BMV2, "bmv2 (p4, target bmv2)")]
)
def test_others_refused_by_name_without_netem(tmp_path, archs, named):
    if capabilities.netem().ok:
        pytest.skip("this kernel has sch_netem: nothing to refuse")
    path = tmp_path / "study.toml"
    path.write_text(study_text(archs))
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "run", str(path), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = " ".join((proc.stdout + proc.stderr).split())  # rich wraps long lines
    assert proc.returncode == 2, out
    assert "sch_netem" in out and f"{named} cannot run this study here" in out, out
    assert "p4 would use its switch's per-port impairment" in out, out
