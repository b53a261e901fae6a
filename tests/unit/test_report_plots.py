"""Plots: the figures the data allows, skipped ones with a reason, and their data."""

from __future__ import annotations

import numpy as np
import pytest

from sdnperf.report import panel_plots, plots, series
from sdnperf.samples import RunResult, Sample, Summary
from sdnperf.store import Store

from .test_report_data import build_study

PNG = b"\x89PNG\r\n\x1a\n"
assert panel_plots.panel_figures in plots.PLOT_PROVIDERS  # the figures below include its own


@pytest.fixture
def study(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    yield store, sid
    store.close()


def test_all_plots_draws_every_figure_of_the_synthetic_study(study, tmp_path):
    out = plots.all_plots(*study, tmp_path / "png", baseline="bridge")
    names = sorted(p.name for p in out.paths)
    assert names == [
        "cpu_per_role.png",
        "rtt_bars_ping.png",
        "rtt_cdf_ping.png",
        "rtt_first_vs_steady_ping.png",
        "throughput_by_topology_tcp.png",  # panel_plots' provider (registered on import)
        "throughput_tcp.png",
    ]
    assert out.skipped == []
    for path, caption in out.figures:
        assert path.read_bytes()[:8] == PNG and path.stat().st_size > 5000
        assert caption


def test_missing_metrics_are_skipped_with_reasons(tmp_path, caplog):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("only-tcp", "", {}, {})
        store.record_run(
            sid,
            RunResult(
                "t|a|tcp|0",
                "t",
                "a",
                "tcp",
                0,
                {},
                "ok",
                samples=[
                    Sample("tcp", "throughput_mbps", 10.0 + i, "Mbit/s", "h1->h2", "", i, i)
                    for i in range(3)
                ],
                summaries=[Summary("tcp", "throughput_mbps", 11.0, "Mbit/s", "higher")],
            ),
        )
        caplog.set_level("INFO", logger="sdnperf.report.plots")
        out = plots.all_plots(store, sid, tmp_path / "png")
        assert [p.name for p in out.paths] == [
            "throughput_tcp.png",
            "throughput_by_topology_tcp.png",  # panel_plots' provider
        ]
        assert any("RTT" in s and "rtt_ms" in s for s in out.skipped)
        assert any("CPU" in s for s in out.skipped)
        assert "plot skipped" in caplog.text
        assert plots.rtt_bars(store, sid, tmp_path / "png", "tcp") is None


def test_first_vs_steady_needs_cold_samples(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        store.record_run(
            sid,
            RunResult(
                "t|a|ping|0",
                "t",
                "a",
                "ping",
                0,
                {},
                "ok",
                samples=[
                    Sample("ping", "rtt_ms", 1.0, "ms", "h1->h2", "steady", i, i) for i in range(3)
                ],
            ),
        )
        assert plots.first_vs_steady(store, sid, tmp_path, "ping") is None
        assert plots.rtt_bars(store, sid, tmp_path, "ping") is not None


def test_throughput_series_sums_flows_and_spans_runs(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        for rep, base in enumerate([10.0, 20.0]):
            store.record_run(
                sid,
                RunResult(
                    f"t|a|tcp|{rep}",
                    "t",
                    "a",
                    "tcp",
                    rep,
                    {},
                    "ok",
                    samples=[
                        Sample("tcp", "throughput_mbps", base + t, "Mbit/s", flow, "", t, t)
                        for flow in ("f1", "f2")
                        for t in (1.0, 2.0)
                    ],
                ),
            )
        store.record_run(
            sid,
            RunResult(  # a failed run's samples stay out of the figures
                "t|a|tcp|2",
                "t",
                "a",
                "tcp",
                2,
                {},
                "failed",
                error="x",
                samples=[Sample("tcp", "throughput_mbps", 999.0, "Mbit/s", "f1", "", 1.0, 1)],
            ),
        )
        ts = series.throughput_over_time(store, sid, "tcp")["a"]
    assert list(ts.t) == [1.0, 2.0]
    # run 0: 2·11, 2·12; run 1: 2·21, 2·22
    assert np.allclose(ts.mean, [32.0, 34.0])
    assert np.allclose(ts.low, [22.0, 24.0]) and np.allclose(ts.high, [42.0, 44.0])
    assert ts.runs == 2 and ts.flows == 2 and ts.unit == "Mbit/s"


def test_throughput_series_matches_flows_by_interval_not_time_stamp(tmp_path):
    """Concurrent clients start a few ms apart: their intervals still add up."""
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        store.record_run(
            sid,
            RunResult(
                "t|a|tcp|0",
                "t",
                "a",
                "tcp",
                0,
                {},
                "ok",
                samples=[
                    Sample("tcp", "throughput_mbps", 5.0, "Mbit/s", flow, "", i + 1 + offset, i)
                    for flow, offset in (("f1", 0.01), ("f2", 0.03))
                    for i in range(3)
                ],
            ),
        )
        ts = series.throughput_over_time(store, sid, "tcp")["a"]
    assert np.allclose(ts.mean, [10.0, 10.0, 10.0])
    assert np.allclose(ts.t, [1.02, 2.02, 3.02])


def test_per_run_means_split_cold_and_steady(study):
    cold, unit = series.per_run_means(*study, "ping", "rtt_ms", cold=True)
    steady, _ = series.per_run_means(*study, "ping", "rtt_ms", cold=False)
    assert unit == "ms" and set(cold) == {"bridge", "ovs", "openflow"}
    assert all(len(v) == 3 for v in cold.values())
    assert min(cold["bridge"]) > max(steady["bridge"])


def test_conditions_line(study):
    text = series.conditions(*study)
    assert text == "campus, n=3 repetitions, 1 CPU-bound run, 1 failed run excluded"


def test_architecture_order_puts_the_baseline_first(study):
    assert series.architectures(*study, "openflow") == ["openflow", "bridge", "ovs"]


def test_registered_plot_providers_add_figures_and_a_failing_one_is_skipped(
    study, tmp_path, monkeypatch
):
    store, study_id = study
    monkeypatch.setattr(plots, "PLOT_PROVIDERS", [])
    seen = []

    @plots.register_plot_provider
    def extra(store, study_id, out_dir, add):
        seen.append(study_id)
        add(None, "", "extra: nothing to draw here")

    def broken(store, study_id, out_dir, add):
        raise ValueError("bad data")

    plots.register_plot_provider(broken)
    plots.register_plot_provider(extra)  # twice: still called once
    out = plots.all_plots(store, study_id, tmp_path / "png")
    assert seen == [study_id]
    assert "extra: nothing to draw here" in out.skipped
    assert any("broken" in s and "bad data" in s for s in out.skipped)


def test_jitter_over_time_is_the_mean_over_flows_per_architecture(tmp_path):
    """000 Figs 7/9/10/12: jitter per interval, one line per architecture; two flows with
    2 and 4 ms in an interval give 3 ms (a mean: summing jitter would say 6)."""
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("j", "", {}, {})
        for arch, base in (("p4", 2.0), ("openflow", 5.0)):
            samples = [
                Sample("udp", "jitter_ms", base + extra + i, "ms", flow, "", 1.0 + i, i)
                for flow, extra in (("h1->h5", 0.0), ("h2->h6", 2.0))
                for i in range(3)
            ]
            store.record_run(
                sid,
                RunResult(f"t|{arch}|udp|0", "t", arch, "udp", 0, {}, "ok", samples=samples),
            )
        data = series.throughput_over_time(store, sid, "udp", "jitter_ms", combine="mean")
        assert list(data["p4"].mean) == [3.0, 4.0, 5.0]
        assert list(data["openflow"].mean) == [6.0, 7.0, 8.0]
        assert data["p4"].flows == 2
        summed = series.throughput_over_time(store, sid, "udp", "jitter_ms")
        assert list(summed["p4"].mean) == [6.0, 8.0, 10.0]
        out = plots.all_plots(store, sid, tmp_path / "png")
        assert "jitter_ms_over_time_udp.png" in [p.name for p in out.paths]
        assert plots.metric_over_time(store, sid, tmp_path, "udp", "tcp_rtt_ms") is None


def test_metric_over_time_has_a_panel_per_topology(tmp_path):
    """000's figures have a panel per topology (a: multi-path, b: grid, c: Internet)."""
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("j", "", {}, {})
        for topo, base in (("grid", 1.0), ("transit-stub", 9.0)):
            samples = [
                Sample("udp", "jitter_ms", base + i, "ms", "a", "", 1.0 + i, i) for i in range(2)
            ]
            store.record_run(
                sid, RunResult(f"{topo}|p4|udp|0", topo, "p4", "udp", 0, {}, "ok", samples=samples)
            )
        grid = series.throughput_over_time(store, sid, "udp", "jitter_ms", "mean", "grid")
        assert list(grid["p4"].mean) == [1.0, 2.0]  # the other topology's runs are not mixed in
        path = plots.metric_over_time(store, sid, tmp_path, "udp", "jitter_ms")
        assert path is not None and path.read_bytes()[:8] == PNG


def test_each_figure_is_drawn_once_with_the_pixels_savefig_gives(study, tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    draws: list[int] = []
    draw = Figure.draw
    monkeypatch.setattr(
        Figure, "draw", lambda fig, renderer: draws.append(1) or draw(fig, renderer)
    )
    out = plots.all_plots(*study, tmp_path / "png", baseline="bridge")
    assert len(out.paths) >= 5 and len(draws) == len(out.paths)  # savefig: two draws each

    # the same figure through savefig (two layouts) and save_png (one): the same image
    def figure():
        fig, ax = plots._figure()
        ax.plot([1, 2, 3], [3, 1, 2], label="a long label for the layout to make room for")
        ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
        plots._title(ax, "RTT", *study)
        return fig

    figure().savefig(tmp_path / "savefig.png", dpi=plots.DPI)
    plots.save_png(figure(), tmp_path / "once.png")
    before, after = imread(tmp_path / "savefig.png"), imread(tmp_path / "once.png")
    assert before.shape == after.shape == (450, 800, 4)
    assert np.array_equal(before, after)
