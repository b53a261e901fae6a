"""Parsers and summaries on outputs recorded from real ping / iperf3 runs.

The files in tests/unit/data/ were recorded in two network namespaces joined by a veth
pair (see tests/unit/data/README.md for the commands).
"""

import json
from pathlib import Path

import pytest

from sdnperf.workloads.basic_config import IperfTcpConfig
from sdnperf.workloads.iperf import (
    parse_iperf3,
    socket_buffer_max,
    tcp_output,
    udp_output,
    window_refusal,
)
from sdnperf.workloads.ping import parse_ping, ping_argv, ping_output

DATA = Path(__file__).parent / "data"


def text(name: str) -> str:
    return (DATA / name).read_text()


def by_metric(out):
    return {s.metric: s for s in out.summaries}


# --- ping -------------------------------------------------------------------------------


def test_ping_all_answered():
    res = parse_ping(text("ping_ok.txt"))
    assert (res.transmitted, res.received, res.lost_seqs) == (5, 5, [])
    assert [r.seq for r in res.replies] == [1, 2, 3, 4, 5]
    assert res.replies[0].rtt_ms == 0.333 and res.replies[0].ts == 1795334561.315104


def test_ping_losses_from_no_answer_lines():
    res = parse_ping(text("ping_loss.txt"))
    assert (res.transmitted, res.received) == (12, 8)
    assert res.lost_seqs == [5, 6, 7, 8]


def test_ping_cold_lost_and_unreachable():
    for name in ("ping_cold_lost.txt", "ping_unreach.txt"):
        res = parse_ping(text(name))
        assert (res.transmitted, res.received, res.lost_seqs) == (1, 0, [1])


def test_ping_killed_before_statistics_still_counts_losses():
    cut = text("ping_loss.txt").split("\n---")[0]  # as if killed before the summary
    res = parse_ping(cut)
    assert res.transmitted == 12 and res.lost_seqs == [5, 6, 7, 8]


def test_ping_duplicates_are_ignored():
    dup = text("ping_ok.txt").replace(
        "icmp_seq=2 ttl=64 time=0.051 ms",
        "icmp_seq=2 ttl=64 time=0.051 ms\n[1795334561.516100] 64 bytes from 10.99.0.2: "
        "icmp_seq=2 ttl=64 time=0.090 ms (DUP!)",
    )
    assert [r.rtt_ms for r in parse_ping(dup).replies] == [0.333, 0.051, 0.102, 0.055, 0.062]


def test_ping_argv():
    assert ping_argv("10.0.0.2", 20, 0.2, 56, 2.0) == [
        "ping",
        "-n",
        "-D",
        "-O",
        "-c",
        "20",
        "-i",
        "0.2",
        "-s",
        "56",
        "-W",
        "2",
        "10.0.0.2",
    ]


def test_ping_output_summaries_and_samples():
    cold = {
        "h1->h2": parse_ping(text("ping_cold.txt")),
        "h3->h2": parse_ping(text("ping_cold_lost.txt")),
    }
    steady = {
        "h1->h2": parse_ping(text("ping_steady.txt")),
        "h3->h2": parse_ping(text("ping_loss.txt")),
    }
    t0 = 1795334560.0
    out = ping_output("ping", cold, steady, t0)
    m = by_metric(out)
    assert m["rtt_first_ms"].value == pytest.approx(0.039)  # only the answered cold packet
    assert m["loss_first_pct"].value == 50.0
    # loss counts the lost cold packet too: (1 + 4) lost of (2 + 8 + 12) sent
    assert m["loss_pct"].value == pytest.approx(100 * 5 / 22)
    steady_rtts = [r.rtt_ms for r in steady["h1->h2"].replies] + [
        r.rtt_ms for r in steady["h3->h2"].replies
    ]
    assert m["rtt_ms"].value == pytest.approx(sum(steady_rtts) / len(steady_rtts))
    assert m["rtt_min_ms"].value == 0.032 and m["rtt_max_ms"].value == 0.065
    assert m["rtt_mdev_ms"].value > 0
    assert all(s.better == "lower" for s in out.summaries)
    rtt_samples = [s for s in out.samples if s.metric == "rtt_ms"]
    assert {s.phase for s in rtt_samples} == {"cold", "steady"}
    assert len(rtt_samples) == 1 + 16
    first = rtt_samples[0]
    assert (first.flow, first.phase, first.seq, first.unit) == ("h1->h2", "cold", 1, "ms")
    assert first.t == pytest.approx(1795334569.785956 - t0)
    lost = [s for s in out.samples if s.metric == "lost"]
    assert [(s.flow, s.phase, s.seq) for s in lost] == [("h3->h2", "cold", 1)] + [
        ("h3->h2", "steady", q) for q in (5, 6, 7, 8)
    ]


