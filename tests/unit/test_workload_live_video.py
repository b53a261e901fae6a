"""live-video: receiver log parsing, loss, frames lost/late against the playout deadline,
throughput over time — on synthetic traces with known answers."""

import pytest

from sdnperf.workloads.live_video import parse_receiver, planned_counts, stream_output, stream_stats
from sdnperf.workloads.traffic_config import LiveVideoConfig

FPS, NPKT, SIZE = 10, 2, 1000


def trace(frames=10, delay=0.005, drop=(), late=None):
    """Receiver lines for `frames` frames of NPKT packets; `late` = {frame: extra delay}."""
    lines, seq = [], 0
    for f in range(frames):
        ft = 100.0 + f / FPS
        for i in range(NPKT):
            sent = ft + i / (FPS * NPKT)
            recv = sent + delay + (late or {}).get(f, 0.0)
            if seq not in drop:
                lines.append(f"{seq} {sent:.6f} {recv:.6f} {ft:.6f} {f} {NPKT} {i} {SIZE}")
            seq += 1
    lines.append(f"END {seq} {frames}")
    return "\n".join(lines) + "\n"


def test_clean_stream():
    log = parse_receiver(trace())
    assert log.sent == 20 and log.frames == 10 and len(log.packets) == 20
    st = stream_stats(log, playout_delay_ms=100, fallback_sent=0, fallback_frames=0)
    assert st.loss_pct == 0 and st.frames_lost == 0 and st.frames_late == 0
    assert st.owd_ms == pytest.approx(5.0, abs=1e-3)
    assert st.jitter_rfc3550_ms == pytest.approx(0, abs=1e-3)
    # 20 x 1000 B over 10 frames at 10 fps = 1 s -> 0.16 Mbit/s
    assert st.mbps == pytest.approx(0.16)
    assert st.series == [(1.0, pytest.approx(0.16))]


def test_lost_and_late_frames():
    # packet 3 (frame 1) lost; frame 4 arrives 0.2 s late against a 100-ms deadline
    log = parse_receiver(trace(drop={3}, late={4: 0.2}))
    st = stream_stats(log, playout_delay_ms=100, fallback_sent=0, fallback_frames=0)
    assert st.frames_lost == 1 and st.frames_late == 1
    assert st.loss_pct == pytest.approx(5.0)
    assert st.jitter_flowmean_ms > 0
    out = stream_output("live", {"h1->h2": st}, {})
    m = {s.metric: s.value for s in out.summaries}
    assert m["frames_lost_pct"] == 10 and m["frames_late_pct"] == 10 and m["loss_pct"] == 5


def test_end_message_lost_uses_plan():
    text = trace(frames=10).replace("END 20 10\n", "")
    st = stream_stats(parse_receiver(text), 100, fallback_sent=30, fallback_frames=15)
    assert st.sent == 30 and st.frames_lost == 5  # frames 10..14 never arrived


def test_nothing_arrived():
    st = stream_stats(parse_receiver("END 50 25\n"), 100, 0, 0)
    assert st.loss_pct == 100 and st.frames_lost == 25 and st.owd_ms is None


def test_planned_counts_match_pacer():
    cfg = LiveVideoConfig(
        kind="live-video",
        name="l",
        pairs=[["h1", "h2"]],
        bitrate="4M",
        fps=25,
        packet_size=1200,
        duration=3,
    )
    # 20000 B per frame in packets of <= 1160 B video payload -> 18 packets, 75 frames
    assert planned_counts(cfg) == (18 * 75, 75)


def _lines(packets):
    """Receiver lines for (send, recv) pairs, one 1000-B packet per frame at 10 fps."""
    out = [f"{i} {s:.6f} {r:.6f} {s:.6f} {i} 1 0 {SIZE}" for i, (s, r) in enumerate(packets)]
    return "\n".join(out + [f"END {len(packets)} {len(packets)}"]) + "\n"


def test_jitter_over_time_and_eq1_worked_example():
    # Delays 5, 5, 21, 21 ms (sent 0.1 s apart): D = 0, +16, 0 ms, so the running RFC 3550
    # jitter after each packet is 0, 0, 1, 0.9375 ms (J += (|D| - J) / 16).
    sends = [100.0, 100.1, 100.2, 100.3]
    delays = [0.005, 0.005, 0.021, 0.021]
    st = stream_stats(
        parse_receiver(_lines([(s, s + d) for s, d in zip(sends, delays)])), 100, 0, 0
    )
    # Eq. 1 for one flow: the mean over packets 2..4 of the running jitter, (0 + 1 + 0.9375) / 3
    assert st.jitter_eq1_ms == pytest.approx((0 + 1 + 0.9375) / 3)
    assert st.jitter_rfc3550_ms == pytest.approx(0.9375)
    # all four arrive in the first second: one interval, the value after its last packet
    assert st.jitter_series == [(1.0, pytest.approx(0.9375))]
    assert st.bytes == 4 * SIZE
    out = stream_output("live", {"h1->h2": st, "h3->h2": st}, {"h1->h2": 0.0, "h3->h2": 0.5})
    m = {s.metric: s.value for s in out.summaries}
    assert m["bytes"] == 8 * SIZE
    assert m["jitter_eq1_ms"] == pytest.approx((0 + 1 + 0.9375) / 3)  # both flows alike
    over_time = [(s.flow, s.t, s.seq) for s in out.samples if s.metric == "jitter_rfc3550_ms"]
    assert (("h1->h2", 1.0, 0) in over_time) and (("h3->h2", 1.5, 0) in over_time)


def test_jitter_series_one_value_per_interval():
    # two packets per second for three seconds, the third second's second packet 10 ms late
    sends = [100.0 + k * 0.5 for k in range(6)]
    delays = [0.001] * 5 + [0.011]
    st = stream_stats(
        parse_receiver(_lines([(s, s + d) for s, d in zip(sends, delays)])), 100, 0, 0
    )
    assert [t for t, _ in st.jitter_series] == [1.0, 2.0, 3.0]
    assert st.jitter_series[0][1] == 0 and st.jitter_series[1][1] == 0
    assert st.jitter_series[2][1] == pytest.approx(10 / 16)
