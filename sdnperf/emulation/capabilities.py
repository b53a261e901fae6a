"""What this machine's kernel and tools can do, detected (never assumed).

Each probe is cheap, side-effect free for the rest of the system (anything it creates lives
in a throwaway network namespace), cached for the process, and returns a `Capability` that
says *why* when the answer is no, so `doctor` and study validation can explain it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Capability:
    name: str
    ok: bool
    detail: str  # what was found, or why not and what it prevents


def _run(argv: list[str], timeout: float = 5.0) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@functools.cache
def ovs_kernel_module() -> bool:
    if Path("/sys/module/openvswitch").exists():
        return True
    if shutil.which("modprobe") and os.geteuid() == 0:
        return _run(["modprobe", "-q", "openvswitch"]).returncode == 0
    return False


@functools.cache
def qdisc_available(kind: str, args: tuple[str, ...] = ()) -> Capability:
    """Try `tc qdisc add ... KIND` on a dummy interface inside a throwaway namespace."""
    if not shutil.which("tc") or not shutil.which("ip"):
        return Capability(kind, False, "iproute2 (ip, tc) not installed")
    if os.geteuid() != 0:
        return Capability(kind, False, "needs root to probe")
    ns = f"sdnperf-probe-{uuid.uuid4().hex[:8]}"
    try:
        if _run(["ip", "netns", "add", ns]).returncode != 0:
            return Capability(kind, False, "cannot create a network namespace")
        # veth, not dummy: the dummy module is not present on every kernel.
        _run(["ip", "-n", ns, "link", "add", "d0", "type", "veth", "peer", "name", "d1"])
        proc = _run(
            ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "d0", "root", kind, *args]
        )
        if proc.returncode == 0:
            return Capability(kind, True, f"sch_{kind} works")
        return Capability(
            kind, False, f"sch_{kind} missing from this kernel ({proc.stderr.strip()})"
        )
    finally:
        _run(["ip", "netns", "del", ns])


def netem() -> Capability:
    cap = qdisc_available("netem", ("delay", "1ms"))
    if cap.ok:
        return cap
    return Capability(
        "netem",
        False,
        f"{cap.detail}: link delay, jitter and loss cannot be emulated by the kernel",
    )


def htb() -> Capability:
    return qdisc_available("htb")


def ovs_datapath() -> Capability:
    if ovs_kernel_module():
        return Capability("ovs-datapath", True, "kernel (openvswitch module loaded)")
    return Capability(
        "ovs-datapath",
        True,
        "userspace netdev (no openvswitch kernel module; sdnperf uses datapath_type=netdev)",
    )


def tool(name: str, version_args: tuple[str, ...] = ("--version",)) -> Capability:
    path = shutil.which(name)
    if not path:
        return Capability(Path(name).name, False, "not installed")
    try:
        proc = _run([path, *version_args])
        text = (proc.stdout or proc.stderr).strip().splitlines()
        return Capability(Path(name).name, True, text[0] if text else path)
    except (subprocess.TimeoutExpired, OSError) as exc:
        return Capability(name, False, f"found at {path} but did not run: {exc}")


@functools.cache
def bridge_vlan_filtering() -> Capability:
    """A Linux bridge with vlan_filtering (the kernel's VLAN tagging chain), tried in a
    throwaway namespace: kernels built without CONFIG_BRIDGE_VLAN_FILTERING refuse it."""
    name = "bridge-vlan-filtering"
    if not shutil.which("ip"):
        return Capability(name, False, "iproute2 (ip) not installed")
    if os.geteuid() != 0:
        return Capability(name, False, "needs root to probe")
    ns = f"sdnperf-probe-{uuid.uuid4().hex[:8]}"
    try:
        if _run(["ip", "netns", "add", ns]).returncode != 0:
            return Capability(name, False, "cannot create a network namespace")
        proc = _run(["ip", "-n", ns, "link", "add", "b0", "type", "bridge", "vlan_filtering", "1"])
        if proc.returncode == 0:
            return Capability(name, True, "Linux bridges filter VLANs")
        return Capability(
            name,
            False,
            "this kernel's bridges cannot filter VLANs "
            f"(CONFIG_BRIDGE_VLAN_FILTERING; {proc.stderr.strip()}): the kernel "
            "VLAN tagging chain (bridge with vlan = N) cannot run",
        )
    finally:
        _run(["ip", "netns", "del", ns])
