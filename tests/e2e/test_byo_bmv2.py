"""BMv2 as a real P4 target: the reference simple_switch_grpc (tools.find_bmv2: ../shared/
p4-reference, or $SDNPERF_BMV2_DIR) beside our switch on the same 3-switch topology and the same traffic,
under sdnperf's P4Runtime controller. Every BMv2 gets its own Thrift port and notifications
socket (their defaults, 9090 and ipc:///tmp/bmv2-<id>-notifications.ipc, collide)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sdnperf.runner import execute_run
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET, bmv2_env

pytestmark = NEEDS_MININET

STUDY = textwrap.dedent("""\
    [study]
    name = "bmv2"
    repetitions = 1
    [topology]
    kind = "linear"
    switches = 3
    [[architecture]]
    name = "ours"
    kind = "p4"
    app = "l2-learning"
    [[architecture]]
    name = "bmv2"
    kind = "p4"
    app = "l2-learning"
    target = "bmv2"
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h3"]]
    count = 10
    interval = 0.1
    [[workload]]
    name = "tcp"
    kind = "iperf-tcp"
    pairs = [["h1", "h3"]]
    duration = 2
    """)


@pytest.fixture
def bmv2(monkeypatch):
    env = bmv2_env()
    from sdnperf import tools

    if tools.locate("sdnperf-switch-grpc") is None:
        pytest.skip("sdnperf-switch-grpc is not built")
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def _argv_of(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_bmv2_beside_our_switch(bmv2, tmp_path, monkeypatch):
    study = load_study_text(STUDY, "bmv2.toml", tmp_path)
    seen: dict[str, list[list[str]]] = {}
    import sdnperf.runner as runner

    real = runner.started_network

    def spying(*args, **kwargs):  # the switch processes' command lines, while they run
        cm = real(*args, **kwargs)

        class Spy:
            def __enter__(self):
                started = cm.__enter__()
                pids = started.arch.processes().get("switch", [])
                seen[started.arch.name] = [_argv_of(p) for p in pids]
                return started

            def __exit__(self, *exc):
                return cm.__exit__(*exc)

        return Spy()

    monkeypatch.setattr(runner, "started_network", spying)
    results = {}
    for run in plan_runs(study):
        result = execute_run(study, run, tmp_path / run.key.replace("|", "_"))
        assert result.status == "ok", f"{run.key}: {result.error}"
        results[(run.architecture.name, run.workload.name)] = result
    for arch in ("ours", "bmv2"):
        loss = next(s.value for s in results[(arch, "ping")].summaries if s.metric == "loss_pct")
        assert loss == 0, arch
        mbps = next(
            s.value for s in results[(arch, "tcp")].summaries if s.metric == "throughput_mbps"
        )
        assert mbps > 0, arch
        assert results[(arch, "ping")].params["facts"]["target"] == (
            "bmv2" if arch == "bmv2" else "sdnperf"
        )
    bmv2_argvs = seen["bmv2"]
    assert len(bmv2_argvs) == 3 and all(Path(a[0]).name == "simple_switch_grpc" for a in bmv2_argvs)

    def values(flag):
        return {a[a.index(flag) + 1] for a in bmv2_argvs}

    assert len(values("--thrift-port")) == 3 and "9090" not in values("--thrift-port")
    assert len(values("--notifications-addr")) == 3
    assert values("--device-id") == {"1", "2", "3"}
    assert all(Path(a[0]).name == "sdnperf-switch-grpc" for a in seen["ours"])
