"""`topo show`: text rendering, PNG drawing, CLI parameter parsing."""

import pytest

from sdnperf.topo import build_topology
from sdnperf.topo.show import draw_png, parse_param_args, render_text, show

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_render_text_campus():
    text = render_text(build_topology("campus", {}, 1))
    assert "10 switches, 28 hosts" in text
    assert "loops: no" in text and "diameter: 4 switch hops" in text
    assert "s4: switches [s2] hosts [h1..h4]" in text
    assert "s1: switches [s2 s3] hosts []" in text


def test_render_text_loops_links_and_notes():
    spec = build_topology("grid", {"rows": 2, "cols": 2}, 1).with_link_defaults(bw=10)
    spec.notes.append("something to know")
    text = render_text(spec)
    assert "loops: yes" in text and "bw 10 Mbit/s on 8 links" in text
    assert "note: something to know" in text


@pytest.mark.parametrize("kind", ["campus", "spine-leaf", "transit-stub", "tree", "single"])
def test_draw_png_writes_a_png(tmp_path, kind):
    out = draw_png(build_topology(kind, {}, 1), tmp_path / "sub" / f"{kind}.png")
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 5000


def test_show_builds_and_draws(tmp_path):
    png = tmp_path / "t.png"
    text = show("tree", {"depth": 2, "fanout": 2}, png=png)
    assert "3 switches, 4 hosts" in text and str(png) in text
    assert png.stat().st_size > 0
    spec = build_topology("single", {"hosts": 3}, 1)
    assert show(spec).startswith(spec.describe())


def test_parse_param_args():
    assert parse_param_args(
        ["depth=2", "prob=0.5", "flag=true", "file=net.graphml", 'name="x y"']
    ) == {"depth": 2, "prob": 0.5, "flag": True, "file": "net.graphml", "name": "x y"}
    with pytest.raises(ValueError, match="key=value"):
        parse_param_args(["depth"])
