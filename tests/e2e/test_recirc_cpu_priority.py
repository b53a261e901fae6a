"""The switch processes' scheduling (`cpu_priority`, sdnperf/arch/cpu_priority.py) is what
the kernel runs them with while the network is up (read from /proc and the scheduler
calls, every thread), on our switch and on BMv2, and each run records it in its facts."""

from __future__ import annotations

import os
import re
import textwrap

import pytest

from sdnperf.runner import execute_run
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET, bmv2_env, recirc_network

pytestmark = NEEDS_MININET


def kernel_view(pid: int) -> set[tuple[int, int, int]]:
    """(policy, rt priority, nice) of every thread of `pid`, as /proc/PID/task/TID/stat
    says (fields 18 priority.. 19 nice, 40 rt_priority, 41 policy)."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        nice, rt_priority, policy = int(fields[16]), int(fields[37]), int(fields[38])
        out.add((policy, rt_priority, nice))
    return out


def held_network(tmp_path, target: str, setting: str, passes: int):
    return recirc_network(
        tmp_path / "run",
        "linear",
        {"switches": 2},
        "recirc",
        target=target,
        cpu_priority=setting,
        params={"recirc_passes": passes, "recirc_dst": "10.0.0.2"},
    )


@pytest.mark.usefixtures("needs_daemon")
def test_realtime_runs_every_thread_of_our_switch_sched_rr_and_records_it(tmp_path):
    with held_network(tmp_path, "sdnperf", "realtime", 2000) as started:
        net, arch = started.net, started.arch
        pids = arch.switch_pids
        assert len(pids) == 1  # one shared process for both switches
        assert kernel_view(pids[0]) == {(os.SCHED_RR, 1, 0)}
        h1, h2 = net.get("h1"), net.get("h2")
        out = h1.cmd(f"ping -c 5 -i 0.05 -W 2 {h2.IP()}")  # held 2 x 2000 passes
        assert "5 received" in out, out
        facts = arch.facts()
        threads = len(os.listdir(f"/proc/{pids[0]}/task"))
    assert facts["cpu_priority"] == "realtime"
    assert facts["switch_scheduling"]["threads"] == {"SCHED_RR prio 1": threads}
    assert re.fullmatch(r"\d+/\d+", facts["switch_scheduling"]["rt_throttle_us"])


def test_high_renices_every_thread_of_each_bmv2_process(tmp_path, monkeypatch):
    for name, value in bmv2_env().items():
        monkeypatch.setenv(name, value)
    with held_network(tmp_path, "bmv2", "high", 10) as started:
        net, arch = started.net, started.arch
        assert len(arch.switch_pids) == 2  # one simple_switch_grpc per switch
        for pid in arch.switch_pids:
            assert kernel_view(pid) == {(os.SCHED_OTHER, 0, -10)}
        out = net.get("h1").cmd(f"ping -c 3 -i 0.05 -W 2 {net.get('h2').IP()}")
        assert "3 received" in out, out
        facts = arch.facts()
    assert facts["cpu_priority"] == "high"
    assert list(facts["switch_scheduling"]["threads"]) == ["SCHED_OTHER nice -10"]


STUDY = textwrap.dedent("""\
    [study]
    name = "prio"
    repetitions = 1
    [topology]
    kind = "single"
    hosts = 2
    [[architecture]]
    name = "p4"
    kind = "p4"
    app = "proactive"
    program = "recirc"
    cpu_priority = "{setting}"
    params = {{ recirc_passes = 100 }}
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h3"]]
    count = 5
    interval = 0.05
    """)


@pytest.mark.usefixtures("needs_daemon")
@pytest.mark.parametrize("setting", ["normal", "high"])
def test_each_run_records_the_setting_and_what_the_kernel_said(tmp_path, setting):
    text = STUDY.format(setting=setting).replace("hosts = 2", "hosts = 3")
    study = load_study_text(text, "prio.toml", tmp_path)
    result = execute_run(study, plan_runs(study)[0], tmp_path / setting)
    assert result.status == "ok", result.error
    facts = result.params["facts"]
    assert result.params["architecture"]["cpu_priority"] == setting
    assert facts["cpu_priority"] == setting
    nice = -10 if setting == "high" else os.getpriority(os.PRIO_PROCESS, 0)
    assert list(facts["switch_scheduling"]["threads"]) == [f"SCHED_OTHER nice {nice}"]
