"""docs/study-reference.md is generated from the schema: regenerated here and compared, so a
field added to any model without regenerating the file fails this test."""

from __future__ import annotations

from pathlib import Path

from sdnperf.study.reference import field_rows, generator_text, render
from sdnperf.topo.registry import TOPOLOGIES
from sdnperf.workloads.basic_config import PingConfig

DOC = Path(__file__).parents[2] / "docs" / "study-reference.md"


def test_the_reference_is_the_schema_regenerated():
    assert DOC.read_text() == render(), (
        "docs/study-reference.md is stale: python -m sdnperf.study.reference > "
        "docs/study-reference.md"
    )


def test_every_kind_and_generator_has_a_section():
    text = render()
    for kind in TOPOLOGIES:
        assert f'### kind = "{kind}"' in text
    for kind in ("bridge", "router", "ovs-standalone", "ovs-flows", "openflow", "p4"):
        assert f'### kind = "{kind}"' in text
    for kind in ("ping", "iperf-tcp", "iperf-udp", "tcp-connect", "voip", "live-video", "video"):
        assert f'### kind = "{kind}"' in text


def test_a_field_row_has_type_default_and_limits():
    rows = {row[0]: row for row in field_rows(PingConfig)}
    assert rows["count"][1:4] == ("integer", "20", "≥ 1, ≤ 100000")
    assert rows["pairs"][2] == "required"


def test_topo_show_kind_help_lists_the_generator_parameters():
    from sdnperf.cli import main

    text = generator_text("tree")
    assert "| depth | integer | 2 | ≥ 1, ≤ 10 |" in text
    assert main(["topo", "show", "tree", "--help"]) == 0