def test_ping_output_all_lost_has_no_rtt():
    out = ping_output("p", {"a->b": parse_ping(text("ping_cold_lost.txt"))}, {}, 0.0)
    m = by_metric(out)
    assert "rtt_first_ms" not in m and "rtt_ms" not in m
    assert m["loss_pct"].value == 100.0 and m["loss_first_pct"].value == 100.0


# --- iperf3 -----------------------------------------------------------------------------


def test_tcp_duration():
    res = parse_iperf3(text("iperf3_tcp_duration.json"))
    assert res.error == "" and res.receiver_intervals
    assert len(res.intervals) == 3  # the 1-ms tail the receiver reports is dropped
    assert [round(iv.end) for iv in res.intervals] == [1, 2, 3]
    assert res.mbps == pytest.approx(20522.55, rel=1e-4)
    assert res.bytes == 7698644992 and res.retransmits == 29283
    assert res.jitter_ms is None


def test_tcp_fixed_bytes():
    res = parse_iperf3(text("iperf3_tcp_bytes.json"))
    assert res.bytes == 5 * 1024**3 and res.seconds == pytest.approx(1.974056)
    assert len(res.intervals) == 2 and res.intervals[-1].end == pytest.approx(1.974056)


def test_tcp_errors_are_reported():
    assert parse_iperf3(text("iperf3_refused.json")).error.endswith("Connection refused")
    killed = parse_iperf3(text("iperf3_tcp_server_killed.json"))
    assert killed.error == "the server has terminated"
    assert len(killed.intervals) == 1  # the repeated interval is dropped
    with pytest.raises(ValueError, match="not JSON"):
        parse_iperf3("")
    with pytest.raises(ValueError, match="not JSON"):
        parse_iperf3('{"start": {')
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_iperf3("[]")


def test_udp_clean_and_lossy():
    clean = parse_iperf3(text("iperf3_udp.json"))
    assert clean.receiver_intervals and len(clean.intervals) == 3
    assert all(iv.jitter_ms is not None for iv in clean.intervals)
    assert clean.mbps == pytest.approx(10, rel=0.01)
    assert (clean.lost_packets, clean.packets, clean.out_of_order) == (0, 2589, 0)
    lossy = parse_iperf3(text("iperf3_udp_loss.json"))
    assert (lossy.lost_packets, lossy.packets) == (1175, 6249)
    assert lossy.intervals[1].mbps < 5  # link was down during the second interval


def test_tcp_output_sums_pairs():
    a = parse_iperf3(text("iperf3_tcp_duration.json"))
    b = parse_iperf3(text("iperf3_tcp_bytes.json"))
    out = tcp_output(
        "tcp", {"h1->h2": a, "h3->h2": b}, {"h1->h2": 0.0, "h3->h2": 0.5}, fixed_bytes=True
    )
    m = by_metric(out)
    assert m["throughput_mbps"].value == pytest.approx(a.mbps + b.mbps)
    assert m["throughput_mbps"].better == "higher" and m["bytes"].better == "higher"
    assert m["bytes"].value == a.bytes + b.bytes
    assert m["retransmits"].value == a.retransmits + b.retransmits
    assert m["transfer_time_s"].value == pytest.approx((a.seconds + b.seconds) / 2)
    assert m["transfer_time_max_s"].value == pytest.approx(max(a.seconds, b.seconds))
    series = [s for s in out.samples if s.flow == "h3->h2" and s.metric == "throughput_mbps"]
    assert [s.seq for s in series] == [0, 1]
    assert series[0].t == pytest.approx(0.5 + 1.000022)  # client start offset + interval end
    no_bytes = by_metric(tcp_output("tcp", {"x": a}, {}, fixed_bytes=False))
    assert "transfer_time_s" not in no_bytes


def test_udp_output():
    clean = parse_iperf3(text("iperf3_udp.json"))
    lossy = parse_iperf3(text("iperf3_udp_loss.json"))
    out = udp_output("udp", {"h1->h2": clean, "h3->h4": lossy}, {})
    m = by_metric(out)
    assert m["throughput_mbps"].value == pytest.approx(clean.mbps + lossy.mbps)
    assert m["loss_pct"].value == pytest.approx(100 * 1175 / (2589 + 6249))
    assert m["reordered_pct"].value == 0.0
    assert m["jitter_ms"].value == pytest.approx((clean.jitter_ms + lossy.jitter_ms) / 2)
    assert {s.metric for s in out.samples} == {"throughput_mbps", "jitter_ms"}
    assert m["bytes"].value == clean.bytes + lossy.bytes


