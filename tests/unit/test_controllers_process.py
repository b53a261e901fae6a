"""free_port: ports for our daemons come from below the kernel's ephemeral range, where no
outgoing connection can take them before the daemon binds, and never twice."""

import socket

import pytest

from sdnperf.controllers import process
from sdnperf.controllers.process import ephemeral_range, free_port


def test_ports_are_below_the_ephemeral_range_and_never_repeat():
    low, _ = ephemeral_range()
    ports = [free_port() for _ in range(200)]
    assert all(1024 <= p < low for p in ports)
    assert len(set(ports)) == len(ports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))  # free indeed


def test_a_port_in_use_is_skipped(monkeypatch):
    low, _ = ephemeral_range()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", low - 1))
        taken.listen()
        monkeypatch.setattr(process, "PORTS_BELOW_EPHEMERAL", 2)  # candidates: low-2, low-1
        monkeypatch.setattr(process, "_handed_out", set())
        assert free_port() == low - 2  # the only free one
        with pytest.raises(OSError, match="no free TCP port"):
            free_port()  # low-2 handed out, low-1 in use


def test_the_range_falls_back_to_linux_default_when_unreadable(monkeypatch, tmp_path):
    monkeypatch.setattr(process, "EPHEMERAL_RANGE", tmp_path / "missing")
    assert ephemeral_range() == (32768, 60999)
