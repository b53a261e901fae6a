"""What the end-to-end tests share: the marks that need root + Mininet, and the smallest
workload context over a started Mininet network."""
from __future__ import annotations

import os
import shutil

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
        self.pids: list[int] = []
        self.messages: list[str] = []

    def host(self, name):
        return self.net.get(name)

    def log(self, msg):
        self.messages.append(msg)

    def on_process(self, pid):
        self.pids.append(pid)
