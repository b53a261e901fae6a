"""Finding and running the Rust load generator `sdnperf-probe`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from sdnperf import tools
from sdnperf.ctlbench.config import LoadSection


class ProbeError(RuntimeError):
    pass


def binary() -> str:
    """sdnperf-probe, found as every Rust binary is (sdnperf/tools.py)."""
    try:
        return tools.find("sdnperf-probe")
    except tools.ToolNotFound as exc:
        raise ProbeError(str(exc)) from None


def openflow_argv(
    probe: str,
    address: str,
    load: LoadSection,
    switches: int,
    rate: float | None,
    extra: list[str] | None = None,
    mode: str | None = None,
    duration: float | None = None,
    warmup: float | None = None,
) -> list[str]:
    argv = _load_argv(probe, load, switches, rate, mode, duration, warmup)
    argv[2:2] = ["--controller", address]
    if load.buffer_ids:
        argv.append("--buffer-ids")
    return argv + list(extra or [])


def p4runtime_argv(
    probe: str,
    devices_file: Path,
    load: LoadSection,
    switches: int,
    rate: float | None,
    listen: str | None = None,
    mode: str | None = None,
    duration: float | None = None,
    warmup: float | None = None,
) -> list[str]:
    """The probe as P4Runtime devices; they listen on `listen` (device 1; the others on
    the next ports) or on free ports, and announce their addresses in `devices_file`."""
    argv = _load_argv(probe, load, switches, rate, mode, duration, warmup, "p4runtime")
    argv += ["--devices-file", str(devices_file), "--connect-timeout", f"{P4RT_CONNECT_TIMEOUT:g}"]
    if listen:
        argv += ["--listen", listen]
    return argv


# the controller is started after the devices listen; Python controllers take seconds to
# import, compile and connect
P4RT_CONNECT_TIMEOUT = 60.0


def _load_argv(
    probe: str,
    load: LoadSection,
    switches: int,
    rate: float | None,
    mode: str | None,
    duration: float | None,
    warmup: float | None,
    command: str = "openflow",
) -> list[str]:
    mode = mode or load.mode
    argv = [
        probe,
        command,
        "--switches",
        str(switches),
        "--mode",
        mode,
        "--window",
        str(load.window),
        "--warmup",
        f"{load.warmup if warmup is None else warmup:g}",
        "--duration",
        f"{load.duration if duration is None else duration:g}",
        "--drain",
        f"{load.drain:g}",
        "--timeout",
        f"{load.timeout:g}",
        "--hosts",
        str(load.hosts),
        "--ports",
        str(load.ports),
        "--threads",
        str(load.threads),
        "--interval",
        f"{load.interval:g}",
    ]
    if mode == "rate":
        argv += ["--rate", f"{rate:g}"]
    if load.packets and duration is None:
        argv += ["--packets", str(load.packets)]
    return argv


def time_limit(load: LoadSection) -> float:
    """Seconds after which a probe run is overdue (it has a fixed timeline)."""
    connect = P4RT_CONNECT_TIMEOUT if load.protocol == "p4runtime" else 10
    return connect + 1 + load.warmup + load.duration + load.drain + 30


def wait_devices(devices_file: Path, proc: subprocess.Popen, timeout: float = 15.0) -> list[dict]:
    """The devices a P4Runtime probe announced ([{device_id, address}]), once it listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if devices_file.exists():
            try:
                return json.loads(devices_file.read_text())["devices"]
            except (OSError, ValueError, KeyError):
                pass
        if proc.poll() is not None:
            raise ProbeError(
                f"the probe exited (code {proc.returncode}) before its P4Runtime devices listened"
            )
        time.sleep(0.02)
    raise ProbeError(
        f"the probe's P4Runtime devices did not listen within {timeout:.0f}s "
        f"({devices_file} not written)"
    )


def start(argv: list[str], log_path: Path) -> subprocess.Popen:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    err = open(log_path, "wb")
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
    finally:
        err.close()
