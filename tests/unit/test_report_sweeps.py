"""The sweep report: curves per parameter × metric, fits, Holm-adjusted p, panels, HTML."""

from __future__ import annotations

import pytest

from sdnperf.report.html import write_report
from sdnperf.report.sweep_plots import no_figure_reason, spans_decades, sweep_figure
from sdnperf.report.sweeps import sweep_metrics
from sdnperf.samples import RunResult, Summary
from sdnperf.store import Store

SPEC = {
    "study": {"baseline": "bridge"},
    "sweep": [
        {"param": "workload.udp.length", "values": [64, 512, 1400], "fit": "linear"},
        {"param": "architecture.p4.passes", "values": [1, 2], "fit": "none"},
    ],
}


def build(tmp_path, topologies=("line",)):
    store = Store(tmp_path / "s.sqlite")
    sid = store.open_study(
        "s",
        "s.toml",
        SPEC,
        {},
        provenance={
            "study_sha256": "f00d",
            "study_text": "[study]\nname = 's'\n",
            "hostname": "lab",
            "git": {"commit": "abc", "dirty": False},
            "run_order": {"order": "random", "seed": 3, "keys": ["k1", "k2"]},
        },
    )
    n = 0
    for topology in topologies:
        for length in (64, 512, 1400):
            for rep in (1, 2, 3):
                # jitter = 0.1 + 0.001·length (bridge), p4 twice that plus noise by rep
                for arch, value in (
                    ("bridge", 0.1 + 0.001 * length + 0.001 * rep),
                    ("p4", 0.2 + 0.002 * length + 0.001 * rep),
                ):
                    n += 1
                    store.record_run(
                        sid,
                        RunResult(
                            key=f"k{n}",
                            topology=topology,
                            architecture=arch,
                            workload="udp",
                            repetition=rep,
                            params={},
                            status="ok",
                            point={"workload.udp.length": length},
                            summaries=[Summary("udp", "jitter_ms", value, "ms", "lower")],
                        ),
                    )
    return store, sid


def test_curves_fits_and_holm(tmp_path):
    store, sid = build(tmp_path)
    (item,) = sweep_metrics(store, sid)
    assert (item.param, item.workload, item.metric, item.numeric) == (
        "workload.udp.length",
        "udp",
        "jitter_ms",
        True,
    )
    by_arch = {c.architecture: c for c in item.curves}
    bridge, p4 = by_arch["bridge"], by_arch["p4"]
    assert [p.x for p in bridge.points] == [64, 512, 1400]
    assert bridge.points[0].stats.mean == pytest.approx(0.1 + 0.064 + 0.002)
    # fit over every run: slope 0.001 (bridge), 0.002 (p4), exact in x
    assert bridge.fit.b == pytest.approx(0.001) and p4.fit.b == pytest.approx(0.002)
    assert bridge.fit.a == pytest.approx(0.102)
    # p4 vs bridge at each of the 3 points, Holm over the 3
    ps = [p.p for p in p4.points]
    assert all(p is not None for p in ps)
    from sdnperf.report.stats import holm

    assert [p.p_holm for p in p4.points] == pytest.approx(holm(ps))
    assert all(h >= p for h, p in zip((p.p_holm for p in p4.points), ps))
    assert all(p.diff.verdict == "worse" for p in p4.points)
    assert all(p.p is None for p in bridge.points)  # the baseline is not compared with itself


def test_architecture_without_the_parameter_is_flat(tmp_path):
    store, sid = build(tmp_path)
    store.record_run(
        sid,
        RunResult(
            key="pp",
            topology="line",
            architecture="p4",
            workload="rec",
            repetition=1,
            params={},
            status="ok",
            point={"architecture.p4.passes": 2},
            summaries=[Summary("rec", "rtt_ms", 2.0, "ms")],
        ),
    )
    store.record_run(
        sid,
        RunResult(
            key="pb",
            topology="line",
            architecture="bridge",
            workload="rec",
            repetition=1,
            params={},
            status="ok",
            summaries=[Summary("rec", "rtt_ms", 1.0, "ms")],
        ),
    )
    items = {i.param: i for i in sweep_metrics(store, sid)}
    rec = items["architecture.p4.passes"]
    assert [c.architecture for c in rec.curves] == ["p4"]
    assert [(f.architecture, f.stats.mean) for f in rec.flats] == [("bridge", 1.0)]


