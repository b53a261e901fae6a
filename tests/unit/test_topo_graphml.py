"""GraphML import: Zoo-style attributes, delay from coordinates, missing data, errors."""

from pathlib import Path

import pydantic
import pytest

from sdnperf.topo import TopologyError, build_topology
from sdnperf.topo.generators.graphml import great_circle_km, propagation_delay_ms

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "abilene-like.graphml"

HEADER = """<?xml version="1.0" encoding="utf-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="Latitude" attr.type="double" for="node" id="d1" />
  <key attr.name="Longitude" attr.type="double" for="node" id="d2" />
  <key attr.name="label" attr.type="string" for="node" id="d3" />
  <graph edgedefault="undirected">
"""


def node(i, label, lat=None, lon=None):
    coords = "" if lat is None else f'<data key="d1">{lat}</data><data key="d2">{lon}</data>'
    return f'<node id="{i}">{coords}<data key="d3">{label}</data></node>\n'


def write(tmp_path, body, name="net.graphml"):
    path = tmp_path / name
    path.write_text(HEADER + body + "</graph></graphml>\n")
    return path


def test_great_circle_and_fibre_delay():
    # London -> New York is about 5570 km; in fibre that is about 27.9 ms one way.
    km = great_circle_km(51.5074, -0.1278, 40.7128, -74.0060)
    assert 5550 < km < 5590
    assert propagation_delay_ms(km) == pytest.approx(27.85, abs=0.1)
    assert great_circle_km(10, 20, 10, 20) == 0


def test_example_file_nodes_become_switches_with_one_host_each():
    spec = build_topology("graphml", {"file": str(EXAMPLE)}, 1)
    assert len(spec.switches()) == 11 and len(spec.hosts()) == 11
    assert spec.switch_graph().number_of_edges() == 14
    assert all(len(spec.host_switches(h)) == 1 for h in spec.hosts())
    assert spec.name_map["s1"] == "Seattle" and spec.graph.nodes["s11"]["label"] == "New York"
    assert spec.graph.nodes["s1"]["pos"] == (-122.33, 47.61)  # (lon, lat)
    assert spec.has_loops()
    assert not spec.needs_netem()  # no delay unless asked


def test_delay_from_coordinates(tmp_path):
    path = write(
        tmp_path,
        node(0, "A", 0, 0)
        + node(1, "B", 0, 1)
        + node(2, "C", 1, 1)
        + '<edge source="0" target="1"/><edge source="1" target="2"/>',
    )
    spec = build_topology("graphml", {"file": str(path), "delay_from_coordinates": True}, 1)
    one_degree_ms = propagation_delay_ms(great_circle_km(0, 0, 0, 1))
    assert one_degree_ms == pytest.approx(111.2 / 199.86, abs=0.01)
    assert spec.graph.edges["s1", "s2"]["delay_ms"] == one_degree_ms
    assert spec.graph.edges["s2", "s3"]["delay_ms"] == pytest.approx(one_degree_ms, abs=0.01)
    # host links get no propagation delay
    assert spec.graph.edges["h1", "s1"]["delay_ms"] is None
    assert spec.needs_netem()


def test_missing_coordinates_leave_delay_unset_and_noted(tmp_path):
    path = write(
        tmp_path,
        node(0, "A", 0, 0)
        + node(1, "Nowhere")
        + node(2, "C", 1, 1)
        + '<edge source="0" target="1"/><edge source="0" target="2"/>',
    )
    spec = build_topology("graphml", {"file": str(path), "delay_from_coordinates": True}, 1)
    assert spec.graph.edges["s1", "s2"]["delay_ms"] is None
    assert spec.graph.edges["s1", "s3"]["delay_ms"] > 0
    assert "pos" not in spec.graph.nodes["s2"]
    notes = " ".join(spec.notes)
    assert "Nowhere" in notes and "s1-s2" in notes
    # the study's link default then fills the gap
    assert spec.with_link_defaults(delay_ms=5).graph.edges["s1", "s2"]["delay_ms"] == 5


def test_relative_path_resolves_against_base_dir(tmp_path):
    write(tmp_path, node(0, "A") + node(1, "B") + '<edge source="0" target="1"/>', "rel.graphml")
    spec = build_topology("graphml", {"file": "rel.graphml"}, 1, base_dir=tmp_path)
    assert spec.name == "rel" and len(spec.switches()) == 2


def test_disconnected_nodes_dropped_unless_kept(tmp_path):
    body = node(0, "A") + node(1, "B") + node(2, "Island") + '<edge source="0" target="1"/>'
    path = write(tmp_path, body)
    spec = build_topology("graphml", {"file": str(path)}, 1)
    assert len(spec.switches()) == 2 and "Island" in " ".join(spec.notes)
    kept = build_topology("graphml", {"file": str(path), "keep_disconnected": True}, 1)
    assert len(kept.switches()) == 3 and not kept.is_connected()


def test_parallel_edges_and_self_loops_collapse(tmp_path):
    body = (
        node(0, "A") + node(1, "B") + '<edge source="0" target="1"/>'
        '<edge source="1" target="0"/><edge source="1" target="1"/>'
    )
    spec = build_topology("graphml", {"file": str(write(tmp_path, body))}, 1)
    assert spec.switch_graph().number_of_edges() == 1


def test_missing_file_error_names_it(tmp_path):
    with pytest.raises(TopologyError, match="nope.graphml: GraphML file not found") as info:
        build_topology("graphml", {"file": "nope.graphml"}, 1, base_dir=tmp_path)
    assert info.value.field == "file"
    assert str(tmp_path) in str(info.value)


def test_malformed_file_error_names_it(tmp_path):
    path = tmp_path / "broken.graphml"
    path.write_text("<graphml><graph><node id='0'>")
    with pytest.raises(TopologyError, match="broken.graphml: not a valid GraphML file"):
        build_topology("graphml", {"file": str(path)}, 1)


def test_params_validated():
    with pytest.raises(pydantic.ValidationError, match="file"):
        build_topology("graphml", {}, 1)
    with pytest.raises(pydantic.ValidationError, match="Extra inputs"):
        build_topology("graphml", {"file": "x", "delay": True}, 1)
