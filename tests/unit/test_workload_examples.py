"""Every examples/workload-*.toml loads with the study loader, on bridge, openflow and p4,
without link delay/loss (this kernel may lack sch_netem)."""

from pathlib import Path

import pytest

from sdnperf.study.loader import load_study

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("workload-*.toml"))
KINDS = {"tcp-connect", "voip", "live-video", "video", "mixed"}


def test_one_example_per_new_kind():
    kinds = {wl.kind for p in EXAMPLES for wl in load_study(p).config.workload}
    assert KINDS <= kinds


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_loads(path):
    study = load_study(path)
    kinds = {a.kind for a in study.config.architecture}
    assert {"bridge", "openflow"} <= kinds <= {"bridge", "openflow", "p4"}
    assert not study.topology.needs_netem()
    hosts = set(study.topology.hosts())
    for wl in study.config.workload:
        for member in getattr(wl, "members", None) or [wl]:
            if isinstance(member.pairs, list):
                assert {h for pair in member.pairs for h in pair} <= hosts