def test_several_topologies_make_panels_and_the_html_has_sweeps_and_provenance(tmp_path):
    store, sid = build(tmp_path, topologies=("line", "grid"))
    (item,) = sweep_metrics(store, sid)
    assert item.topologies == ["line", "grid"] and len(item.curves) == 4
    png = sweep_figure(item, tmp_path / "png", {"bridge": "C0", "p4": "C1"}, "test")
    assert png.exists() and png.stat().st_size > 10_000
    html = write_report(store, sid, tmp_path / "r.html").read_text()
    assert "<h2>Sweeps</h2>" in html and "p (Holm)" in html and "y = a + b·x" in html
    assert "<h2>Provenance</h2>" in html and "f00d" in html and "random (seed 3)" in html
    assert "grid" in html and "line" in html


def test_log_axes_only_when_values_span_decades():
    assert spans_decades([10, 100, 1000]) and not spans_decades([64, 512, 1400])
    assert not spans_decades([0, 10, 1000])  # zero cannot go on a log axis


def test_a_study_without_sweeps_has_no_curves(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    sid = store.open_study("s", "", {}, {})
    store.record_run(
        sid,
        RunResult(
            key="a",
            topology="t",
            architecture="bridge",
            workload="w",
            repetition=1,
            params={},
            status="ok",
            summaries=[Summary("w", "rtt_ms", 1.0, "ms")],
        ),
    )
    assert sweep_metrics(store, sid) == []
    html = write_report(store, sid, tmp_path / "r.html").read_text()
    assert "<h2>Sweeps</h2>" not in html and "No provenance was recorded" in html


def test_several_topologies_without_sweeps_get_small_multiples(tmp_path):
    from sdnperf.report.sweep_plots import topology_panels

    store = Store(tmp_path / "s.sqlite")
    sid = store.open_study("s", "", {}, {})
    for n, (topology, arch, value) in enumerate(
        [("line", "bridge", 1.0), ("line", "p4", 2.0), ("grid", "bridge", 1.5), ("grid", "p4", 2.5)]
    ):
        store.record_run(
            sid,
            RunResult(
                key=f"k{n}",
                topology=topology,
                architecture=arch,
                workload="ping",
                repetition=1,
                params={},
                status="ok",
                summaries=[Summary("ping", "rtt_ms", value, "ms")],
            ),
        )
    ((png, caption),) = topology_panels(store, sid, tmp_path, {}, "c", ["bridge", "p4"])
    assert png.exists() and "one panel per topology" in caption
    html = write_report(store, sid, tmp_path / "r.html").read_text()
    assert "<h2>Topologies</h2>" in html and "<h2>Sweeps</h2>" not in html


def test_comparison_table_splits_points_and_adds_holm(tmp_path):
    from rich.console import Console

    from sdnperf.report.stats import holm
    from sdnperf.report.table import comparison, render_table

    store, sid = build(tmp_path)
    rows = [r for r in comparison(store, sid) if r.metric == "jitter_ms"]
    assert [r.topology for r in rows if r.architecture == "p4"] == [
        "line · workload.udp.length=64",
        "line · workload.udp.length=512",
        "line · workload.udp.length=1400",
    ]
    tested = [r for r in rows if r.p is not None]
    assert [r.p_holm for r in tested] == pytest.approx(holm([r.p for r in tested]))
    console = Console(width=200, record=True)
    render_table(rows, console)
    assert "p Holm" in console.export_text()
    # a single point: the table stays as it was
    single = Store(tmp_path / "one.sqlite")
    one = single.open_study("one", "", {}, {})
    for n, arch in enumerate(("bridge", "p4", "bridge", "p4")):
        single.record_run(
            one,
            RunResult(
                key=f"k{n}",
                topology="t",
                architecture=arch,
                workload="w",
                repetition=n,
                params={},
                status="ok",
                summaries=[Summary("w", "rtt_ms", 1.0 + n, "ms")],
            ),
        )
    assert all(r.p_holm is None for r in comparison(single, one))


def test_no_figure_for_one_value_or_one_result_but_the_table_stays(tmp_path):
    store, sid = build(tmp_path)
    for rep in (1, 2):  # a second workload: one value of the parameter, and a constant metric
        store.record_run(
            sid,
            RunResult(
                key=f"one{rep}",
                topology="line",
                architecture="bridge",
                workload="tcp",
                repetition=rep,
                params={},
                status="ok",
                point={"workload.udp.length": 64},
                summaries=[Summary("tcp", "throughput_mbps", 90.0 + rep, "Mbit/s")],
            ),
        )
    for n, length in enumerate((64, 512)):
        store.record_run(
            sid,
            RunResult(
                key=f"zero{n}",
                topology="line",
                architecture="bridge",
                workload="ping",
                repetition=1,
                params={},
                status="ok",
                point={"workload.udp.length": length},
                summaries=[Summary("ping", "loss_pct", 0.0, "%")],
            ),
        )
    items = {i.workload: i for i in sweep_metrics(store, sid)}
    one, zero, drawn = items["tcp"], items["ping"], items["udp"]
    assert no_figure_reason(one) == (
        "No figure: workload.udp.length took one value in these runs (64)."
    )
    assert no_figure_reason(zero) == "No figure: every run gave the same value (0 %)."
    assert no_figure_reason(drawn) is None
    assert sweep_figure(one, tmp_path / "png", {}, "") is None
    assert sweep_figure(zero, tmp_path / "png", {}, "") is None
    html = write_report(store, sid, tmp_path / "r.html").read_text()
    assert 'alt="sweep_workload.udp.length_udp_jitter_ms"' in html
    assert (
        "sweep_workload.udp.length_tcp" not in html and "sweep_workload.udp.length_ping" not in html
    )
    for reason in (no_figure_reason(one), no_figure_reason(zero)):
        assert f"{reason} The table has its runs." in html
    # the one value's section and table (mean of 91 and 92) stay
    assert "<h3>tcp: throughput_mbps vs <code>workload.udp.length</code></h3>" in html
    assert "91.5" in html


def test_zipped_partners_make_one_curve_and_one_figure(tmp_path):
    """workload-complexity zips the UDP size with its bit rate (one packet rate): each
    architecture is one curve over the zipped points (the partner is not another curve),
    and the partner's figure, the same runs against other labels, is left to the first."""
    spec = {
        "study": {"baseline": "bridge"},
        "sweep": [
            {"param": "workload.udp.length", "values": [64, 512], "mode": "zip", "fit": "linear"},
            {"param": "workload.udp.rate", "values": ["1M", "8M"], "mode": "zip"},
        ],
    }
    store = Store(tmp_path / "z.sqlite")
    sid = store.open_study("z", "z.toml", spec, {})
    n = 0
    # recorded rate first: the study's order, not the store's, picks the figure drawn
    for length, rate in ((64, "1M"), (512, "8M")):
        for arch, value in (("bridge", 0.1 + 0.001 * length), ("p4", 0.2 + 0.002 * length)):
            n += 1
            store.record_run(
                sid,
                RunResult(
                    key=f"k{n}",
                    topology="line",
                    architecture=arch,
                    workload="udp",
                    repetition=1,
                    params={},
                    status="ok",
                    point={"workload.udp.rate": rate, "workload.udp.length": length},
                    summaries=[Summary("udp", "jitter_ms", value, "ms", "lower")],
                ),
            )
    items = {i.param: i for i in sweep_metrics(store, sid)}
    length, rate = items["workload.udp.length"], items["workload.udp.rate"]
    assert [(c.architecture, c.rest, [p.x for p in c.points]) for c in length.curves] == [
        ("bridge", (), [64, 512]),
        ("p4", (), [64, 512]),
    ]
    assert length.curves[0].fit.b == pytest.approx(0.001)
    assert (length.same_runs_as, rate.same_runs_as) == (None, "workload.udp.length")
    assert no_figure_reason(length) is None
    assert "zipped with workload.udp.length" in no_figure_reason(rate)
    html = write_report(store, sid, tmp_path / "z.html").read_text()
    assert 'alt="sweep_workload.udp.length_udp_jitter_ms"' in html
    assert "sweep_workload.udp.rate_udp" not in html
