"""The HTML report: self-contained, with table, marks, plots, failures and definitions."""

from __future__ import annotations

import re

from sdnperf.report.html import write_report
from sdnperf.report.table import CPU_MARK
from sdnperf.samples import RunResult
from sdnperf.store import Store

from .test_report_data import CPU_BOUND_KEY, CPU_REASON, FAILED_KEY, build_study


def report_of_synthetic(tmp_path) -> str:
    store, sid = build_study(tmp_path / "s.db")
    path = write_report(store, sid, tmp_path / "out" / "report.html")
    store.close()
    assert path == tmp_path / "out" / "report.html"
    return path.read_text(encoding="utf-8")


def test_report_has_plots_table_and_marks(tmp_path):
    page = report_of_synthetic(tmp_path)
    images = re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', page)
    assert len(images) >= 3
    assert "<th>mean ± 95 % CI</th>" in page and "<th>Δ vs bridge</th>" in page
    assert "bridge (baseline)" in page and "(worse)" in page and "(better)" in page
    assert CPU_MARK in page and CPU_REASON in page and CPU_BOUND_KEY in page


def test_report_is_self_contained(tmp_path):
    page = report_of_synthetic(tmp_path)
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "http://" not in page and "https://" not in page
    assert "<style>" in page and "<link" not in page and "<script" not in page


def test_report_lists_environment_failures_and_definitions(tmp_path):
    page = report_of_synthetic(tmp_path)
    for text in (
        "<th>kernel</th><td>6.1.0-test</td>",
        "<th>netem</th><td>no</td>",
        "<th>tools.iperf3</th><td>3.12</td>",
        "<th>datapath</th><td>netdev</td>",
    ):
        assert text in page
    assert FAILED_KEY in page and "unable to connect to server" in page
    assert "How to read this" in page
    for metric in ("rtt_ms", "rtt_first_ms", "throughput_mbps", "bytes"):
        assert f"<dt>{metric} (" in page


def test_report_escapes_names_and_errors(tmp_path):
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("<script>x</script>", "a&b.toml", {}, {"note": "<b>"})
        store.record_run(
            sid,
            RunResult("k", "t", "a<1>", "w", 0, {}, "failed", error="Traceback <module> & friends"),
        )
        page = write_report(store, sid, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "Traceback &lt;module&gt; &amp; friends" in page
    assert "Not drawn" in page  # no samples at all: every figure is explained, none drawn


def test_emulator_bound_runs_have_their_section_and_mark(tmp_path):
    from sdnperf.report.table import EMU_MARK
    from sdnperf.samples import CpuReport, Summary

    reason = "one switch took 6.33 ms to forward a packet"
    with Store(tmp_path / "s.db") as store:
        sid = store.open_study("grid", "g.toml", {}, {})
        store.record_run(
            sid,
            RunResult(
                "g|ovs|ping|1",
                "grid",
                "ovs",
                "ping",
                1,
                {},
                "ok",
                summaries=[Summary("ping", "rtt_ms", 25.3, "ms")],
                cpu=CpuReport(switch_ms=6.33, emulator_bound=True, emulator_reason=reason),
            ),
        )
        page = write_report(store, sid, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Emulator-bound runs</h2>" in page and "6.33 ms" in page and reason in page
    assert EMU_MARK in page and "g|ovs|ping|1" in page
    assert "<h2>CPU-bound runs</h2><p>None" in page  # the two marks stay apart
