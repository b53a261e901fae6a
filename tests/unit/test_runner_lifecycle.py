"""The run lifecycle (runner.execute_run / started_network) on a fake network and a fake
architecture: call order, a failure in each step, teardown, control stats, check_alive.
No root, no Mininet: the fake network's hosts replay recorded ping outputs."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from sdnperf.arch.base import Architecture, ArchitectureError
from sdnperf.runner import execute_run, started_network
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs

DATA = Path(__file__).parent / "data"
STUDY = textwrap.dedent("""\
    [study]
    name = "fake"
    seed = 7
    [topology]
    kind = "linear"
    switches = 2
    [[architecture]]
    name = "bridge"
    kind = "bridge"
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = 8
    """)
# The steps the runner calls, in order, for a run that goes well.
LIFECYCLE = [
    "check",
    "prepare",
    "mininet_options",
    "network.start",
    "network_started",
    "wait_ready",
    "control_stats",
    "check_alive",
    "before_network_stop",
    "network.stop",
    "stop",
]


class FakeHost:
    def __init__(self, name: str, ip: str):
        self.name, self.ip = name, ip

    def IP(self):
        return self.ip

    def popen(self, argv, **kwargs):
        recorded = "ping_cold.txt" if argv[argv.index("-c") + 1] == "1" else "ping_steady.txt"
        return subprocess.Popen(["cat", str(DATA / recorded)], **kwargs)


class FakeNet:
    def __init__(self, hosts):
        self.hosts = [FakeHost(h, f"10.0.0.{i}") for i, h in enumerate(hosts, 1)]
        self.switches: list = []

    def get(self, name):
        return next(h for h in self.hosts if h.name == name)


class Lab:
    """A fake network class and a fake architecture class sharing one call log; `fail_at`
    makes that step raise, `dies` makes check_alive report a dead controller."""

    def __init__(
        self, fail_at: str | None = None, dies: bool = False, interrupt_at: str | None = None
    ):
        self.calls: list[str] = []
        self.archs: list[Architecture] = []
        lab = self

        def step(name: str) -> None:
            lab.calls.append(name)
            if name == fail_at:
                raise ArchitectureError(f"{name} went wrong")
            if name == interrupt_at:
                raise KeyboardInterrupt

        class FakeArchitecture(Architecture):
            @classmethod
            def check(cls, config, spec):
                step("check")
                return {"seen_switches": spec.switches()}

            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                lab.archs.append(self)

            def prepare(self):
                step("prepare")

            def mininet_options(self):
                step("mininet_options")
                return {"switch": "fake-switch", "controller": None}

            def network_started(self, net):
                step("network_started")

            def wait_ready(self, net, timeout):
                step("wait_ready")

            def control_stats(self):
                step("control_stats")
                return {"packet_ins": 12, "flow_mods": 4}

            def check_alive(self):
                step("check_alive")
                if dies:
                    raise ArchitectureError("controller fake died during the run")

            def before_network_stop(self):
                step("before_network_stop")

            def stop(self):
                step("stop")

        class FakeNetwork:
            def __init__(
                self, spec, run_dir, mininet_options, netem, ipv6=False, host_offloads=True
            ):
                assert mininet_options["switch"] == "fake-switch"
                self.spec = spec

            def start(self):
                step("network.start")
                return FakeNet(self.spec.hosts())

            def stop(self):
                lab.calls.append("network.stop")

        self.architecture = lambda config: FakeArchitecture
        self.network_class = FakeNetwork


@pytest.fixture
def study(tmp_path):
    return load_study_text(STUDY, "fake.toml", tmp_path)


def run_once(study, tmp_path, lab: Lab):
    return execute_run(
        study,
        plan_runs(study)[0],
        tmp_path / "run",
        network_class=lab.network_class,
        architecture=lab.architecture,
    )


def test_steps_run_once_in_order_and_results_are_kept(study, tmp_path):
    lab = Lab()
    result = run_once(study, tmp_path, lab)
    assert result.status == "ok", result.error
    assert lab.calls == LIFECYCLE
    arch = lab.archs[0]
    assert arch.needs == {"seen_switches": ["s1", "s2"]}  # check's answer reaches __init__
    assert arch.seed == 7 * 1_000_003 + plan_runs(study)[0].repetition
    summaries = {(s.metric, s.unit): s.value for s in result.summaries}
    assert summaries[("packet_ins", "count")] == 12.0  # control stats appended
    assert summaries[("flow_mods", "count")] == 4.0
    assert "rtt_ms" in {s.metric for s in result.summaries}  # and the workload's own
    assert result.samples
    assert result.params["facts"]["architecture"] == "bridge"
    assert result.params["network_ready_s"] >= 0


@pytest.mark.parametrize("step", LIFECYCLE[: LIFECYCLE.index("check_alive")])
def test_a_failing_step_is_a_failed_run_and_everything_started_stops(study, tmp_path, step):
    lab = Lab(fail_at=step)
    result = run_once(study, tmp_path, lab)
    assert result.status == "failed"
    assert result.error == f"ArchitectureError: {step} went wrong"
    assert "went wrong" in (tmp_path / "run" / "traceback.txt").read_text()
    done = lab.calls[: lab.calls.index(step) + 1]
    assert done == LIFECYCLE[: len(done)]  # nothing after the failing step ran but teardown
    teardown = lab.calls[len(done) :]
    if step == "check":  # refused: nothing was started, so nothing is stopped
        assert teardown == []
    elif LIFECYCLE.index(step) < LIFECYCLE.index("network.start"):  # no network built
        assert teardown == ["stop"]
    else:
        assert teardown == ["before_network_stop", "network.stop", "stop"]


def test_a_process_that_died_voids_the_run(study, tmp_path):
    lab = Lab(dies=True)
    result = run_once(study, tmp_path, lab)
    assert result.status == "failed"
    assert "controller fake died" in result.error
    assert lab.calls == LIFECYCLE  # measured, then torn down once


def test_ctrl_c_tears_down_and_propagates(study, tmp_path):
    lab = Lab(interrupt_at="wait_ready")
    with pytest.raises(KeyboardInterrupt):
        run_once(study, tmp_path, lab)
    assert lab.calls[-3:] == ["before_network_stop", "network.stop", "stop"]
    assert lab.calls.count("stop") == 1


def test_started_network_yields_the_ready_network(study, tmp_path):
    lab = Lab()
    config = study.config.architecture[0]
    with started_network(
        study.topology,
        config,
        tmp_path / "run",
        network_class=lab.network_class,
        architecture=lab.architecture,
    ) as started:
        assert [h.name for h in started.net.hosts] == study.topology.hosts()
        assert lab.calls[-1] == "wait_ready"
    assert lab.calls[-3:] == ["before_network_stop", "network.stop", "stop"]


def test_switch_pace_probe_after_the_workload_marks_a_slow_emulator(study, tmp_path, monkeypatch):
    """The recorded probe (min RTT 0.032 ms over the 2 switches of linear-2) is a fast
    switch; the same reading against a far smaller baseline is emulator-bound."""
    from sdnperf.fidelity import hops

    result = run_once(study, tmp_path, Lab())
    assert result.cpu.switch_ms == pytest.approx(0.032 / 4)
    assert not result.cpu.emulator_bound and result.cpu.emulator_reason == ""
    monkeypatch.setattr(hops, "BASELINE_HOP_MS", 0.001)
    result = run_once(study, tmp_path, Lab())
    assert result.status == "ok" and result.cpu.emulator_bound
    assert "one switch took 0.01 ms" in result.cpu.emulator_reason
    assert not result.cpu.cpu_bound or "emulator" not in result.cpu.reason  # two marks, apart


def test_a_workload_failed_by_a_dead_process_says_the_process(study, tmp_path, monkeypatch):
    """When the controller dies mid-run the workload usually fails too (pings hang): the
    stored reason is the death, not its symptom."""
    import sdnperf.workloads.base

    def broken(workload, ctx):
        raise RuntimeError("ping hung")

    monkeypatch.setattr(sdnperf.workloads.base, "run_workload", broken)
    result = run_once(study, tmp_path, Lab(dies=True))
    assert result.status == "failed"
    assert "controller fake died" in result.error
    healthy = run_once(study, tmp_path, Lab())
    assert healthy.error == "RuntimeError: ping hung"
