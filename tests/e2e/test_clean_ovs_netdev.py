"""Our private OVS daemons on the userspace datapath: they run with the lab's
`other_config` (the settings each run's facts and the study's provenance record), and
`sdnperf clean` after kill -9 also removes the `ovs-netdev` device of the userspace datapath
(a clean stop removes it; a killed study's daemons, terminated by clean, leave it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sdnperf.emulation import cleanup
from sdnperf.emulation.ovs import (
    USERSPACE_DATAPATH_DEVICE,
    USERSPACE_OTHER_CONFIG,
    OvsDaemons,
    pid_running,
)
from tests.e2e.support import NEEDS_MININET

pytestmark = NEEDS_MININET

# A study process reduced to what matters: private OVS daemons with the userspace datapath
# and one bridge (which makes ovs-netdev), then killed with -9 as a user would.
STUDY_PROCESS = textwrap.dedent("""\
    import os, sys
    from pathlib import Path
    from sdnperf.emulation.ovs import OvsDaemons
    ovs = OvsDaemons(Path(sys.argv[1]), datapath="user")
    ovs.start()
    ovs.vsctl("add-br", "ndv9", "--", "set", "Bridge", "ndv9", "datapath_type=netdev")
    print(*ovs.pids().values(), flush=True)
    sys.stdin.read()  # until killed
    """)


def device(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def test_clean_after_kill_9_removes_ovs_netdev(tmp_path, monkeypatch):
    if device(USERSPACE_DATAPATH_DEVICE):
        pytest.skip(f"{USERSPACE_DATAPATH_DEVICE} exists already (another userspace OVS runs)")
    run_root = tmp_path / "runroot"
    tag = f"sdnperf-{os.getpid() + 4_000_000}-{int(time.time())}"  # an owner that is gone
    monkeypatch.setattr(cleanup, "RUN_ROOT", run_root)
    env = {**os.environ, cleanup.TAG_ENV: tag, "SDNPERF_RUN_ROOT": str(run_root)}
    study = subprocess.Popen(
        [sys.executable, "-c", STUDY_PROCESS, str(run_root / tag / "run0001/ovs")],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        daemons = [int(pid) for pid in study.stdout.readline().split()]
        deadline = time.monotonic() + 10
        while not device(USERSPACE_DATAPATH_DEVICE) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert device(USERSPACE_DATAPATH_DEVICE), "the userspace datapath made no ovs-netdev"
    finally:
        study.kill()
        study.wait()
    assert len(daemons) == 2 and all(map(pid_running, daemons)), "OVS outlives the study"
    try:
        report = cleanup.clean(tag)
        assert USERSPACE_DATAPATH_DEVICE in report.interfaces
        assert not device(USERSPACE_DATAPATH_DEVICE)
        assert not any(map(pid_running, daemons))
        assert list(run_root.iterdir()) == []
    finally:  # whatever failed above, leave the kernel as it was
        for pid in filter(pid_running, daemons):
            os.kill(pid, 9)
        for name in ("ndv9", USERSPACE_DATAPATH_DEVICE):
            if device(name):
                subprocess.run(["ip", "link", "del", name], capture_output=True)


def test_userspace_daemons_run_with_the_settings_the_run_records(tmp_path):
    """What a run's facts (`ovs_other_config`) and the provenance say OVS ran with is what
    the private ovs-vswitchd was given (issue 27: the userspace datapath's cost cut)."""
    ovs = OvsDaemons(tmp_path / "ovs", datapath="user")
    assert ovs.other_config == USERSPACE_OTHER_CONFIG
    assert "max-revalidator" in ovs.other_config
    ovs.start()
    daemons = list(ovs.pids().values())
    try:
        assert len(daemons) == 2
        for key, value in USERSPACE_OTHER_CONFIG.items():
            got = ovs.vsctl("get", "Open_vSwitch", ".", f"other_config:{key}").strip()
            assert got.strip('"') == value, (key, got)
    finally:
        ovs.stop()
    assert not any(map(pid_running, daemons))
