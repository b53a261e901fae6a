"""ctlbench: config validation, probe JSON → RunResult conversion, probe-bound judgement,
store round trip and the report's ctlbench figures (no controller, no probe binary)."""

from __future__ import annotations

import pytest

from sdnperf.ctlbench import config, convert, metrics
from sdnperf.ctlbench.runner import CEILING_ARCH
from sdnperf.ctlbench.study import CtlbenchStudy
from sdnperf.samples import CpuReport
from sdnperf.store import Store


def probe_doc(
    answered_rate=1000.0,
    sent=5000,
    answered=4990,
    lost=10,
    status="ok",
    disconnected=0,
    probe_cpu=20.0,
    slips=0,
    switches=2,
    mode="throughput",
):
    return {
        "schema": "sdnperf-probe/1",
        "protocol": "openflow13",
        "status": status,
        "config": {"switches": switches, "mode": mode},
        "switches": {
            "requested": switches,
            "ready": switches,
            "ready_at_end": switches - disconnected,
            "disconnected": disconnected,
            "failed_to_connect": 0,
        },
        "window_s": {"handshake": 0.05, "warmup": 1.0, "measure": 5.0, "drain": 1.0},
        "totals": {
            "sent": sent,
            "answered": answered,
            "lost": lost,
            "late": 0,
            "duplicates": 3,
            "unmatched": 0,
            "schedule_slips": slips,
            "controller_errors": 0,
            "sent_rate": sent / 5,
            "answered_rate": answered_rate,
            "offered_rate": 2000.0 if mode == "rate" else None,
            "loss_ratio": lost / sent,
            "fairness_jain": 0.98,
        },
        "rtt_us": {
            "count": answered,
            "min": 50.0,
            "mean": 900.0,
            "p50": 800.0,
            "p90": 1500.0,
            "p99": 3000.0,
            "p999": 4000.0,
            "max": 5000.0,
            "buckets": [[49.0, 51.0, 10], [780.0, 831.0, 4980]],
        },
        "probe_cpu": {"measure_pct": probe_cpu, "run_pct": probe_cpu, "threads": 1, "cores": 2},
        "series": {
            "interval_s": 1.0,
            "t": [0.0, 1.0, 2.0],
            "phase": ["warmup", "measure", "drain"],
            "sent": [900, 1000, 0],
            "answered": [890, 1000, 10],
            "outstanding": [10, 12, 0],
        },
        "errors": (
            [{"switch": 1, "dpid": 2, "at_s": 2.5, "error": "controller closed the connection"}]
            if disconnected
            else []
        ),
        "per_switch": [
            {
                "index": i,
                "dpid": i + 1,
                "series": {
                    "sent": [450, 500, 0],
                    "answered": [445, 500, 5],
                    "outstanding": [5, 6, 0],
                },
            }
            for i in range(switches)
        ],
    }


def convert_doc(doc, **kw):
    args = dict(
        key="k",
        controller="osken-l2-learning",
        mode="throughput",
        switches=2,
        rate=None,
        repetition=1,
        params={"switches": 2, "mode": "throughput"},
        cpu=CpuReport(),
    )
    args.update(kw)
    return convert.to_run_result(doc, **args)


def test_conversion_summaries_and_samples():
    usage = convert.ControllerUsage(
        cpu_measure_pct=55.0,
        cpu_series=[(0.25, 50.0), (0.75, 60.0)],
        rss_max_mb=80.0,
        rss_series=[(0.5, 80.0)],
    )
    r = convert_doc(probe_doc(), usage=usage, ceiling_pps=1_000_000.0)
    assert r.status == "ok" and not r.error
    assert (r.topology, r.workload, r.architecture) == (
        "2 switches",
        "ctlbench throughput",
        "osken-l2-learning",
    )
    s = {x.metric: x for x in r.summaries}
    assert s["ctl_answered_pps"].value == 1000.0 and s["ctl_answered_pps"].better == "higher"
    assert s["ctl_rtt_p50_ms"].value == pytest.approx(0.8)
    assert s["ctl_rtt_p99_ms"].value == pytest.approx(3.0)
    assert s["ctl_loss_pct"].value == pytest.approx(0.2)
    assert s["ctl_outstanding"].value == 12  # the measure-phase intervals only
    assert s["ctl_controller_cpu_pct"].value == 55.0
    assert s["ctl_controller_rss_mb"].value == 80.0
    assert s["ctl_fairness"].value == 0.98
    assert s["ctl_probe_ceiling_pps"].value == 1_000_000.0
    assert "ctl_offered_pps" not in s  # not rate mode
    answered = [x for x in r.samples if x.metric == "ctl_answered_pps" and x.flow == ""]
    assert [(x.t, x.phase, x.value) for x in answered] == [
        (0.0, "warmup", 890),
        (1.0, "measure", 1000),
        (2.0, "drain", 10),
    ]
    assert {x.flow for x in r.samples if x.metric == "ctl_outstanding"} == {"", "dpid 1", "dpid 2"}
    buckets = [x for x in r.samples if x.metric == "ctl_rtt_bucket_ms"]
    assert [(x.value, x.seq) for x in buckets] == [(0.051, 10), (0.831, 4980)]
    assert len([x for x in r.samples if x.metric == "ctl_controller_cpu_pct"]) == 2
    assert not r.cpu.cpu_bound and r.params["probe_bound"] is False


