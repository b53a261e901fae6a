"""What the end-to-end tests share: the marks that need root + Mininet, and the smallest
workload context over a started Mininet network."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from sdnperf import tools

NEEDS_MININET = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
    pytest.mark.skipif(not shutil.which("mnexec"), reason="needs Mininet"),
]
# a small topology of every built-in kind that the reachability tests build (params)
TOPOLOGIES = {
    "single": {"hosts": 3},
    "linear": {"switches": 3},
    "tree": {"depth": 2, "fanout": 2},
    "campus": {},
    "spine-leaf": {"spines": 2, "leaves": 3, "hosts_per_leaf": 1},
    "grid": {"rows": 2, "cols": 3},
}
# our P4Runtime switch daemon must be built (conftest.py's needs_daemon fixture)
NEEDS_DAEMON = pytest.mark.usefixtures("needs_daemon")
REPO = Path(__file__).resolve().parents[2]


def sdnperf_cli(*argv: str, env=None, timeout: float = 900) -> subprocess.CompletedProcess:
    """`sdnperf ARGV...` as a user runs it (this Python, from the repository's root, where
    the examples/ paths resolve); its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def bmv2_env(binary: str = "simple_switch_grpc") -> dict[str, str]:
    """{$SDNPERF_BMV2_DIR: the folder of BMv2's `binary`} for a run's environment, found by
    tools.find_bmv2 (the reference bundle ../shared/p4-reference included); skips the test,
    saying where it looked, when there is none."""
    found = tools.find_bmv2(binary, reference=True)
    if found is None:
        pytest.skip(f"BMv2: {tools.bmv2_hint(binary, reference=True)}")
    return {tools.BMV2_ENV: str(Path(found).parent)}


class NetContext:
    """The smallest WorkloadContext: a started Mininet network."""

    def __init__(self, net):
        self.net = net
        self.host_names = [h.name for h in net.hosts]
        self.seed = 1
        self.results_dir = None
        self.pids: list[int] = []
        self.messages: list[str] = []

    def host(self, name):
        return self.net.get(name)

    def log(self, msg):
        self.messages.append(msg)

    def on_process(self, pid):
        self.pids.append(pid)


@contextmanager
def bridge_network(topo, settle_s: float = 0.0, **mininet_args):
    """A started Mininet network of Linux bridges on `topo` (no controller, no OVS) as a
    NetContext, `settle_s` after its start; stopped afterwards."""
    from mininet.net import Mininet
    from mininet.nodelib import LinuxBridge

    net = Mininet(topo=topo, switch=LinuxBridge, controller=None, **mininet_args)
    try:
        net.start()
        time.sleep(settle_s)
        yield NetContext(net)
    finally:
        net.stop()


def summary_metrics(out, workload: str | None = None) -> dict[str, float]:
    """A workload output's summaries, metric -> value (of `workload` only, if given)."""
    return {s.metric: s.value for s in out.summaries if workload is None or s.workload == workload}


def assert_all_reaped(ctx: NetContext) -> None:
    """No process a workload started (ctx.pids) is left."""
    for pid in ctx.pids:
        assert not os.path.exists(f"/proc/{pid}"), f"process {pid} left behind: {_describe(pid)}"


def _describe(pid: int) -> str:
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        state = [line for line in open(f"/proc/{pid}/status") if line.startswith(("State", "PPid"))]
        return f"{cmd!r} {' '.join(x.strip() for x in state)} (we are {os.getpid()})"
    except OSError:
        return "(gone)"


class WrongAddressContext(NetContext):
    """A context whose host h2 claims an address it does not have: its servers cannot bind
    and connections to it fail, so workloads must report the failure and reap everything."""

    def host(self, name):
        real = super().host(name)
        if name != "h2":
            return real

        class Liar:
            def __getattr__(self, attr):
                return getattr(real, attr)

            def IP(self):
                return "10.255.255.254"

        return Liar()


