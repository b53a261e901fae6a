"""video (HTTP adaptive streaming): playout buffer, stall accounting, start-up delay and
the adaptation rules on synthetic traces with known answers; client log and content model."""

import math

import pytest
from pydantic import TypeAdapter, ValidationError

from sdnperf.workloads import playout, video_content
from sdnperf.workloads.config import WorkloadConfig
from sdnperf.workloads.video import parse_client, video_output

LADDER = [400e3, 800e3, 2.5e6, 5e6]


def dl(done_times, start=0.0, size=500_000, rate=2.5e6):
    """Downloads back to back: each request starts when the previous one finished."""
    out, t = [], start
    for d in done_times:
        out.append((t, d, size, rate))
        t = d
    return out


def test_startup_delay_and_no_stall():
    # 2-s segments arriving every second: the buffer only grows
    m = playout.session_metrics(dl([0.5, 1.5, 2.5, 3.5]), 2.0, startup_segments=1)
    assert m["startup_delay_s"] == 0.5 and m["stalls"] == 0 and m["stall_time_s"] == 0
    m = playout.session_metrics(dl([0.5, 1.5, 2.5, 3.5]), 2.0, startup_segments=2)
    assert m["startup_delay_s"] == 1.5


def test_stall_accounting():
    # play starts at 1.0 with 2 s buffered (runs out at 3.0); seg 2 at 4.0 -> stall 1.0;
    # then content to 6.0, seg 3 at 5.0 fine (to 8.0), seg 4 at 10.5 -> stall 2.5
    p = playout.Player(2.0, 1)
    for t in (1.0, 4.0, 5.0, 10.5):
        p.on_segment(t)
    assert p.startup_delay == 1.0
    assert p.stalls == [(3.0, 1.0), (8.0, 2.5)] and p.stall_time == 3.5
    assert p.buffer_level(11.0) == pytest.approx(1.5)
    assert p.buffer_level(20.0) == 0.0
    m = playout.session_metrics(dl([1.0, 4.0, 5.0, 10.5]), 2.0, 1)
    assert (m["stalls"], m["stall_time_s"]) == (2, 3.5)


def test_never_started():
    p = playout.Player(2.0, startup_segments=3)
    p.on_segment(1.0)
    assert p.startup_delay is None and p.buffer_level(5.0) == 2.0
    assert playout.session_metrics([], 2.0, 1)["startup_delay_s"] is None


def test_bitrate_and_switches_and_throughput():
    d = [
        (0, 1, 100_000, 400e3),
        (1, 2, 100_000, 400e3),
        (2, 3, 100_000, 2.5e6),
        (3, 4, 100_000, 800e3),
    ]
    m = playout.session_metrics(d, 2.0, 1)
    assert m["bitrate_mbps"] == pytest.approx((0.4 + 0.4 + 2.5 + 0.8) / 4)
    assert m["bitrate_switches"] == 2
    assert m["segment_time_s"] == 1.0 and m["throughput_mbps"] == pytest.approx(0.8)


def test_throughput_bins_spread_each_download():
    # 1 MB over [0.5, 1.5]: half in each 1-s bin -> 4 Mbit/s each
    bins = playout.throughput_bins([(0.5, 1.5, 1_000_000, 0)])
    assert bins == [(1.0, pytest.approx(4.0)), (2.0, pytest.approx(4.0))]


def test_throughput_rule():
    assert playout.choose_throughput([], LADDER) == 0
    # harmonic mean of 4, 4, 2 Mbit/s = 3 Mbit/s; 0.8 x 3 = 2.4 -> 800 k
    assert playout.choose_throughput([10e6, 4e6, 4e6, 2e6], LADDER) == 1
    assert playout.choose_throughput([100e6] * 3, LADDER) == 3


def test_buffer_rule():
    # max 12 s: reservoir 3 s, upper 10.8 s
    assert playout.choose_buffer(2.0, 12, LADDER) == 0
    assert playout.choose_buffer(11.0, 12, LADDER) == 3
    # 6.9 s -> target 0.4 + 4.6 x (3.9/7.8) = 2.7 Mbit/s -> 2.5 M
    assert playout.choose_buffer(6.9, 12, LADDER) == 2


CLIENT = """\
SEG 0 0 400000 100000 0.010000 0.050000 2.000
SEG 1 2 2500000 625000 0.050000 0.300000 3.750
junk
SEG 2 1 800000 200000 0.300000 5.000000 2.000
END
"""


def test_parse_client_and_output():
    log = parse_client(CLIENT)
    assert log.finished and len(log.downloads) == 3 and log.renditions == [0, 2, 1]
    out = video_output("video", {"h1->h2": log}, 2.0, 1, {"h1->h2": 1.0})
    m = {s.metric: s.value for s in out.summaries}
    assert m["startup_delay_s"] == pytest.approx(0.05)
    # playing from 0.05 with 2 s, +2 s at 0.3 -> runs out at 4.05; seg 2 at 5.0
    assert m["stalls"] == 1 and m["stall_time_s"] == pytest.approx(0.95)
    assert m["bitrate_switches"] == 2 and m["segment_time_max_s"] == pytest.approx(4.7)
    stall = [s for s in out.samples if s.metric == "stall_s"]
    assert stall[0].t == pytest.approx(5.05) and stall[0].value == pytest.approx(0.95)
    assert not parse_client("SEG 0 0 1 1 0 0.1 0\n").finished


def test_synthetic_size_model():
    rend = [(240, 400e3), (1080, 5e6)]
    sizes = video_content.synthetic_sizes(rend, 2.0, 400)
    mean = sum(sizes[1]) / 400
    assert mean == pytest.approx(5e6 * 2 / 8, rel=0.05)  # complexity has mean 1
    assert len(set(sizes[1])) > 300  # sizes vary
    # the same scene complexity in every rendition
    assert sizes[0][7] / sizes[1][7] == pytest.approx(400e3 / 5e6, rel=1e-3)
    assert video_content.synthetic_sizes(rend, 2.0, 5) == video_content.synthetic_sizes(
        rend, 2.0, 5
    )


def test_synthetic_content_on_disk(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("SDNPERF_CACHE", str(tmp_path))
    folder = video_content.ensure_content([(240, 4e5), (720, 2.5e6)], 2.0, 7.0, "synthetic")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["renditions"][1]["segments"]) == math.ceil(7 / 2)
    seg = manifest["renditions"][1]["segments"][0]
    assert (folder / seg["uri"]).stat().st_size == seg["bytes"]
    assert video_content.ensure_content([(240, 4e5), (720, 2.5e6)], 2.0, 7.0, "synthetic") == folder


def test_config():
    ta = TypeAdapter(WorkloadConfig)
    cfg = ta.validate_python({"kind": "video", "name": "v", "pairs": [["h1", "h2"]]})
    assert cfg.renditions[-1] == (1080, 5e6) and cfg.adaptation == "throughput"
    with pytest.raises(ValidationError, match="must increase"):
        ta.validate_python(
            {
                "kind": "video",
                "name": "v",
                "pairs": [["h1", "h2"]],
                "ladder": ["720p:2M", "360p:1M"],
            }
        )
    with pytest.raises(ValidationError, match="not like"):
        ta.validate_python(
            {"kind": "video", "name": "v", "pairs": [["h1", "h2"]], "ladder": ["hd:2M"]}
        )
