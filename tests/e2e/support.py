"""What the end-to-end tests share: the marks that need root + Mininet, and the smallest
workload context over a started Mininet network."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

NEEDS_MININET = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
    pytest.mark.skipif(not shutil.which("mnexec"), reason="needs Mininet"),
]


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
