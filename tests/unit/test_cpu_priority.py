"""The switch processes' scheduling setting (`cpu_priority` of a p4 architecture,
sdnperf/arch/cpu_priority.py): its validation, the real-time safety check, what is
recorded, and how a verifying study and its answer carry it."""

from __future__ import annotations

import os

import pydantic
import pytest

from sdnperf.arch import cpu_priority as cp
from sdnperf.arch.config import P4Config


def test_the_setting_defaults_to_normal_and_takes_only_the_three_names():
    assert P4Config(kind="p4", name="p").cpu_priority == "normal"
    for value in cp.CPU_PRIORITIES:
        c = P4Config(kind="p4", name="p", target="bmv2", cpu_priority=value)
        assert c.cpu_priority == value and c.model_dump()["cpu_priority"] == value
    with pytest.raises(pydantic.ValidationError, match="cpu_priority"):
        P4Config(kind="p4", name="p", cpu_priority="rt")


def test_realtime_needs_the_kernels_throttle():
    cp.check_realtime_safe((950000, 1000000))  # the kernel's default: fine
    with pytest.raises(cp.CpuPriorityError, match="not throttled.*950000"):
        cp.check_realtime_safe((-1, 1000000))
    with pytest.raises(cp.CpuPriorityError, match="not throttled"):
        cp.check_realtime_safe((1000000, 1000000))  # all of the period: no bound
    with pytest.raises(cp.CpuPriorityError, match="cannot read"):
        cp.check_realtime_safe(None)


def test_rt_throttle_reads_the_two_files(tmp_path):
    (tmp_path / "rt").write_text("950000\n")
    (tmp_path / "period").write_text("1000000\n")
    assert cp.rt_throttle(tmp_path / "rt", tmp_path / "period") == (950000, 1000000)
    assert cp.rt_throttle(tmp_path / "missing", tmp_path / "period") is None


def test_an_unknown_setting_is_refused_and_normal_changes_nothing(monkeypatch):
    with pytest.raises(cp.CpuPriorityError, match="one of normal, high, realtime"):
        cp.apply([os.getpid()], "urgent")
    touched: list = []
    monkeypatch.setattr(cp, "_set_thread", lambda tid, s: touched.append((tid, s)))
    cp.apply([os.getpid()], "normal")
    assert touched == []
    cp.apply([os.getpid()], "high")  # every thread of the process
    assert {t for t, _ in touched} == set(cp.tasks(os.getpid())) and touched


def test_apply_names_the_process_when_not_permitted(monkeypatch):
    def refuse(tid, setting):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(cp, "_set_thread", refuse)
    with pytest.raises(cp.CpuPriorityError, match=r"high.*switch process \d+.*CAP_SYS_NICE"):
        cp.apply([os.getpid()], "high")


def test_read_counts_threads_per_policy_and_the_throttle():
    got = cp.read([os.getpid()])
    assert sum(got["threads"].values()) == len(cp.tasks(os.getpid()))
    assert all(k.startswith("SCHED_") for k in got["threads"])
    assert cp.read([2**22 + 12345])["threads"] == {}  # a process that is gone
    assert cp.describe(os.SCHED_RR, 1, 0) == "SCHED_RR prio 1"
    assert cp.describe(os.SCHED_OTHER, 0, -10) == "SCHED_OTHER nice -10"


def test_a_verifying_study_gives_every_design_the_setting(tmp_path):
    from sdnperf.studies import recirc_design as design
    from sdnperf.study.loader import load_study

    doc = design.load_template("quick")
    v = design.verify_study(doc, "v", "one-switch", "sdnperf", 100, 5.0, cpu_priority="realtime")
    study = load_study(design.write(v, tmp_path / "v.toml", "a test"))
    assert {a.cpu_priority for a in study.config.architecture} == {"realtime"}
    plain = design.verify_study(doc, "w", "one-switch", "sdnperf", 100, 5.0)
    study = load_study(design.write(plain, tmp_path / "w.toml", "a test"))
    assert {a.cpu_priority for a in study.config.architecture} == {"normal"}


class _Run:
    def __init__(self, setting, threads):
        self.params = {
            "architecture": {"cpu_priority": setting} if setting else {},
            "facts": {"switch_scheduling": {"threads": threads}},
        }


def test_the_answer_names_a_setting_other_than_normal():
    from sdnperf.studies.answers import recirculation as answers

    got = answers.scheduling_of(
        [_Run("realtime", {"SCHED_RR prio 1": 9}), _Run("realtime", {"SCHED_RR prio 1": 12})]
    )
    assert got == {"cpu_priority": "realtime", "switch_scheduling": {"SCHED_RR prio 1": 12}}
    assert answers.priority_note("realtime") == " (switch cpu_priority realtime)"
    assert answers.priority_note("normal") == ""
    # runs stored before the setting existed read as normal
    assert answers.scheduling_of([_Run(None, {})])["cpu_priority"] == "normal"