def test_probe_bound_by_ceiling_cpu_and_slips():
    assert convert.probe_bottleneck(probe_doc(answered_rate=600_000), 1_000_000.0)
    assert not convert.probe_bottleneck(probe_doc(answered_rate=400_000), 1_000_000.0)
    reasons = convert.probe_bottleneck(probe_doc(probe_cpu=97.0, slips=500), None)
    assert len(reasons) == 2 and "CPU" in reasons[0] and "skipped 500" in reasons[1]
    assert not convert.probe_bottleneck(probe_doc(slips=50), None)  # 1 %: scheduling noise
    r = convert_doc(
        probe_doc(answered_rate=900_000),
        ceiling_pps=1_000_000.0,
        cpu=CpuReport(cpu_bound=True, reason="the whole machine was busy"),
    )
    assert r.cpu.cpu_bound and r.cpu.reason.startswith("probe-bound: ")
    assert "the whole machine was busy" in r.cpu.reason
    assert r.params["probe_bound"] is True


def test_crash_keeps_partial_results_and_fails_the_run():
    r = convert_doc(
        probe_doc(disconnected=2, status="partial"), crash="controller x crashed mid-run"
    )
    assert r.status == "failed" and "crashed mid-run" in r.error
    assert r.summaries and r.samples  # kept
    r2 = convert_doc(probe_doc(disconnected=1, status="partial"))
    assert r2.status == "failed" and "dropped 1 switch connection" in r2.error
    r3 = convert_doc(
        {
            **probe_doc(),
            "status": "failed",
            "switches": {"ready": 0},
            "totals": {},
            "errors": [{"error": "cannot connect"}],
        }
    )
    assert r3.status == "failed" and "cannot connect" in r3.error


def test_rate_mode_names_and_offered():
    r = convert_doc(probe_doc(mode="rate"), mode="rate", rate=1000.0, switches=1)
    assert r.workload == "ctlbench rate 1000 pps/switch" and r.topology == "1 switch"
    assert {x.metric: x.value for x in r.summaries}["ctl_offered_pps"] == 2000.0


def test_config_errors_name_file_line_field():
    text = '[study]\nname = "x"\n\n[[controller]]\nkind = "echo"\n\n[[controller]]\nkind = "osken"\napp = "l2-learning"\nbogus = 1\n'
    with pytest.raises(config.ConfigError) as e:
        config.parse(text, "f.toml")
    assert "f.toml:10: controller[1].bogus" in str(e.value)
    with pytest.raises(config.ConfigError, match=r"f.toml:2: load.mode"):
        config.parse('[load]\nmode = "fast"\n', "f.toml")
    with pytest.raises(config.ConfigError, match="only loopback"):
        config.parse('[[controller]]\nkind = "external"\naddress = "192.0.2.1:6653"\n', "f.toml")
    with pytest.raises(config.ConfigError, match="unique"):
        config.parse('[[controller]]\nkind = "echo"\n[[controller]]\nkind = "echo"\n', "f.toml")
    with pytest.raises(config.ConfigError, match="does not speak p4runtime"):
        config.parse('[[controller]]\nkind = "osken"\n[load]\nprotocol = "p4runtime"\n', "f.toml")
    with pytest.raises(config.ConfigError, match="does not speak openflow13"):
        config.parse('[[controller]]\nkind = "p4rt"\n', "f.toml")
    with pytest.raises(config.ConfigError, match="p4rt app 'proactive'"):
        config.parse(
            '[[controller]]\nkind = "p4rt"\napp = "proactive"\n[load]\nprotocol = "p4runtime"\n'
        )
    p4 = config.parse('[[controller]]\nkind = "p4rt"\n[load]\nprotocol = "p4runtime"\n')
    assert p4.controller[0].label == "p4rt-l2-learning" and p4.load.protocol == "p4runtime"
    assert config.controller_from_arg("p4rt").app == "l2-learning"
    assert config.controller_from_arg("osken:l2-learning").label == "osken-l2-learning"
    assert config.controller_from_arg("127.0.0.1:6653").kind == "external"
    with pytest.raises(config.ConfigError):
        config.controller_from_arg("nox")