def _udp_run(sent: int, arrivals: list[int], gaps: int, size: int = 1470, t: float = 3.0) -> str:
    """A synthetic `iperf3 -u --json --get-server-output` client document, as iperf 3.12
    writes it: `sent` datagrams of `size` bytes over `t` s; the receiver counted for
    len(arrivals) s, arrivals[i] datagrams in its i-th second, with `gaps` sequence numbers
    missing below the highest it saw (its lost count); what was sent after that highest
    one is in neither count (iperf3's `packets` is the highest sequence number seen)."""
    arrived, seconds = sum(arrivals), float(len(arrivals))
    highest = arrived + gaps
    rx = {
        "start": 0,
        "end": seconds,
        "seconds": seconds,
        "bytes": arrived * size,
        "bits_per_second": arrived * size * 8 / seconds,
        "jitter_ms": 0.1,
        "lost_packets": gaps,
        "packets": highest,
        "lost_percent": 100 * gaps / highest,
        "sender": False,
    }
    tx = {
        **rx,
        "end": t,
        "seconds": t,
        "bytes": sent * size,
        "bits_per_second": sent * size * 8 / t,
        "lost_packets": 0,
        "packets": sent,
        "lost_percent": 0,
        "jitter_ms": 0,
        "sender": True,
    }
    intervals = [
        {
            "sum": {
                "start": float(i),
                "end": float(i + 1),
                "seconds": 1.0,
                "bytes": n * size,
                "bits_per_second": n * size * 8.0,
                "jitter_ms": 0.1,
                "lost_packets": 0,
                "packets": n,
                "omitted": False,
                "sender": False,
            }
        }
        for i, n in enumerate(arrivals)
    ]
    doc = {
        "start": {"test_start": {"protocol": "UDP", "num_streams": 1, "blksize": size}},
        "intervals": [],
        "end": {"streams": [], "sum": {**rx, "sender": True}, "sum_sent": tx, "sum_received": rx},
        "server_output_json": {"intervals": intervals, "end": {"streams": []}},
    }
    return json.dumps(doc)


def test_udp_datagrams_still_on_their_way_when_the_receiver_stops_count_as_lost():
    """1000 datagrams sent in 3 s; 650 arrived, the receiver saw sequence numbers up to 700
    with 50 gaps and stopped: iperf3 says 50 of 700 lost (7 %), but 350 never arrived (the
    300 after number 700 were still held in a switch). Less the 7 sent in the last 20 ms
    (END_GRACE_S: they race the end of test), 293 are unreported: loss_pct 34.3 %, and the
    received rate, 65 % of the offered one, is 100 - loss_pct to those 7 (0.7 %)."""
    res = parse_iperf3(_udp_run(sent=1000, arrivals=[250, 250, 150], gaps=50))
    assert (res.lost_packets, res.packets) == (50, 700)  # what iperf3 reports
    assert (res.sent_packets, res.received_packets, res.late_packets) == (1000, 650, 0)
    assert res.unreported_packets == 300 - 7
    m = by_metric(udp_output("udp", {"h1->h2": res}, {}))
    assert m["loss_pct"].value == pytest.approx(34.3)
    assert m["unreported_loss_pct"].value == pytest.approx(29.3)
    assert m["late_pct"].value == 0.0
    offered = 1000 * 1470 * 8 / 3.0 / 1e6
    assert 100 * res.mbps / offered == pytest.approx(100 - m["loss_pct"].value, abs=0.701)


def test_udp_datagrams_arriving_after_the_senders_end_are_late_and_count_as_lost():
    """The receiver's end of test was held too: it counted for 10 s of a 3-s test, 30
    datagrams a second (what a switch holding each by N passes lets out), 300 in all, and
    iperf3 reports no loss at all. 120 arrived in the test's 3 s and its 1 s of grace
    (LATE_GRACE_S), 180 later, 700 never (693 beyond the 7 racing the end): loss_pct
    87.3 %. The throughput is what arrived in time over the sender's 3 s, 12 % of the
    offered 3.9 Mbit/s, 100 - 87.3 to the graces (iperf3's receiver rate is over its 10 s)."""
    res = parse_iperf3(_udp_run(sent=1000, arrivals=[30] * 10, gaps=0))
    assert (res.lost_packets, res.packets) == (0, 300)
    assert (res.sent_packets, res.received_packets, res.late_packets) == (1000, 300, 180)
    assert res.unreported_packets == 700 - 7
    m = by_metric(udp_output("udp", {"h1->h2": res}, {}))
    assert m["loss_pct"].value == pytest.approx(87.3)
    assert m["unreported_loss_pct"].value == pytest.approx(69.3)
    assert m["late_pct"].value == pytest.approx(18.0)
    offered = 1000 * 1470 * 8 / 3.0 / 1e6
    assert res.mbps == pytest.approx(120 * 1470 * 8 / 3.0 / 1e6)
    assert 100 * res.mbps / offered == pytest.approx(100 - m["loss_pct"].value, abs=0.701)


