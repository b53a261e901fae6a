"""Seed 003's axes from a stored recirculation study: the rows, the grouping, the theory
line from the measured processing delay, and every figure drawn under its registered stem."""

from __future__ import annotations

import pytest

from sdnperf.report import recirc_plots as rp
from sdnperf.report.plot_kinds import REGISTRY
from sdnperf.samples import RunResult, Summary
from sdnperf.store import Store
from sdnperf.studies.figure_map import report_kinds

P4 = "architecture.p4.params.recirc_passes"
SPEC = {
    "study": {"baseline": "p4"},
    "topology": [
        {"name": "one-switch", "kind": "single", "hosts": 2},
        {"name": "chain-of-two", "kind": "linear", "switches": 2},
    ],
    "workload": [
        {"name": "ping", "kind": "ping", "size": 1200},
        {"name": "tcp", "kind": "iperf-tcp"},
        {"name": "udp", "kind": "iperf-udp", "rate": "10M"},
    ],
    "sweep": [
        {"param": P4, "values": [0, 1, 3]},
        {"param": "topology.link.bw", "values": ["unlimited", 10, 1]},
        {"param": "workload.udp.rate", "values": ["2M", "8M"]},
    ],
}
# a made-up switch: 0.5 ms processing per switch, 0.1 ms per pass, per switch
PROC, PASS = 0.5, 0.1