def test_plan_sweeps_and_ceiling():
    cfg = config.parse(
        '[study]\nrepetitions = 2\n[[controller]]\nkind = "echo"\n'
        '[[controller]]\nkind = "ovs-testcontroller"\n'
        '[load]\nmode = "rate"\nswitches = [1, 4]\nrate = [10, 100]\n'
    )
    runs = [r.spec for r in CtlbenchStudy("<test>", "", cfg).plan()]
    ceil = [r for r in runs if r.ceiling]
    assert [(r.switches, r.controller.label) for r in ceil] == [
        (1, CEILING_ARCH),
        (4, CEILING_ARCH),
    ]
    assert len(runs) - len(ceil) == 2 * 2 * 2 * 2
    assert len({r.key for r in runs}) == len(runs)


class _OneMetric:
    """A store whose summaries are one metric's: the report's per-topology panels (one
    figure per metric) drawn for one metric instead of all of them."""

    def __init__(self, store: Store, metric: str):
        self._store, self._metric = store, metric

    def __getattr__(self, name):
        return getattr(self._store, name)

    def summaries(self, study_id):
        return [s for s in self._store.summaries(study_id) if s.metric == self._metric]


def test_store_round_trip_and_report_figures(tmp_path, monkeypatch):
    """The figures are those of the report (one drawing of each: this test drew them twice,
    and ~35 per-topology panels, at 177 s under CI load). The panels' drawing is shown on
    one metric here, and on several topologies and architectures by test_report_sweeps's
    test_several_topologies_make_panels_and_the_html_has_sweeps_and_provenance."""
    from sdnperf.report import html as report_html

    drawn = {}

    def all_plots_kept(*args, **kwargs):  # the report's own drawing, kept for the checks
        drawn["plots"] = plots = real_all_plots(*args, **kwargs)
        return plots

    def panels_of_one_metric(store, *args):
        drawn["panels"] = panels = real_panels(_OneMetric(store, metrics.ANSWERED), *args)
        return panels

    real_all_plots, real_panels = report_html.all_plots, report_html.topology_panels
    monkeypatch.setattr(report_html, "all_plots", all_plots_kept)
    monkeypatch.setattr(report_html, "topology_panels", panels_of_one_metric)
    with Store(tmp_path / "study.sqlite") as store:
        sid = store.open_study("ctl", None, {}, {})
        for ctl, scale in (("echo", 100.0), ("osken-l2-learning", 1.0)):
            for n in (1, 4):
                for rate in (100.0, 400.0):
                    doc = probe_doc(
                        answered_rate=rate * n * 0.9 * min(scale, 1), mode="rate", switches=n
                    )
                    doc["totals"]["offered_rate"] = rate * n
                    usage = convert.ControllerUsage(
                        cpu_measure_pct=rate / 10, cpu_series=[(0.5, 5.0)]
                    )
                    store.record_run(
                        sid,
                        convert_doc(
                            doc,
                            key=f"{ctl}|{n}|{rate}",
                            controller=ctl,
                            mode="rate",
                            rate=rate,
                            switches=n,
                            usage=usage,
                            params={"switches": n, "mode": "rate", "rate_per_switch": rate},
                        ),
                    )
        assert len(store.runs(sid)) == 8
        import sdnperf.ctlbench.plots  # noqa: F401  (registers its figures, as the CLI does)

        html = report_html.write_report(store, sid, tmp_path / "report.html").read_text()
        plots = drawn["plots"]
        stems = {p.stem for p in plots.paths}
        assert {
            "ctlbench_answered_vs_offered",
            "ctlbench_outstanding_over_time",
            "ctlbench_controller_cpu_vs_load",
        } <= stems
        assert any(s.startswith("ctlbench_rtt_vs_switches") for s in stems)
        # the axes of P4RCProbe (seed paper 002): against switches (one line per controller
        # and rate per switch), against one switch's configured rate, outstanding per switch
        assert {
            "ctlbench_vs_switches_rate",
            "ctlbench_vs_switches_rtt",
            "ctlbench_vs_switches_cpu",
            "ctlbench_vs_rate_rate",
            "ctlbench_vs_rate_cpu",
            "ctlbench_outstanding_per_switch_osken-l2-learning_100pps",
            "ctlbench_outstanding_per_switch_osken-l2-learning_400pps",
        } <= stems, stems
        assert not [r for r in plots.skipped if "failed" in r], plots.skipped
        assert all(f'alt="{stem}"' in html for stem in stems)  # each one in the page
        # two topologies (1 and 4 switches): one panel per workload (100 and 400 pps)
        panels = sorted(p.stem for p, _ in drawn["panels"])
        assert panels == [
            f"topologies_ctlbench_rate_{rate}_pps_switch_{metrics.ANSWERED}" for rate in (100, 400)
        ]
        assert all(f'alt="{stem}"' in html for stem in panels)
        assert "answered rate" in html and "Jain" in html


