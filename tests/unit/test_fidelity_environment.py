"""The environment record: every key present, fast, never raising."""

import os
import subprocess
import time

from sdnperf.fidelity import environment
from sdnperf.fidelity.environment import collect

KEYS = {
    "datapath",
    "kernel",
    "distro",
    "cpu_model",
    "cpu_cores",
    "memory_mb",
    "python",
    "mininet",
    "openvswitch",
    "iperf3",
    "iperf",
    "ping",
    "os_ken",
    "faucet",
    "netem",
    "netem_detail",
    "ovs_kernel_module",
}


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def test_keys_present_and_fast():
    before = _namespaces() if os.geteuid() == 0 else set()
    t = time.monotonic()
    env = collect(datapath="netdev")
    assert time.monotonic() - t < 1.0
    assert KEYS <= env.keys()
    assert env["datapath"] == "netdev"
    assert env["kernel"] and env["python"] and env["cpu_cores"] >= 1
    assert env["netem"] in (True, False, None) and env["ovs_kernel_module"] in (True, False, None)
    if os.geteuid() == 0:
        assert env["netem"] is not None, env["netem_detail"]
        leftovers = {ns for ns in _namespaces() - before if ns.startswith("sdnperf-envprobe-")}
        assert not leftovers


def test_versions_are_short_strings_when_tools_exist():
    env = collect()
    for tool in ("iperf3", "ping", "openvswitch"):
        if env[tool] is not None:
            assert " " not in env[tool] and any(c.isdigit() for c in env[tool])


def test_missing_tools_give_none(monkeypatch):
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    env = collect()
    assert env["iperf3"] is None and env["openvswitch"] is None and env["ping"] is None


def test_never_raises(monkeypatch):
    def boom(*a, **k):
        raise OSError("no such thing")

    monkeypatch.setattr(environment.subprocess, "run", boom)
    monkeypatch.setattr(environment.capabilities, "netem", boom)  # probes are cached there
    monkeypatch.setitem(environment.MACHINE_FACTS, "kernel", boom)
    env = collect("kernel")
    assert env["datapath"] == "kernel" and env["iperf3"] is None and env["netem"] is None
    assert env["kernel"] is None and env["python"]
