"""Link schedules: the study file's [topology.schedule.NAME] tables expanded into the
setting of each link direction over time, errors with file:line: field, sweeps of a point."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdnperf.links.schedule import PointCurve, Setting, configured, floor_mbps
from sdnperf.study.loader import StudyError, load_study_text
from sdnperf.study.plan import plan_runs

HEAD = """[study]
name = "t"
[topology]
kind = "single"
hosts = 2
"""
TAIL = """
[[architecture]]
name = "bridge"
kind = "bridge"
[[workload]]
name = "tcp"
kind = "iperf-tcp"
pairs = [["h1", "h2"]]
duration = 15
"""


def load(schedule: str, tail: str = TAIL, base: Path = Path(".")):
    return load_study_text(HEAD + schedule + tail, "s.toml", base)


def errors(schedule: str, tail: str = TAIL, base: Path = Path(".")) -> list[str]:
    with pytest.raises(StudyError) as info:
        load(schedule, tail, base)
    return [str(p) for p in info.value.problems]


STEP = """[topology.schedule.step]
links = "hosts"
rate_mbps = { "0" = 100, "5" = 10, "10" = 100 }
"""


def test_a_rate_step_on_every_host_link_both_ways():
    spec = load(STEP).topology
    plans = {(p.node1, p.node2): p for p in spec.schedules}
    assert set(plans) == {("h1", "s1"), ("h2", "s1")}
    up = plans["h1", "s1"].up
    assert [up.setting_at(t).rate_mbps for t in (0, 4.99, 5, 9.9, 10, 100)] == [
        100,
        100,
        10,
        10,
        100,
        100,
    ]
    assert list(up.change_times()) == [0, 5, 10]
    assert plans["h2", "s1"].down.setting_at(6).rate_mbps == 10
    # the network is built with the rate at t = 0 (htb that changes in place)
    assert spec.graph.edges["h1", "s1"]["bw"] == 100
    assert spec.needs_htb() and not spec.needs_netem()
    # by the flow name of the recorded samples (for a fidelity check)
    assert configured(spec, "h2-s1 down", 7.5) == Setting(10)
    assert configured(spec, "h2-s1 sideways", 7.5) is None


def test_a_loss_ramp_is_linear_and_reapplied_every_step():
    spec = load(
        """[topology.schedule.lossy]