def build(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    sid = store.open_study("recirculation", "paper.toml", SPEC, {})
    n = 0

    def record(topology, workload, point, summaries, rep=1):
        nonlocal n
        n += 1
        store.record_run(
            sid,
            RunResult(
                key=f"k{n}",
                topology=topology,
                architecture="p4",
                workload=workload,
                repetition=rep,
                params={},
                status="ok",
                point=point,
                summaries=summaries,
            ),
        )

    for topology, switches in (("one-switch", 1), ("chain-of-two", 2)):
        for passes in (0, 1, 3):
            for bw in ("unlimited", 10, 1):
                point = {P4: passes, "topology.link.bw": bw}
                tx = 0.0 if bw == "unlimited" else 2 * (switches + 1) * 1228 * 8 / (bw * 1e3)
                rtt_min = switches * (PROC + PASS * passes) + tx
                for rep in (1, 2):
                    record(
                        topology,
                        "ping",
                        point,
                        [
                            Summary("ping", "rtt_min_ms", rtt_min, "ms", "lower"),
                            Summary("ping", "rtt_ms", rtt_min + 0.1 * rep, "ms", "lower"),
                        ],
                        rep,
                    )
                record(
                    topology,
                    "tcp",
                    point,
                    [Summary("tcp", "throughput_mbps", 20.0 / (1 + passes), "Mbit/s", "higher")],
                )
                for rate in ("2M", "8M"):
                    got = min(float(rate[:-1]), 8.0 / (1 + passes))
                    record(
                        topology,
                        "udp",
                        {**point, "workload.udp.rate": rate},
                        [
                            Summary("udp", "throughput_mbps", got, "Mbit/s", "higher"),
                            Summary("udp", "loss_pct", 0.0, "%", "lower"),
                        ],
                    )
    return store, sid


def test_rates_and_labels():
    assert rp.rate_mbps("9.5M") == 9.5
    assert rp.rate_mbps("500K") == pytest.approx(0.5)
    assert rp.rate_mbps(1000) == 1000.0
    assert rp.rate_mbps("unlimited") is None
    assert [rp.bw_label(b) for b in ("unlimited", 1000, 1, 0.1, 0.01)] == [
        "no limit",
        "1 Gbit/s",
        "1 Mbit/s",
        "100 kbit/s",
        "10 kbit/s",
    ]
    assert sorted([1, "unlimited", 0.01, 1000], key=rp.bw_order) == ["unlimited", 1000, 1, 0.01]


def test_switch_counts_from_the_spec():
    assert rp.switch_counts(SPEC) == {"one-switch": 1, "chain-of-two": 2}
    assert rp.switch_counts({"topology": [{"name": "t", "kind": "tree"}]}) == {}


def test_rows_carry_the_theses_coordinates(tmp_path):
    store, sid = build(tmp_path)
    rows = rp.rows(store, sid)
    udp = [r for r in rows if r.workload == "udp" and r.metric == "throughput_mbps"]
    assert {r.send_rate for r in udp} == {"2M", "8M"}
    assert {r.passes for r in rows} == {0, 1, 3}
    assert {r.bw for r in rows} == {"unlimited", 10, 1}
    assert all(r.send_rate is None for r in rows if r.workload != "udp")


def test_lines_group_runs_per_point(tmp_path):
    store, sid = build(tmp_path)
    rows = [
        r
        for r in rp.rows(store, sid)
        if r.workload == "ping" and r.metric == "rtt_ms" and r.bw == "unlimited"
    ]
    lines = rp.lines_by(rows, lambda r: r.topology, lambda r: r.passes)
    assert lines["one-switch"][3] == pytest.approx([0.8 + 0.1, 0.8 + 0.2])
    assert lines["chain-of-two"][0] == pytest.approx([1.1, 1.2])


def test_theory_from_the_measured_processing_delay(tmp_path):
    store, sid = build(tmp_path)
    rows = rp.rows(store, sid)
    proc = rp.processing_ms(rows, "one-switch", "p4")
    assert proc == pytest.approx(PROC)  # min RTT, N = 0, no link rate
    line = rp.theory_line(1200, ["unlimited", 10, 1], proc, 1)
    assert line["unlimited"] == pytest.approx(0.5)
    assert line[1] == pytest.approx(0.5 + 4 * 9.824)  # thesis: 9.824 ms per link at 1 Mbit/s
    assert rp.theory_line(1200, [1], 1.0, 2)[1] == pytest.approx(1.0 + 6 * 9.824)
    assert rp.processing_ms(rows, "one-switch", "bmv2") is None


def test_every_figure_is_drawn_under_its_registered_stem(tmp_path):
    store, sid = build(tmp_path)
    added: list[tuple[object, str, str]] = []
    rp.add_plots(store, sid, tmp_path / "png", lambda p, c, r: added.append((p, c, r)))
    drawn = {p.stem for p, _, _ in added if p is not None}
    report_kinds()

    def stem(kind, **args):
        return REGISTRY[kind].name({k: str(v) for k, v in args.items()})

    expected = {
        stem("rtt-vs-link-rate", workload="ping"),
        *(stem("rtt-vs-passes", workload="ping", bw=b) for b in ("unlimited", 10, 1)),
        *(
            stem("vs-transmissions", workload=w, metric=m, bw=b)
            for w, m in (("ping", "rtt_min_ms"), ("tcp", "throughput_mbps"))
            for b in ("unlimited", 10, 1)
        ),
        *(
            stem("throughput-by-link-rate", workload="tcp", topology=t)
            for t in ("one-switch", "chain-of-two")
        ),
        *(
            stem("by-send-rate", workload="udp", metric=m, bw=b)
            for m in ("throughput_mbps", "loss_pct")
            for b in ("unlimited", 10, 1)
        ),
    }
    assert expected <= drawn, expected - drawn
    assert all((tmp_path / "png" / f"{s}.png").stat().st_size > 0 for s in expected)


def test_silent_without_recirculation_runs(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    sid = store.open_study("other", "x.toml", {}, {})
    added: list = []
    rp.add_plots(store, sid, tmp_path, lambda *a: added.append(a))
    assert added == []


def test_too_few_points_draw_nothing(tmp_path):
    row = rp.Row("one-switch", "p4", "ping", 0, "unlimited", None, "rtt_min_ms", 1.0)
    assert rp.rtt_vs_link_rate([row], SPEC, "ping", {}, tmp_path) is None
    assert rp.rtt_vs_passes([row], "ping", "unlimited", {}, tmp_path) is None
    assert rp.vs_transmissions([row], SPEC, "ping", "rtt_min_ms", "unlimited", {}, tmp_path) is None


def test_panels_and_legends_in_the_theses_order():
    rows = [
        rp.Row("chain-of-two", "p4", "tcp", 0, "unlimited", None, "throughput_mbps", 1.0),
        rp.Row("one-switch", "p4", "tcp", 0, 10, None, "throughput_mbps", 1.0),
        rp.Row("one-switch", "p4", "tcp", 0, "unlimited", None, "throughput_mbps", 1.0),
    ]
    assert rp._topologies(SPEC, rows) == ["one-switch", "chain-of-two"]
    assert rp._topologies({}, rows) == ["chain-of-two", "one-switch"]  # no spec: as stored
    ordered = sorted(rows, key=lambda r: rp.bw_order(r.bw))
    assert [r.bw for r in ordered][0] == "unlimited" and ordered[-1].bw == 10
