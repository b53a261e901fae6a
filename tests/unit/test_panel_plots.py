"""Panels per topology (000 Figs 5, 6, 8) and a mix's members per architecture (000 Figs
10a-b, 12a-b): what each panel holds, checked on a synthetic store."""

from __future__ import annotations

from sdnperf.report import panel_plots, plots
from sdnperf.samples import RunResult, Sample
from sdnperf.store import Store
from sdnperf.studies.figure_map import report_kinds

PNG = b"\x89PNG\r\n\x1a\n"


def _run(store, sid, topo, arch, workload, samples, status="ok"):
    store.record_run(
        sid,
        RunResult(
            f"{topo}|{arch}|{workload}|0", topo, arch, workload, 0, {}, status, samples=samples
        ),
    )


def _tput(workload, flow, values):
    return [
        Sample(workload, "throughput_mbps", v, "Mbit/s", flow, "", 1.0 + i, i)
        for i, v in enumerate(values)
    ]


def test_throughput_by_topology_sums_flows_per_topology(tmp_path):

    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("t", "", {"study": {"baseline": "openflow"}}, {})
        _run(store, sid, "grid", "p4", "udp", _tput("udp", "a", [5, 6]) + _tput("udp", "b", [1, 1]))
        _run(store, sid, "transit-stub", "p4", "udp", _tput("udp", "a", [9, 9]))
        _run(store, sid, "grid", "openflow", "udp", _tput("udp", "a", [3, 3]))
        path = panel_plots.throughput_by_topology(store, sid, tmp_path, "udp", "openflow")
        assert path is not None and path.name == "throughput_by_topology_udp.png"
        assert path.read_bytes()[:8] == PNG
        # the sums per panel, through the same series the figure draws
        grid = panel_plots.series.throughput_over_time(
            store, sid, "udp", "throughput_mbps", "sum", "grid"
        )
        assert list(grid["p4"].mean) == [6.0, 7.0] and list(grid["openflow"].mean) == [3.0, 3.0]
        assert panel_plots._topologies(store, sid, "udp", "throughput_mbps") == [
            "grid",
            "transit-stub",
        ]
        assert panel_plots.throughput_by_topology(store, sid, tmp_path, "none") is None


def test_members_over_time_has_a_line_per_member_and_a_panel_per_architecture(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("t", "", {"study": {"baseline": "openflow"}}, {})
        for arch, scale in (("openflow", 1.0), ("p4", 2.0)):
            samples = (
                _tput("mix/tcp", "h1->h5", [10 * scale, 10 * scale])
                + _tput("mix/udp", "h3->h7", [scale, scale])
                + _tput("mix/udp", "h4->h8", [scale, scale])
            )
            _run(store, sid, "grid", arch, "mix", samples)
        # another topology's runs do not reach the grid's figure
        _run(store, sid, "transit-stub", "p4", "mix", _tput("mix/tcp", "x", [99, 99]))
        path = panel_plots.members_over_time(store, sid, tmp_path, "mix", "grid", "openflow")
        assert path is not None and path.name == "members_mix_grid.png"
        assert path.read_bytes()[:8] == PNG
        assert panel_plots.members_over_time(store, sid, tmp_path, "mix", "ring") is None
        # through the report's provider: one figure per plain workload and per mix topology
        out = plots.all_plots(store, sid, tmp_path / "png", "openflow")
        names = {p.name for p in out.paths}
        assert {"members_mix_grid.png", "members_mix_transit-stub.png"} <= names


def test_kinds_are_registered_with_the_stems_the_figures_save():
    kinds = report_kinds()
    assert kinds["throughput-by-topology"].name({"workload": "tcp"}) == "throughput_by_topology_tcp"
    assert kinds["members-over-time"].name({"workload": "mix", "topology": "grid"}) == (
        "members_mix_grid"
    )
    # metric_over_time saves "{metric}_over_time_{workload}"; a mix member's "/" becomes "_"
    assert (
        kinds["metric-over-time"].name({"metric": "jitter_ms", "workload": "mix/udp"})
        == "jitter_ms_over_time_mix_udp"
    )