links = ["s1-h2"]
direction = "down"
loss_pct = { "0" = 0, "30" = 5 }
ramp = ["loss_pct"]
ramp_step_s = 5
"""
    ).topology
    (plan,) = spec.schedules
    assert (plan.node1, plan.node2) == ("h2", "s1")  # named either way round
    assert plan.down.setting_at(15).loss_pct == pytest.approx(2.5)
    assert plan.down.setting_at(45).loss_pct == 5
    assert list(plan.down.change_times()) == [0, 5, 10, 15, 20, 25, 30]
    assert plan.up.curves == {}  # direction = "down" only
    assert plan.up.setting_at(15) == Setting()
    assert spec.needs_netem()


def test_curves_step_and_ramp():
    step = PointCurve(((0, 1.0), (2, 3.0)))
    ramp = PointCurve(((0, 1.0), (2, 3.0), (4, 3.0)), ramp=True, step_s=0.5)
    assert (step.value_at(1.9), step.value_at(2)) == (1.0, 3.0)
    assert ramp.value_at(1) == 2.0 and ramp.value_at(3) == 3.0
    assert list(ramp.times()) == [0, 0.5, 1, 1.5, 2, 2.5, 3.0, 3.5, 4]


def test_static_settings_stay_where_no_schedule_speaks():
    spec = load("[topology.link]\ndelay_ms = 2\n" + STEP).topology
    assert spec.schedules[0].up.setting_at(6) == Setting(10, 2.0, 0.0, 0.0)


def test_mistakes_name_file_line_and_field():
    (zero,) = errors(
        '[topology.schedule.step]\nlinks = "hosts"\nrate_mbps = { "0" = 100, "5" = 0 }\n'
    )
    assert zero.startswith("s.toml:8: topology.schedule.step.rate_mbps: "), zero
    assert "at 5 s: 0 must be > 0 and <= 1000" in zero
    (late,) = errors('[topology.schedule.step]\nrate_mbps = { "1" = 100 }\n')
    assert late.startswith("s.toml:7: topology.schedule.step.rate_mbps: ")
    assert 'first point must be at "0"' in late
    (unknown,) = errors('[topology.schedule.x]\nlinks = ["h1-s9"]\ndelay_ms = { "0" = 1 }\n')
    assert unknown.startswith("s.toml:7: topology.schedule.x.links: no link 'h1-s9'")
    (typo,) = errors('[topology.schedule.x]\nlinks = "hosts"\ndelays = { "0" = 1 }\n')
    assert "s.toml:8: topology.schedule.x.delays: unknown field" in typo
    (ramp,) = errors('[topology.schedule.x]\nramp = ["loss_pct"]\ndelay_ms = { "0" = 1 }\n')
    assert "ramp names loss_pct, which has no points" in ramp
    (twice,) = errors(
        '[topology.schedule.a]\ndelay_ms = { "0" = 1 }\n'
        '[topology.schedule.b]\nlinks = "hosts"\ndelay_ms = { "0" = 2 }\n'
    )
    assert "s.toml:10: topology.schedule.b.delay_ms" in twice and "also scheduled" in twice
    (when,) = errors('[topology.schedule.x]\ndelay_ms = { "0" = 1, "soon" = 2 }\n')
    assert "'soon' is not a number of seconds" in when


def test_a_point_is_swept_like_any_parameter():
    study = load(
        STEP,
        TAIL + '[[sweep]]\nparam = "topology.schedule.step.rate_mbps.5"\nvalues = [10, 50]\n',
    )
    runs = plan_runs(study)
    lows = sorted(
        {r.study.topology.schedules[0].up.setting_at(6).rate_mbps for r in runs if r.study}
    )
    assert lows == [10, 50]
    bad = errors(
        STEP,
        TAIL + '[[sweep]]\nparam = "topology.schedule.step.rate_mbps.5"\nvalues = [10, 0]\n',
    )
    assert any("rate_mbps" in e and "> 0" in e for e in bad), bad


def test_a_trace_gives_each_direction_its_rate(tmp_path):
    # 1 opportunity per ms for 100 ms, then 3 per ms for 100 ms: 12 and 36 Mbit/s
    (tmp_path / "up.trace").write_text("".join(f"{ms}\n" for ms in range(1, 101)))
    (tmp_path / "down.trace").write_text(
        "".join(f"{ms}\n" * (1 if ms <= 100 else 3) for ms in range(1, 201))
    )
    spec = load(
        '[topology.schedule.cell]\nlinks = ["h1-s1"]\ntrace_up = "up.trace"\n'
        'trace_down = "down.trace"\ntrace_bin_ms = 100\ndelay_ms = { "0" = 20 }\n',
        base=tmp_path,
    ).topology
    (plan,) = spec.schedules
    # bin [0, 100 ms) holds the opportunities at 1..99 ms: 99 x 1500 B in 0.1 s
    assert plan.up.setting_at(0.05).rate_mbps == pytest.approx(11.88)
    down = plan.down.setting_at(0.15)
    assert (down.rate_mbps, down.delay_ms) == (pytest.approx(35.76), 20)  # 1 + 3 x 99
    assert plan.down.setting_at(0.25).rate_mbps == pytest.approx(12.24)  # looped: 3 + 99
    times = plan.up.change_times()
    assert [next(times) for _ in range(3)] == [0, 0.1, 0.2]


def test_an_unlooped_trace_ends_nearly_silent(tmp_path):
    (tmp_path / "t").write_text("".join(f"{ms}\n" for ms in range(1, 101)))
    spec = load(
        '[topology.schedule.c]\ntrace_down = "t"\ntrace_loop = false\n', base=tmp_path
    ).topology
    down = spec.schedules[0].down
    assert down.setting_at(0.5).rate_mbps == floor_mbps(100) == pytest.approx(0.12112)
    assert list(down.change_times())[-1] == 0.2


def test_a_missing_or_malformed_trace_is_refused_with_its_line(tmp_path):
    (tmp_path / "bad").write_text("1\n2\nthree\n")
    (bad,) = errors('[topology.schedule.c]\ntrace_up = "bad"\n', base=tmp_path)
    assert "topology.schedule.c.trace_up" in bad and "bad:3: expected a whole number" in bad
    (missing,) = errors('[topology.schedule.c]\ntrace_up = "nope"\n', base=tmp_path)
    assert "cannot read" in missing
