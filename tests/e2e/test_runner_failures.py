"""A run whose controller dies mid-workload is stored as failed with the reason; the
network is still torn down completely."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
import time
from pathlib import Path

from sdnperf.runner import execute_run
from sdnperf.study.loader import load_study_text
from sdnperf.study.plan import plan_runs
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

STUDY = textwrap.dedent("""\
    [study]
    name = "crash"
    repetitions = 1
    [topology]
    kind = "linear"
    switches = 2
    [[architecture]]
    name = "openflow"
    kind = "openflow"
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = 40
    interval = 0.1
    """)


def _controller_pid(run_dir: Path) -> int | None:
    marker = str(run_dir).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (
                    marker in (entry / "environ").read_bytes()
                    and b"osken-manager" in (entry / "cmdline").read_bytes()
                ):
                    return int(entry.name)
            except OSError:
                continue
    return None


def test_controller_crash_mid_run_is_a_failed_run(tmp_path):
    study = load_study_text(STUDY, "crash.toml", tmp_path)
    run = plan_runs(study)[0]
    run_dir = tmp_path / "run"
    killed = []

    def kill_controller_during_workload():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = run_dir / "controller-state.json"
            pid = _controller_pid(run_dir)
            if pid and state.exists() and '"packet_ins": 0' not in state.read_text():
                os.kill(pid, signal.SIGKILL)  # traffic is flowing: crash the controller
                killed.append(pid)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_controller_during_workload)
    killer.start()
    result = execute_run(study, run, run_dir)
    killer.join()
    assert killed, "the controller was killed during the run"
    assert result.status == "failed"
    assert "controller" in result.error and "died" in result.error
