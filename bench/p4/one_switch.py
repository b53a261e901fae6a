"""The set-up the packet-in benches share: one sdnperf-switch-grpc between two veth pairs,
driven by sdnperf's P4Runtime controller (l2-learning). Root, in a private namespace."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnperf import (
    p4,  # noqa: E402
    tools,  # noqa: E402
)
from sdnperf.controllers import process  # noqa: E402


@contextlib.contextmanager
def switch_and_controller(prefix: str, transport: str, ready_timeout: float = 10.0):
    """Veth pairs {prefix}1a/{prefix}1b and {prefix}2a/{prefix}2b (IPv6 off), the switch on
    the b ends (ports 1 and 2, CPU port 255) and the controller, primary and ready.

    Yields (switch process, controller, run dir); the switch's log (exit counters) stays in
    the run dir. Everything else is stopped and removed on exit.
    """
    pairs = [(f"{prefix}{n}a", f"{prefix}{n}b") for n in (1, 2)]
    for a, b in pairs:
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        for i in (a, b):
            subprocess.run(["ip", "link", "set", i, "up"], check=True)
            Path(f"/proc/sys/net/ipv6/conf/{i}/disable_ipv6").write_text("1")
    prog = p4.compiled("l2l3")
    port = process.free_port()
    run_dir = Path(tempfile.mkdtemp(prefix=f"p4-{prefix}-"))
    with open(run_dir / "switch.log", "w") as log:
        sw = subprocess.Popen(
            [
                tools.find("sdnperf-switch-grpc"),
                "-i",
                f"1@{pairs[0][1]}",
                "-i",
                f"2@{pairs[1][1]}",
                "--cpu-port",
                "255",
                "--grpc-port",
                str(port),
                "--device-id",
                "1",
                "--die-with-parent",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    ctl = None
    try:
        time.sleep(0.5)
        ctl = process.p4rt_controller(
            {
                "app": "l2-learning",
                "p4info": str(prog.p4info),
                "device_config": str(prog.json),
                "transport": transport,
                "switches": [
                    {"name": "s1", "device_id": 1, "address": f"127.0.0.1:{port}", "ports": [1, 2]}
                ],
            },
            run_dir,
        )
        ctl.start()
        deadline = time.monotonic() + ready_timeout
        while not (ctl.state() or {}).get("ready"):
            if time.monotonic() > deadline:
                raise SystemExit(f"controller not ready:\n{ctl.log_tail()}")
            time.sleep(0.05)
        yield sw, ctl, run_dir
    finally:
        if ctl is not None:
            ctl.stop()
        sw.terminate()
        sw.wait(timeout=5)
        for a, _ in pairs:
            subprocess.run(["ip", "link", "del", a], capture_output=True)
