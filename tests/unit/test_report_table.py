"""The comparison table: rows, Δ% wording, significance, CPU and failed-run marks."""

from __future__ import annotations

import pytest
from rich.console import Console

from sdnperf.report.table import CPU_MARK, RECORD_COLUMNS, comparison, footnotes, render_table
from sdnperf.samples import RunResult, Summary
from sdnperf.store import Store

from .test_report_data import CPU_BOUND_KEY, CPU_REASON, REPS, build_study


@pytest.fixture
def study(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    yield store, sid
    store.close()


def cell(rows, workload, metric, arch):
    (row,) = [r for r in rows if (r.workload, r.metric, r.architecture) == (workload, metric, arch)]
    return row


def test_one_row_per_workload_metric_architecture_baseline_first(study):
    rows = comparison(*study, baseline="bridge")
    keys = [(r.workload, r.metric, r.architecture) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * 2 * 3  # (ping: 2 metrics, tcp: 2) × 3 archs
    assert keys[:3] == [
        ("ping", "rtt_ms", "bridge"),
        ("ping", "rtt_ms", "ovs"),
        ("ping", "rtt_ms", "openflow"),
    ]
    base = cell(rows, "ping", "rtt_ms", "bridge")
    assert base.is_baseline and base.diff is None and base.test is None
    assert base.n == REPS and base.stats.half_width > 0


def test_lower_is_better_metric_reads_worse_when_higher(study):
    row = cell(comparison(*study, "bridge"), "ping", "rtt_ms", "openflow")
    assert row.diff.pct > 150 and row.diff.verdict == "worse"
    assert row.record()["diff"].startswith("+") and row.record()["diff"].endswith("(worse)")
    assert row.p < 0.001 and row.significance == "***"


def test_higher_is_better_metric_reads_better_when_higher(study):
    row = cell(comparison(*study, "bridge"), "tcp", "throughput_mbps", "openflow")
    assert row.better == "higher"
    assert row.diff.pct > 0 and row.diff.verdict == "better"
    assert row.record()["diff"].endswith("(better)")


def test_choosing_another_baseline_flips_the_verdict(study):
    row = cell(comparison(*study, "openflow"), "ping", "rtt_ms", "bridge")
    assert row.diff.pct < 0 and row.diff.verdict == "better"


def test_baseline_defaults_to_the_study_spec(study):
    rows = comparison(*study, baseline=None)
    assert [r.architecture for r in rows if r.is_baseline] == ["bridge"] * 4


def test_unknown_baseline_names_the_architectures(study):
    with pytest.raises(ValueError, match="'p4'.*bridge, ovs, openflow"):
        comparison(*study, "p4")


def test_failed_runs_are_counted_not_dropped(study):
    rows = comparison(*study, "bridge")
    row = cell(rows, "tcp", "throughput_mbps", "openflow")
    assert row.failed == 1 and row.n == REPS - 1
    assert cell(rows, "tcp", "throughput_mbps", "bridge").failed == 0
    assert any("failed" in note for note in footnotes(rows))


def test_cpu_bound_mark_and_footnote_with_reason(study):
    rows = comparison(*study, "bridge")
    marked = {(r.workload, r.metric, r.architecture) for r in rows if r.cpu_mark}
    assert marked == {("ping", "rtt_ms", "openflow"), ("ping", "rtt_first_ms", "openflow")}
    row = cell(rows, "ping", "rtt_ms", "openflow")
    assert row.cpu_mark == CPU_MARK and row.cpu_bound_runs == [CPU_BOUND_KEY]
    notes = "\n".join(footnotes(rows))
    assert CPU_MARK in notes and CPU_REASON in notes and CPU_BOUND_KEY in notes


def test_architecture_whose_runs_all_failed_still_has_rows(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        for rep in range(2):
            store.record_run(
                sid,
                RunResult(
                    f"t|bridge|ping|{rep}",
                    "t",
                    "bridge",
                    "ping",
                    rep,
                    {},
                    "ok",
                    summaries=[Summary("ping", "rtt_ms", 1.0 + rep, "ms")],
                ),
            )
            store.record_run(
                sid,
                RunResult(
                    f"t|openflow|ping|{rep}",
                    "t",
                    "openflow",
                    "ping",
                    rep,
                    {},
                    "failed",
                    error="controller did not start",
                ),
            )
        store.record_run(
            sid, RunResult("t|openflow|tcp|0", "t", "openflow", "tcp", 0, {}, "failed", error="x")
        )
        rows = comparison(store, sid, None)
    of = cell(rows, "ping", "rtt_ms", "openflow")
    assert of.n == 0 and of.failed == 2 and of.diff.pct is None
    nothing = cell(rows, "tcp", "", "openflow")  # no metric at all: a placeholder row
    assert nothing.failed == 1 and nothing.record()["label"] == "(no data)"


def test_single_repetition_has_no_ci_and_says_so(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        for arch, v in [("a", 1.0), ("b", 2.0)]:
            store.record_run(
                sid,
                RunResult(
                    f"t|{arch}|w|0",
                    "t",
                    arch,
                    "w",
                    0,
                    {},
                    "ok",
                    summaries=[Summary("w", "rtt_ms", v, "ms")],
                ),
            )
        rows = comparison(store, sid, "a")
    assert rows[0].stats.half_width is None and "n=1" in rows[0].stats.note
    assert rows[1].p is None and rows[1].diff.pct == pytest.approx(100.0)
    assert any(note.startswith("n=1") for note in footnotes(rows))


def test_records_are_plain_data(study):
    recs = [r.record() for r in comparison(*study, "bridge")]
    assert list(recs[0]) == RECORD_COLUMNS
    assert all(
        isinstance(v, (str, int, float, bool, type(None))) for rec in recs for v in rec.values()
    )
    of = [r for r in recs if r["architecture"] == "openflow" and r["metric"] == "rtt_ms"][0]
    assert of["cpu_mark"] == CPU_MARK and " ± " in of["mean_ci"]


def test_render_table_prints_rows_marks_and_footnotes(study):
    console = Console(record=True, width=200)
    rows = comparison(*study, "bridge")
    render_table(rows, console)
    text = console.export_text()
    assert "baseline" in text and "throughput_mbps" in text
    assert CPU_MARK in text and CPU_REASON in text
    assert "(worse)" in text and "(better)" in text


@pytest.mark.parametrize("width", [60, 100, 120])
def test_narrow_terminal_keeps_every_number(study, width):
    console = Console(record=True, width=width)
    rows = comparison(*study, "bridge")
    render_table(rows, console)
    lines = console.export_text().splitlines()
    for row in rows:
        rec = row.record()
        (line,) = [ln for ln in lines if rec["mean_ci"] in ln]
        assert row.unit in line
        if row.diff:
            assert row.diff.words() in line and rec["p_text"] in line
        assert row.cpu_mark in line


def test_rows_never_mix_topologies(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("s", "", {}, {})
        for topo, scale in [("single", 1.0), ("campus", 10.0)]:
            for arch, factor in [("bridge", 1.0), ("openflow", 2.0)]:
                for rep in range(3):
                    store.record_run(
                        sid,
                        RunResult(
                            f"{topo}|{arch}|ping|{rep}",
                            topo,
                            arch,
                            "ping",
                            rep,
                            {},
                            "ok",
                            summaries=[
                                Summary("ping", "rtt_ms", scale * factor + 0.01 * rep, "ms")
                            ],
                        ),
                    )
        rows = comparison(store, sid, "bridge")
        console = Console(record=True, width=200)
        render_table(rows, console)
    assert [(r.topology, r.architecture, r.n) for r in rows] == [
        ("single", "bridge", 3),
        ("single", "openflow", 3),
        ("campus", "bridge", 3),
        ("campus", "openflow", 3),
    ]
    assert all(r.diff.pct == pytest.approx(100.0, rel=0.01) for r in rows if not r.is_baseline)
    assert "topology" in console.export_text()


def test_number_formatting():
    from sdnperf.report import fmt

    assert fmt.mean_pm(12.3456, 0.5678) == "12.35 ± 0.57"
    assert fmt.mean_pm(561877170.0, 2830977.0) == "561.9M ± 2.8M"
    assert fmt.mean_pm(0.0390, 0.0) == "0.03900 ± 0"
    assert fmt.mean_pm(4.2, None) == "4.200"
    assert fmt.p_value(0.0004) == "<0.001" and fmt.p_value(0.01634) == "0.016"


def test_table_csv(study, tmp_path):
    import csv

    from sdnperf.report.table import write_csv

    rows = comparison(*study, "bridge")
    path = write_csv(rows, tmp_path / "out" / "comparison.csv")
    with path.open(newline="") as f:
        records = list(csv.DictReader(f))
    assert list(records[0]) == RECORD_COLUMNS and len(records) == len(rows)
    of = [r for r in records if r["architecture"] == "openflow" and r["metric"] == "rtt_ms"][0]
    assert of["verdict"] == "worse" and float(of["diff_pct"]) > 0 and of["cpu_mark"] == CPU_MARK
    base = [r for r in records if r["baseline"] == "True"][0]
    assert base["p"] == "" and base["diff"] == "baseline"


def test_metrics_follow_registry_order_and_can_be_chosen(study):
    rows = comparison(*study, "bridge")
    ping_metrics = [r.metric for r in rows if r.workload == "ping" and r.is_baseline]
    assert ping_metrics == ["rtt_ms", "rtt_first_ms"]  # stored first_ms first; registry wins
    short = comparison(*study, "bridge", only_metrics={"throughput_mbps"})
    assert [(r.metric, r.architecture, r.failed) for r in short] == [
        ("throughput_mbps", "bridge", 0),
        ("throughput_mbps", "ovs", 0),
        ("throughput_mbps", "openflow", 1),
    ]


def test_mixed_members_get_rows_counted_against_the_mix(tmp_path):
    from sdnperf.report.table import comparison
    from sdnperf.samples import RunResult, Summary
    from sdnperf.store.sqlite import Store

    store = Store(tmp_path / "mix.sqlite")
    sid = store.open_study("mix", None, {"study": {"baseline": "a"}}, {})
    for arch, value in (("a", 1.0), ("b", 2.0)):
        store.record_run(
            sid,
            RunResult(
                key=f"t|{arch}|mix|1",
                topology="t",
                architecture=arch,
                workload="mix",
                repetition=1,
                params={},
                status="ok",
                summaries=[
                    Summary("mix", "aggregate_mbps", 10 * value, "Mbit/s", "higher"),
                    Summary("mix/voip", "mos", value, "MOS", "higher"),
                ],
            ),
        )
    rows = comparison(store, sid)
    assert [(r.workload, r.metric, r.architecture) for r in rows] == [
        ("mix", "aggregate_mbps", "a"),
        ("mix", "aggregate_mbps", "b"),
        ("mix/voip", "mos", "a"),
        ("mix/voip", "mos", "b"),
    ]
    assert all(r.n == 1 for r in rows)


def test_emulator_bound_mark_and_footnote_beside_the_cpu_mark():
    from sdnperf.report.stats import MeanCI
    from sdnperf.report.table import EMU_FOOTNOTE, EMU_MARK, Row

    row = Row(
        "ping",
        "rtt_ms",
        "openflow",
        "ms",
        "lower",
        MeanCI(1, 1.0, None, None),
        0,
        False,
        emulator_bound_runs=["k1"],
        emulator_reasons={"k1": "one switch took 5.00 ms"},
    )
    assert row.cpu_mark == EMU_MARK
    assert row.record()["emulator_bound"] and row.record()["emulator_bound_runs"] == "k1"
    notes = footnotes([row])
    assert EMU_FOOTNOTE in notes and "  emulator-bound run k1: one switch took 5.00 ms" in notes
    assert CPU_MARK not in " ".join(notes)
    row.cpu_bound_runs, row.cpu_reasons = ["k1"], {"k1": "machine busy"}
    assert row.cpu_mark == f"{CPU_MARK} {EMU_MARK}"
