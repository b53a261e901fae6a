"""Every examples/byo-*.toml runs end to end (one repetition): the study's own controllers
beside ours. byo-remote gets its controller from the test (on 127.0.0.1:6653 of the test's
network namespace); byo-pox needs a POX checkout and byo-bmv2 the reference BMv2."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdnperf.controllers.process import port_open, pox_home, venv_tool
from tests.e2e.support import NEEDS_MININET, bmv2_env

pytestmark = NEEDS_MININET

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("byo-*.toml"))


def run_example(path: Path, out: Path, env: dict) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sdnperf.cli",
            "run",
            str(path),
            "--repetitions",
            "1",
            "--no-report",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "No run failed" in output, output
    return output


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_byo_example_runs(path, tmp_path):
    env, remote = {}, None
    if path.stem == "byo-pox" and pox_home() is None:
        pytest.skip("POX checkout not found ($POX_HOME or pox.py on PATH)")
    if path.stem == "byo-bmv2":
        env.update(bmv2_env())
    if path.stem == "byo-remote":
        if port_open(6653):
            pytest.skip("127.0.0.1:6653 is taken here (run under /work/netns-run)")
        remote = subprocess.Popen(
            [
                venv_tool("osken-manager"),
                "--ofp-listen-host",
                "127.0.0.1",
                "--ofp-tcp-listen-port",
                "6653",
                str(REPO / "examples" / "byo_apps" / "simple_l2.py"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not port_open(6653) and time.monotonic() < deadline:
            time.sleep(0.2)
    try:
        output = run_example(path, tmp_path, env)
    finally:
        if remote is not None:
            remote.terminate()
            remote.wait(timeout=10)
    assert "loss_pct" in output
