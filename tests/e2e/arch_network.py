"""A started Mininet network under one architecture, as a context manager, for tests that
drive the network themselves (ping by hand, read switch counters):

    with started_network(spec, P4Config(...), tmp_path / "run") as (net, arch):
        net.get("h1").cmd("ping ...")
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from sdnperf.arch import make_architecture
from sdnperf.emulation.network import Network


@contextmanager
def started_network(spec, config, run_dir: Path, ready_timeout: float = 90):
    arch = make_architecture(config, run_dir)
    arch.check(spec)
    network = Network(spec, arch, run_dir)
    try:
        arch.prepare(spec)
        yield network.start(ready_timeout=ready_timeout), arch
    finally:
        network.stop()
        arch.stop()
