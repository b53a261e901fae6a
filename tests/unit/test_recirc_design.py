"""The study files `sdnperf recirc study` / `recirc plan --verify` write (recirc_design.py):
each loads as a study file and plans the runs the design says."""

from __future__ import annotations

import pytest

from sdnperf.studies import recirc_design as design
from sdnperf.study.loader import load_study
from sdnperf.study.plan import plan_runs


def load(doc, tmp_path, name="s.toml"):
    return load_study(design.write(doc, tmp_path / name, "a test"))


def test_pilot_runs_each_switch_at_its_pilot_passes_on_every_topology(tmp_path):
    doc = design.load_template("quick")
    study = load(design.pilot_study(doc), tmp_path)
    runs = plan_runs(study)
    # 2 topologies × 3 pilot points × 2 switches, ping only
    assert len(runs) == 12 and {str(r.workload.name) for r in runs} == {"ping"}
    held = {a.name: a.params for a in study.config.architecture}
    assert held["p4"]["recirc_dst"] == design.HELD_DST + "/32"
    sweeps = {s.param: s.values for s in study.config.sweep}
    assert sweeps["architecture.p4.params.recirc_passes"] == design.PILOT_PASSES["sdnperf"]
    assert sweeps["architecture.p4-bmv2.params.recirc_passes"] == design.PILOT_PASSES["bmv2"]


def test_a_later_pilot_round_runs_one_topology_at_each_switchs_own_n(tmp_path):
    doc = design.load_template("quick")
    doubled = design.pilot_study(
        doc,
        values={"p4": [0, 40000]},
        topology="chain-of-two",
        hold_ms=30.0,
        name="recirculation-pilot-r2-chain-of-two",
    )
    study = load(doubled, tmp_path)
    runs = plan_runs(study)
    # one topology, only the switch still short of the target, N = 0 and its N
    assert len(runs) == 2 and {r.topology for r in runs} == {"chain-of-two"}
    assert [a.name for a in study.config.architecture] == ["p4"]
    sweeps = {s.param: list(s.values) for s in study.config.sweep}
    assert sweeps == {"architecture.p4.params.recirc_passes": [0, 40000]}
    # pings 3 of the longest expected holds apart
    assert doubled["workload"][0]["interval"] == pytest.approx(0.09)
    with pytest.raises(design.DesignError, match="nothing to run"):
        design.pilot_study(doc, values={"p4": [0, 1]}, topology="ring")


def test_bracket_study_zips_each_switchs_own_n_and_spaces_pings_past_the_hold(tmp_path):
    doc = design.load_template("quick")
    values = {"p4": [0, 1250, 2500, 5000, 10000], "p4-bmv2": [0, 30, 60, 120, 240]}
    costs = {"p4": 0.002, "p4-bmv2": 0.08}  # ms per pass, the slower topology's
    study = load(design.bracket_study(doc, values, costs), tmp_path)
    sweeps = {s.param: list(s.values) for s in study.config.sweep}
    assert sweeps["architecture.p4.params.recirc_passes"] == values["p4"]
    intervals = sweeps["workload.ping.interval"]
    assert intervals == sorted(set(intervals))  # distinct: a zip sweep refuses repeats
    # the longest hold at the last point: 10000 × 2 µs = 20 ms; pings 3 holds apart
    assert intervals[-1] == pytest.approx(0.06)
    assert intervals[0] == 0.01  # the file's own interval where holds are short
    assert len(plan_runs(study)) == 2 * 5 * 2
    with pytest.raises(design.DesignError, match="one length to zip"):
        design.bracket_study(doc, {"p4": [0, 1], "p4-bmv2": [0, 1, 2]}, costs)


def test_verify_study_runs_n0_planned_n_and_the_hold_split_over_the_chain(tmp_path):
    doc = design.load_template("quick")
    v = design.verify_study(doc, "recirculation-verify-5ms-x", "chain-of-two", "bmv2", 70, 5.0)
    study = load(v, tmp_path)
    archs = {a.name: (a.program, a.params, a.target) for a in study.config.architecture}
    assert archs["p4-bmv2-n0"][1]["recirc_passes"] == 0
    assert archs["p4-bmv2-n70"][1]["recirc_passes"] == 70
    assert archs["p4-bmv2-hold"][0] == "recirc_hold"
    assert archs["p4-bmv2-hold"][1]["recirc_hold_us"] == 2500  # 5 ms over 2 switches
    assert {t for _, _, t in archs.values()} == {"bmv2"}
    assert {w.kind for w in study.config.workload} == {"ping", "iperf-tcp", "iperf-udp"}
    assert len(plan_runs(study)) == 3 * 3
    one = design.verify_study(doc, "v", "one-switch", "sdnperf", 5000, 5.0, link_bw=10)
    study = load(one, tmp_path, "one.toml")
    assert {a.name: a.params for a in study.config.architecture}["p4-hold"][
        "recirc_hold_us"
    ] == 5000
    assert [s.values for s in study.config.sweep] == [(10,)] or [
        list(s.values) for s in study.config.sweep
    ] == [[10]]
    with pytest.raises(design.DesignError, match="no topology 'ring'"):
        design.verify_study(doc, "v", "ring", "sdnperf", 1, 5.0)


def test_toml_writer_round_trips():
    import tomllib

    doc = {
        "study": {"name": 'a "b"', "n": 3, "x": 0.5, "on": True},
        "workload": [{"pairs": [["h1", "h2"]], "params": {"k": 1}}],
    }
    assert tomllib.loads(design.dumps(doc, "header")) == doc


def test_verify_study_rounds_run_ping_only_and_the_cost_study_tcp_udp_only(tmp_path):
    doc = design.load_template("quick")
    rnd = design.verify_study(
        doc, "v-r2", "one-switch", "sdnperf", 900, 5.0, hold=False, workloads="ping"
    )
    study = load(rnd, tmp_path, "r.toml")
    assert [a.name for a in study.config.architecture] == ["p4-n0", "p4-n900"]
    assert [w.kind for w in study.config.workload] == ["ping"]
    cost = design.verify_study(doc, "v-cost", "one-switch", "sdnperf", 900, 5.0, workloads="cost")
    study = load(cost, tmp_path, "c.toml")
    assert [a.name for a in study.config.architecture] == ["p4-n0", "p4-n900", "p4-hold"]
    assert {w.kind for w in study.config.workload} == {"iperf-tcp", "iperf-udp"}
    with pytest.raises(design.DesignError, match="workloads 'x'"):
        design.verify_study(doc, "v", "one-switch", "sdnperf", 1, 5.0, workloads="x")


def test_with_cpu_priority_sets_every_recirc_switch_and_leaves_the_file_alone(tmp_path):
    doc = design.load_template("quick")
    assert design.with_cpu_priority(doc, None) is doc  # no flag: the file's own setting
    rt = design.with_cpu_priority(doc, "realtime")
    assert [a["cpu_priority"] for a in design.recirc_architectures(rt)] == ["realtime"] * 2
    assert all("cpu_priority" not in a for a in design.recirc_architectures(doc))  # a copy
    # the pilot written from it loads as a study and runs both switches realtime
    study = load(design.pilot_study(rt), tmp_path)
    assert {a.cpu_priority for a in study.config.architecture} == {"realtime"}