def test_report_of_other_studies_has_no_ctlbench_figures(tmp_path):
    from sdnperf.ctlbench.plots import add_plots

    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("x", None, {}, {})
        added = []
        add_plots(store, sid, tmp_path, lambda *a: added.append(a))
        assert added == []


def test_missing_osken_app_is_a_clear_error():
    import importlib.util

    from sdnperf.controllers.process import ControllerError
    from sdnperf.ctlbench import controllers

    if (
        importlib.util.find_spec("os_ken") is None
        or importlib.util.find_spec(controllers.SIMPLE_SWITCH_13) is not None
    ):
        pytest.skip("needs an os-ken without the sample apps")
    with pytest.raises(ControllerError, match="ships no sample apps"):
        controllers._osken_module("simple_switch_13")
    with pytest.raises(ControllerError, match="does not exist"):
        controllers._osken_module("/nonexistent/app.py")


def test_faucet_config_has_one_dp_per_switch():
    import yaml

    from sdnperf.ctlbench.controllers import faucet_yaml

    config = yaml.safe_load(faucet_yaml([1, 2, 3], 2))
    assert [dp["dp_id"] for dp in config["dps"].values()] == [1, 2, 3]
    assert [
        port["native_vlan"] for dp in config["dps"].values() for port in dp["interfaces"].values()
    ] == ["bench"] * 6
    assert config["vlans"]["bench"]["max_hosts"] == 16000000


def test_p4runtime_probe_argv_devices_file_and_failures(tmp_path):
    """P4Runtime runs start the devices first: the argv, waiting for their addresses, a
    probe that dies before listening, and the failure wording of a P4Runtime run."""
    import subprocess
    import sys

    from sdnperf.ctlbench import probe

    cfg = config.parse(
        '[[controller]]\nkind = "p4rt"\n[load]\nprotocol = "p4runtime"\n'
        'mode = "rate"\nrate = [100]\n'
    )
    argv = probe.p4runtime_argv(
        "probe", tmp_path / "d.json", cfg.load, 3, 100.0, listen="127.0.0.1:50001"
    )
    assert argv[:2] == ["probe", "p4runtime"] and "--controller" not in argv
    assert argv[argv.index("--devices-file") + 1] == str(tmp_path / "d.json")
    assert argv[argv.index("--listen") + 1] == "127.0.0.1:50001"
    assert argv[argv.index("--rate") + 1] == "100"
    of = probe.openflow_argv("probe", "127.0.0.1:6653", cfg.load, 1, 100.0)
    assert of[:4] == ["probe", "openflow", "--controller", "127.0.0.1:6653"]
    (tmp_path / "d.json").write_text('{"devices": [{"device_id": 1, "address": "127.0.0.1:5"}]}')
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert probe.wait_devices(tmp_path / "d.json", alive) == [
            {"device_id": 1, "address": "127.0.0.1:5"}
        ]
    finally:
        alive.kill()
        alive.wait()
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    dead.wait()
    with pytest.raises(probe.ProbeError, match="exited .code 3. before its P4Runtime devices"):
        probe.wait_devices(tmp_path / "missing.json", dead)
    doc = probe_doc(status="failed")
    doc["protocol"] = "p4runtime"
    doc["errors"] = [{"switch": 0, "dpid": 1, "at_s": 0, "error": "no controller became primary"}]
    r = convert_doc(doc)
    assert r.status == "failed" and "P4Runtime device" in r.error and "primary" in r.error
    assert r.params["protocol"] == "p4runtime"


def test_mean_band_is_the_mean_and_its_95_ci():
    from sdnperf.ctlbench.plots import mean_band

    assert mean_band([5.0]) == (5.0, 0.0)  # one repetition: no interval
    mean, half = mean_band([1.0, 2.0, 3.0])
    # t(0.975, 2) = 4.303, s = 1, n = 3: 4.303 / sqrt(3) = 2.484
    assert mean == 2.0 and half == pytest.approx(2.484, abs=1e-3)
