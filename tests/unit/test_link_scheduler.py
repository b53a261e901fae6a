"""The link scheduler on fake appliers: every direction gets its changes at their times, and
what it applied is recorded as samples a fidelity check can read back."""

from __future__ import annotations

import time
from pathlib import Path

from sdnperf.links.scheduler import LinkScheduler, applied_at
from sdnperf.study.loader import load_study_text

STUDY = """[study]
name = "t"
[topology]
kind = "single"
hosts = 2
[topology.schedule.step]
links = "hosts"
rate_mbps = { "0" = 100, "0.3" = 10, "0.6" = 100 }
[topology.schedule.late]
links = ["h2-s1"]
direction = "up"
delay_ms = { "0" = 0, "0.45" = 20 }
[[architecture]]
name = "bridge"
kind = "bridge"
[[workload]]
name = "tcp"
kind = "iperf-tcp"
pairs = [["h1", "h2"]]
"""


def test_every_direction_follows_its_schedule_and_is_recorded():
    spec = load_study_text(STUDY, "t.toml", Path(".")).topology
    calls: dict[str, list] = {}
    directions = [
        (d, lambda s, label=d.label: calls.setdefault(label, []).append((time.monotonic(), s)))
        for plan in spec.schedules
        for d in plan.directions()
    ]
    scheduler = LinkScheduler(directions, "tcp")
    t0 = time.monotonic()
    scheduler.start()
    scheduler.start()  # idempotent
    time.sleep(0.9)
    samples = scheduler.stop()
    assert sorted(calls) == ["h1-s1 down", "h1-s1 up", "h2-s1 down", "h2-s1 up"]
    rates = [s.rate_mbps for _, s in calls["h1-s1 down"]]
    assert rates == [100, 10, 100]
    step_at = calls["h1-s1 up"][1][0] - t0
    assert 0.3 <= step_at < 0.5, step_at
    delays = [(s.rate_mbps, s.delay_ms) for _, s in calls["h2-s1 up"]]
    assert delays == [(100, 0), (10, 0), (10, 20), (100, 20)]
    # the record: values at their times, per direction and quantity
    assert applied_at(samples, "h2-s1 up", "link_delay_ms", 0.2) == 0
    assert applied_at(samples, "h2-s1 up", "link_delay_ms", 0.8) == 20
    assert applied_at(samples, "h1-s1 down", "link_rate_mbps", 0.5) == 10
    assert applied_at(samples, "h1-s1 down", "link_delay_ms", 0.5) is None  # not scheduled
    assert all(s.workload == "tcp" and s.t is not None for s in samples)


def test_a_failing_applier_fails_the_run():
    spec = load_study_text(STUDY, "t.toml", Path(".")).topology

    def broken(setting):
        raise OSError("tc: no such device")

    scheduler = LinkScheduler([(spec.schedules[0].up, broken)], "tcp")
    scheduler.start()
    time.sleep(0.1)
    try:
        scheduler.stop()
    except RuntimeError as exc:
        assert "no such device" in str(exc)
    else:
        raise AssertionError("no error")
