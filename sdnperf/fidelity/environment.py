"""The conditions a study ran under: kernel, hardware, tool versions, kernel features.

`collect()` is stored with every study so each figure can be read with its context.
It is fast (the probes run in parallel, well under a second) and never raises: whatever
cannot be found is None, and a probe that fails says so in its value.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from sdnperf.emulation import capabilities

PROBE_TIMEOUT_S = 2.0  # per external command; they normally answer in milliseconds

# name -> (command, regex picking the version out of its stdout+stderr)
TOOLS: dict[str, tuple[list[str], str]] = {
    "openvswitch": (["ovs-vswitchd", "--version"], r"Open vSwitch\)\s*(\S+)"),
    "iperf3": (["iperf3", "--version"], r"iperf\s+(3\S*)"),
    "iperf": (["iperf", "-v"], r"iperf version\s+(\S+)"),
    "ping": (["ping", "-V"], r"iputils[- ]?(\S+)"),
    "tc": (["tc", "-V"], r"iproute2[- ]?(\S+)"),
}
PYTHON_PACKAGES = {
    "mininet": "mininet",
    "os_ken": "os-ken",
    "faucet": "faucet",
    "sdnperf": "sdnperf",
}


def collect(datapath: str | None = None) -> dict:
    """Environment facts as a flat, JSON-friendly dict. `datapath` is what the run used
    (e.g. "kernel" or "netdev"); it is recorded as given."""
    env: dict = {"datapath": datapath}
    probes: dict[str, Callable[[], object]] = {
        "netem": netem_usable,
        **{name: functools.partial(tool_version, argv, rx) for name, (argv, rx) in TOOLS.items()},
    }
    with ThreadPoolExecutor(max_workers=len(probes)) as pool:
        futures = {name: pool.submit(_safe, fn) for name, fn in probes.items()}
        env.update({key: _safe(fn) for key, fn in MACHINE_FACTS.items()})
        for name, package in PYTHON_PACKAGES.items():
            env[name] = _safe(functools.partial(importlib.metadata.version, package))
        env["ovs_kernel_module"] = _safe(capabilities.ovs_kernel_module)
        results = {name: f.result() for name, f in futures.items()}
    netem = results.pop("netem") or {}
    env["netem"] = netem.get("usable") if isinstance(netem, dict) else None
    env["netem_detail"] = netem.get("detail") if isinstance(netem, dict) else None
    env.update(results)
    return env


def _safe(fn: Callable[[], object]):
    try:
        return fn()
    except Exception:  # an environment record must never stop a study
        return None


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return m[1] if m else None


def _cpuinfo_model() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    m = re.search(r"^(?:model name|Model|cpu model)\s*:\s*(.+)$", text, re.M)
    return m[1].strip() if m else platform.processor() or None


def _mem_total_mb() -> int | None:
    try:
        m = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
    except OSError:
        return None
    return int(m[1]) // 1024 if m else None


MACHINE_FACTS: dict[str, Callable[[], object]] = {
    "kernel": platform.release,
    "distro": _os_release,
    "cpu_model": _cpuinfo_model,
    "cpu_cores": os.cpu_count,
    "memory_mb": _mem_total_mb,
    "python": platform.python_version,
    "hostname": platform.node,
}


def tool_version(argv: list[str], pattern: str) -> str | None:
    """Version of an installed tool, None when absent; its first output line if the
    version cannot be picked out."""
    if not shutil.which(argv[0]):
        return None
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    text = proc.stdout + proc.stderr
    m = re.search(pattern, text)
    if m:
        return m[1].rstrip(",")
    first = text.strip().splitlines()
    return first[0] if first else None


def netem_usable() -> dict:
    """Whether the kernel can emulate delay/loss (probed in a throwaway namespace)."""
    if os.geteuid() != 0:
        return {"usable": None, "detail": "not checked: needs root"}
    cap = capabilities.netem()
    return {"usable": cap.ok, "detail": cap.detail}