def test_udp_datagrams_delayed_by_the_path_are_in_time():
    """A path with 0.4 s one-way delay: the receiver, whose clock starts a one-way delay
    before the sender's, sees the last of the 3-s test's datagrams up to 0.8 s after the
    sender's end. Within LATE_GRACE_S they are in time: no loss, iperf3's rate."""
    res = parse_iperf3(_udp_run(sent=1000, arrivals=[250, 250, 250, 250], gaps=0))
    assert res.late_packets == 0 and res.unreported_packets == 0
    m = by_metric(udp_output("udp", {"h1->h2": res}, {}))
    assert m["loss_pct"].value == 0.0 and m["late_pct"].value == 0.0


def test_a_datagram_racing_the_end_of_test_is_not_lost():
    """On a clean link about one run in two leaves the last datagram unread when the
    receiver stops (bench/recirc/udp_tail.py at N = 0: 2589 sent, 2588 arrived)."""
    res = parse_iperf3(_udp_run(sent=1000, arrivals=[333, 333, 333], gaps=0))
    assert res.unreported_packets == 0
    m = by_metric(udp_output("udp", {"h1->h2": res}, {}))
    assert m["loss_pct"].value == 0.0


def test_udp_loss_is_iperfs_when_every_datagram_is_accounted_for():
    res = parse_iperf3(_udp_run(sent=1000, arrivals=[320, 320, 310], gaps=50))
    m = by_metric(udp_output("udp", {"h1->h2": res}, {}))
    assert m["loss_pct"].value == pytest.approx(5.0)
    assert m["unreported_loss_pct"].value == 0.0 and m["late_pct"].value == 0.0
    # recorded runs: the same as iperf3's count
    for name, sent, lost in (("iperf3_udp_loss.json", 6249, 1175), ("iperf3_udp.json", 2589, 0)):
        run = parse_iperf3(text(name))
        assert (run.sent_packets, run.received_packets, run.late_packets) == (
            sent,
            sent - lost,
            0,
        )


def test_retransmit_pct_worked_example():
    """R / (R + ceil(bytes / MSS)): 10 retransmissions beside 14480 B in 1448-B segments
    (10 segments) is 50 %; a second pair with none of 28960 B (20 segments) makes 25 %."""
    from sdnperf.workloads.iperf import IperfResult, retransmit_pct

    a = IperfResult(retransmits=10, bytes_sent=14480, mss=1448)
    assert retransmit_pct([a]) == pytest.approx(50.0)
    b = IperfResult(retransmits=0, bytes_sent=28960, mss=1448)
    assert retransmit_pct([a, b]) == pytest.approx(100 * 10 / 40)
    c = IperfResult(retransmits=0, bytes_sent=1449, mss=1448)  # 2 segments (ceil)
    assert retransmit_pct([a, c]) == pytest.approx(100 * 10 / 22)
    assert retransmit_pct([IperfResult()]) is None  # UDP, or no MSS: no share


def test_retransmit_pct_from_recorded_run():
    res = parse_iperf3(text("iperf3_tcp_bytes.json"))
    assert res.mss == 1448 and res.bytes_sent == 5368709120 and res.retransmits == 25162
    out = tcp_output("tcp", {"h1->h2": res}, {}, fixed_bytes=True)
    segments = -(-5368709120 // 1448)
    assert by_metric(out)["retransmit_pct"].value == pytest.approx(100 * 25162 / (25162 + segments))


def test_a_tcp_window_above_the_socket_buffer_maximum_is_refused_in_words():
    cfg = IperfTcpConfig(name="tcp", kind="iperf-tcp", pairs=[["h1", "h2"]], window="10M")
    assert cfg.window_bytes == 10 * 1024 * 1024  # iperf3 -w: K/M = 1024^n
    why = window_refusal(cfg.window_bytes, 4194304)
    assert why is not None
    assert "10485760 bytes exceeds" in why and "net.core.rmem_max/wmem_max = 4194304" in why
    assert "initial network namespace" in why
    assert window_refusal(cfg.window_bytes, 16777216) is None
    assert window_refusal(None, 4194304) is None  # no window asked: the kernel's default
    assert window_refusal(cfg.window_bytes, None) is None  # /proc silent: iperf3 decides
    allowed = socket_buffer_max()  # this machine's, read from /proc
    assert allowed is None or allowed > 0
