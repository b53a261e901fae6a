"""`sdnperf calibrate`'s arithmetic and records (fidelity/calibration.py), on synthetic runs."""

from __future__ import annotations

import json
import math

from sdnperf.fidelity import calibration
from sdnperf.samples import CpuReport, RunResult, Summary
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs


def run(summaries, links=(), status="ok"):
    return RunResult(
        key="k",
        topology="t",
        architecture="p4",
        workload="w",
        repetition=1,
        params={},
        status=status,
        summaries=[Summary("w", m, v, "") for m, v in summaries],
        cpu=CpuReport(links=list(links)),
    )


def test_per_link_loss_from_a_path_of_lossy_directions():
    # four directions at 1 % each: 1 - 0.99^4 = 3.94 % over the round trip
    assert math.isclose(calibration.per_link_loss_pct(100 * (1 - 0.99**4)), 1.0)
    assert calibration.per_link_loss_pct(0.0) == 0.0
    assert calibration.per_link_loss_pct(100.0) == 100.0


def test_every_calibration_study_is_a_valid_study(tmp_path):
    for kind in calibration.DEFAULT_ARCHITECTURES:
        loaded = load_study_text(calibration.study_text(kind, 10, 2, 1), "c.toml", tmp_path)
        assert [r.workload.name for r in plan_runs(loaded)] == ["rate", "delay"]
        link = next(iter(loaded.topology.links()))
        assert (link.bw, link.delay_ms, link.loss_pct) == (10, 2, 1)
    plain = load_study_text(calibration.study_text("bridge", 10, None, None), "c.toml", tmp_path)
    assert not plain.topology.needs_netem()


def test_summarize_puts_configured_next_to_achieved():
    rate = run(
        [("throughput_mbps", 9.7)],
        links=[{"link": "s1-h3", "measured": {"rate_mbit": 10.02, "loss_pct": 1.1}}],
    )
    delay = run([("rtt_min_ms", 8.4), ("loss_pct", 100 * (1 - 0.99**4))])
    record = calibration.summarize(
        "p4", {"rate_mbit": 10, "delay_ms": 2, "loss_pct": 1}, rate, delay
    )
    assert record["achieved"] == {
        "rate_mbit": 9.7,
        "rate_share": 0.97,
        "port_rate_mbit": 10.02,
        "delay_ms": 2.1,
        "excess_rtt_ms": 0.4,
        "loss_pct": 1.0,
        "port_loss_pct": 1.1,
    }
    assert record["link_breaches"] == [] and record["errors"] == []
    lines = calibration.render({"architectures": [record]})
    assert lines == [
        "p4: rate 10 Mbit/s; port sent 10.02 Mbit/s while backlogged; receiver goodput 9.7 "
        "Mbit/s; delay 2 -> 2.1 ms per link; loss 1 -> 1 % per link; port counters 1.1 %"
    ]


def test_a_failed_or_missing_run_is_said_not_invented():
    record = calibration.summarize(
        "bridge", {"rate_mbit": 10}, run([], status="failed"), None, ["no sch_netem"]
    )
    assert record["achieved"] == {} and record["notes"] == ["no sch_netem"]
    assert calibration.render({"architectures": [record]})[0] == (
        "bridge: rate 10 Mbit/s; receiver goodput — Mbit/s"
    )


def test_the_record_is_found_where_provenance_reads_it(tmp_path, monkeypatch):
    path = tmp_path / "cal.json"
    monkeypatch.setenv("SDNPERF_CALIBRATION", str(path))
    assert calibration.calibration_path() == path
    assert calibration.load_calibration() is None
    path.write_text(json.dumps({"architectures": []}))
    assert calibration.load_calibration() == {"architectures": []}


def test_a_studys_provenance_carries_the_hosts_calibration(tmp_path, monkeypatch):
    from sdnperf.fidelity.provenance import collect_provenance

    loaded = load_study_text(calibration.study_text("p4", 10, 2, 1), "c.toml", tmp_path)
    monkeypatch.setenv("SDNPERF_CALIBRATION", str(tmp_path / "none.json"))
    assert collect_provenance(loaded, plan_runs(loaded), {})["calibration"] is None
    (tmp_path / "cal.json").write_text(json.dumps({"architectures": [{"architecture": "p4"}]}))
    monkeypatch.setenv("SDNPERF_CALIBRATION", str(tmp_path / "cal.json"))
    prov = collect_provenance(loaded, plan_runs(loaded), {})
    assert prov["calibration"] == {"architectures": [{"architecture": "p4"}]}
