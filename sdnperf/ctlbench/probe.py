"""Finding and running the Rust load generator `sdnperf-probe`."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from sdnperf.ctlbench.config import LoadSection

REPO = Path(__file__).resolve().parents[2]
BUILD_HINT = ("build it with: cd rust && CARGO_TARGET_DIR=target-probe cargo build --release "
              "-p sdnperf-probe (or set SDNPERF_PROBE to its path)")


class ProbeError(RuntimeError):
    pass


def binary() -> str:
    """$SDNPERF_PROBE, else the newest built rust/target*/release/sdnperf-probe, else PATH."""
    env = os.environ.get("SDNPERF_PROBE")
    if env:
        if not Path(env).is_file():
            raise ProbeError(f"SDNPERF_PROBE={env}: no such file")
        return env
    cands = [p for p in (REPO / "rust").glob("target*/release/sdnperf-probe") if p.is_file()]
    if cands:
        return str(max(cands, key=lambda p: p.stat().st_mtime))
    found = shutil.which("sdnperf-probe")
    if found:
        return found
    raise ProbeError(f"sdnperf-probe not found; {BUILD_HINT}")


def openflow_argv(probe: str, address: str, load: LoadSection, switches: int,
                  rate: float | None, extra: list[str] | None = None,
                  mode: str | None = None, duration: float | None = None,
                  warmup: float | None = None) -> list[str]:
    mode = mode or load.mode
    argv = [probe, "openflow", "--controller", address, "--switches", str(switches),
            "--mode", mode, "--window", str(load.window),
            "--warmup", f"{load.warmup if warmup is None else warmup:g}",
            "--duration", f"{load.duration if duration is None else duration:g}",
            "--drain", f"{load.drain:g}", "--timeout", f"{load.timeout:g}",
            "--hosts", str(load.hosts), "--ports", str(load.ports),
            "--threads", str(load.threads), "--interval", f"{load.interval:g}"]
    if mode == "rate":
        argv += ["--rate", f"{rate:g}"]
    if load.packets and duration is None:
        argv += ["--packets", str(load.packets)]
    if load.buffer_ids:
        argv.append("--buffer-ids")
    return argv + list(extra or [])


def time_limit(load: LoadSection) -> float:
    """Seconds after which a probe run is overdue (it has a fixed timeline)."""
    return 10 + 1 + load.warmup + load.duration + load.drain + 30


def start(argv: list[str], log_path: Path) -> subprocess.Popen:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    err = open(log_path, "wb")
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
    finally:
        err.close()