def iperf3_tcp(client, server, port: int = 5301, seconds: int = 1) -> dict:
    """One TCP iperf3 run from Mininet host `client` to `server`; its JSON report.

    The server is a background job, not `-D`: its PID is known, so a server whose client
    never came is killed here instead of outliving the test."""
    pid = int(server.cmd(f"iperf3 -s -1 -p {port} >/dev/null 2>&1 & echo $!").split()[-1])
    try:
        for _ in range(50):  # the server listens a moment after it starts
            if f":{port}" in server.cmd("ss -ltn"):
                break
            time.sleep(0.05)
        out = client.cmd(f"iperf3 -c {server.IP()} -p {port} -t {seconds} -J")
    finally:
        server.cmd(f"kill {pid} 2>/dev/null; wait {pid} 2>/dev/null")
    return json.loads(out[out.index("{") :])


def switch_binary(name: str) -> str:
    """A built switch binary, or the test is skipped naming what is missing."""
    from sdnperf import tools

    try:
        return tools.find(name)
    except tools.ToolNotFound as e:
        pytest.skip(str(e))


@contextmanager
def veth_pairs_in_namespace(prefix: str, n: int = 2):
    """A fresh network namespace PREFIX<pid> holding N up veth pairs; yields (ns, [(switch
    end, far end), ...]) and deletes the namespace (and so the pairs) afterwards."""
    tag = f"{os.getpid() % 100000}"
    ns = f"{prefix}{tag}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        pairs = []
        for i in range(1, n + 1):
            dev, peer = f"{prefix[:3]}{i}s{tag}", f"{prefix[:3]}{i}p{tag}"
            subprocess.run(
                ["ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", peer],
                check=True,
            )
            for d in (dev, peer):
                subprocess.run(["ip", "-n", ns, "link", "set", d, "up"], check=True)
            pairs.append((dev, peer))
        yield ns, pairs
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def recirc_network(run_dir: Path, topology: str, topo_params: dict, program: str, **fields):
    """The recirculation tests' set-up: a started network (runner.started_network) of
    `topology` whose P4 switches run `program` (recirc.p4, recirc_hold.p4) with proactive
    entries; `fields`: more P4Config fields (params = {"recirc_passes": N, ...}, target,
    cpu_priority, recirc_pace_us)."""
    # imported here: this module is imported where Mininet may be missing (tests skip)
    from sdnperf.arch.config import P4Config
    from sdnperf.runner import started_network
    from sdnperf.topo.registry import build_topology

    spec = build_topology(topology, topo_params, seed=1)
    config = P4Config(kind="p4", name="p4", app="proactive", program=program, **fields)
    return started_network(spec, config, run_dir)


def switch_recirculations(sw) -> int:
    """Our switch's own count of recirculation passes (`ctl stats`)."""
    return int(re.search(r"recirculations=(\d+)", sw.ctl("stats")).group(1))


def ping_min_ms(out: str) -> float:
    """The minimum RTT of `ping`'s summary line (rtt min/avg/max/mdev = MIN/...)."""
    return float(re.search(r"= ([\d.]+)/", out).group(1))


# Host-side frame tools for switch tests, run as `python -c SCRIPT ...` inside a host's
# network namespace (raw AF_PACKET sockets: frames of any ethertype, no IP stack).
# SNIFF IFACE SECONDS ETHERTYPE_HEX: prints "ready", then the hex of each frame of that
# ethertype received (not sent) on IFACE until SECONDS have passed.
SNIFF = textwrap.dedent("""
    import select, socket, sys, time
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((sys.argv[1], 0))
    ethertype = bytes.fromhex(sys.argv[3])
    print("ready", flush=True)
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        if select.select([s], [], [], 0.05)[0]:
            data, addr = s.recvfrom(65535)
            if addr[2] != socket.PACKET_OUTGOING and data[12:14] == ethertype:
                print(data.hex(), flush=True)
""")
# SEND IFACE FRAME_HEX...: sends each frame once, in order, on IFACE.
SEND = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[1], 0))
    for h in sys.argv[2:]:
        s.send(bytes.fromhex(h))
""")
