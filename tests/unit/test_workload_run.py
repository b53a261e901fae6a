"""Workload orchestration with fake hosts that replay recorded outputs (no network).

A fake host's popen runs `cat <recorded file>` for a client and `sleep` for a server, so
these tests check dispatch, concurrency bookkeeping, time limits and cleanup.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest

from sdnperf.workloads import (
    IperfTcpConfig,
    IperfUdpConfig,
    PingConfig,
    WorkloadError,
    iperf,
    run_workload,
)

DATA = Path(__file__).parent / "data"


class FakeHost:
    def __init__(self, ctx, name, ip):
        self.ctx, self.name, self.ip = ctx, name, ip

    def IP(self):
        return self.ip

    def cmd(self, *args):
        raise AssertionError("workloads must use popen")

    def popen(self, argv, **kwargs):
        self.ctx.argvs.append((self.name, list(argv)))
        return subprocess.Popen(self.ctx.replace(argv), **kwargs)


class FakeContext:
    def __init__(self, n=4, replace=None, interrupt_at=None):
        self.host_names = [f"h{i}" for i in range(1, n + 1)]
        self.seed = 1
        self.results_dir = None
        self.argvs: list[tuple[str, list[str]]] = []
        self.pids: list[int] = []
        self.messages: list[str] = []
        self.interrupt_at = interrupt_at
        self.replace = replace or default_replace
        self._hosts = {
            h: FakeHost(self, h, f"10.0.0.{i}") for i, h in enumerate(self.host_names, 1)
        }

    def host(self, name):
        return self._hosts[name]

    def log(self, msg):
        self.messages.append(msg)

    def on_process(self, pid):
        self.pids.append(pid)
        if self.interrupt_at and len(self.pids) == self.interrupt_at:
            raise KeyboardInterrupt


def default_replace(argv):
    if argv[0] == "ping":
        name = "ping_cold.txt" if argv[argv.index("-c") + 1] == "1" else "ping_steady.txt"
        return ["cat", str(DATA / name)]
    if argv[:2] == ["iperf3", "-s"]:
        return ["sleep", "30"]  # a one-shot server that never finishes: must be stopped
    if "-u" in argv:
        return ["cat", str(DATA / "iperf3_udp.json")]
    return ["cat", str(DATA / "iperf3_tcp_duration.json")]


@pytest.fixture(autouse=True)
def servers_listen_at_once(monkeypatch):
    monkeypatch.setattr(iperf, "listens", lambda pid, port, name: True)
    monkeypatch.setattr(iperf, "SERVER_EXIT_WAIT_S", 0.1)


def assert_all_reaped(ctx):
    assert ctx.pids
    for pid in ctx.pids:
        assert not os.path.exists(f"/proc/{pid}"), f"process {pid} left behind"


def test_ping_runs_cold_then_steady_on_every_pair():
    ctx = FakeContext()
    out = run_workload(
        PingConfig(kind="ping", name="p", pairs=[["h1", "h2"], ["h3", "h4"]], count=8), ctx
    )
    assert out.processes_started == 4
    assert [(h, a[a.index("-c") + 1], a[-1]) for h, a in ctx.argvs] == [
        ("h1", "1", "10.0.0.2"),
        ("h3", "1", "10.0.0.4"),
        ("h1", "8", "10.0.0.2"),
        ("h3", "8", "10.0.0.4"),
    ]
    names = {s.metric for s in out.summaries}
    assert {
        "rtt_first_ms",
        "rtt_ms",
        "rtt_min_ms",
        "rtt_max_ms",
        "rtt_mdev_ms",
        "loss_pct",
    } <= names
    assert_all_reaped(ctx)


def test_tcp_pairs_sharing_a_destination_get_distinct_ports():
    ctx = FakeContext()
    out = run_workload(
        IperfTcpConfig(
            kind="iperf-tcp", name="t", pairs={"all_to_one": "h1"}, duration=3, window="256K"
        ),
        ctx,
    )
    servers = [(h, a) for h, a in ctx.argvs if a[1] == "-s"]
    clients = [(h, a) for h, a in ctx.argvs if a[1] == "-c"]
    assert [h for h, _ in servers] == ["h1"] * 3 and [h for h, _ in clients] == ["h2", "h3", "h4"]
    ports = [a[a.index("-p") + 1] for _, a in servers]
    assert len(set(ports)) == 3
    assert [a[a.index("-p") + 1] for _, a in clients] == ports
    assert all(a[a.index("-B") + 1] == "10.0.0.1" for _, a in servers)
    assert all("-t" in a and "-w" in a and "--json" in a for _, a in clients)
    assert out.processes_started == 6
    assert {s.flow for s in out.samples} == {"h2->h1", "h3->h1", "h4->h1"}
    assert_all_reaped(ctx)  # the servers that never exited were stopped


def test_tcp_fixed_bytes_and_udp_arguments():
    ctx = FakeContext()
    run_workload(IperfTcpConfig(kind="iperf-tcp", name="t", pairs=[["h1", "h2"]], bytes="20M"), ctx)
    client = ctx.argvs[-1][1]
    assert client[client.index("-n") + 1] == "20M" and "-t" not in client
    run_workload(
        IperfUdpConfig(
            kind="iperf-udp", name="u", pairs=[["h1", "h2"]], rate="5M", duration=2, length=1200
        ),
        ctx,
    )
    client = ctx.argvs[-1][1]
    assert client[client.index("-b") + 1] == "5M" and client[client.index("-l") + 1] == "1200"
    assert "-u" in client
    assert_all_reaped(ctx)


def test_hanging_client_is_killed_and_reported():
    def hang(argv):
        return ["sleep", "30"]

    ctx = FakeContext(replace=hang)
    t = time.monotonic()
    with pytest.raises(
        WorkloadError, match=r"h1->h2: iperf3 client hung and was killed after 0.5 s"
    ):
        run_workload(
            IperfUdpConfig(
                kind="iperf-udp", name="u", pairs=[["h1", "h2"]], duration=1, time_limit=0.5
            ),
            ctx,
        )
    assert time.monotonic() - t < 6
    assert_all_reaped(ctx)


def test_iperf_error_is_reported_per_pair():
    def refused(argv):
        if argv[1] == "-c" and argv[2] == "10.0.0.2":
            return ["cat", str(DATA / "iperf3_refused.json")]
        return default_replace(argv)

    ctx = FakeContext(replace=refused)
    with pytest.raises(WorkloadError) as info:
        run_workload(
            IperfTcpConfig(kind="iperf-tcp", name="t", pairs=[["h1", "h2"], ["h3", "h4"]]), ctx
        )
    assert "h1->h2: iperf3: unable to connect to server: Connection refused" in str(info.value)
    assert "h3->h4" not in str(info.value)
    assert_all_reaped(ctx)


def test_server_failing_at_start_is_reported(monkeypatch):
    def bad_server(argv):
        if argv[1] == "-s":
            return ["sh", "-c", "echo 'unable to start listener' >&2; exit 1"]
        return default_replace(argv)

    monkeypatch.setattr(iperf, "listens", lambda pid, port, name: False)  # it never gets there
    ctx = FakeContext(replace=bad_server)
    with pytest.raises(WorkloadError, match="exited at start: unable to start listener"):
        run_workload(IperfTcpConfig(kind="iperf-tcp", name="t", pairs=[["h1", "h2"]]), ctx)
    assert_all_reaped(ctx)


def test_ping_that_sends_nothing_is_a_failure():
    ctx = FakeContext(
        replace=lambda argv: [
            "sh",
            "-c",
            "echo 'ping: connect: Network is unreachable' >&2; exit 2",
        ]
    )
    with pytest.raises(
        WorkloadError, match="h1->h2: ping failed: ping: connect: Network is unreachable"
    ):
        run_workload(PingConfig(kind="ping", name="p", pairs=[["h1", "h2"]]), ctx)


def test_ctrl_c_stops_everything_already_started():
    ctx = FakeContext(interrupt_at=3)
    with pytest.raises(KeyboardInterrupt):
        run_workload(IperfTcpConfig(kind="iperf-tcp", name="t", pairs={"all_to_one": "h1"}), ctx)
    assert len(ctx.pids) == 3
    assert_all_reaped(ctx)


def test_unknown_host_is_named_before_anything_starts():
    ctx = FakeContext()
    with pytest.raises(ValueError, match="h9"):
        run_workload(PingConfig(kind="ping", name="p", pairs=[["h1", "h9"]]), ctx)
    assert ctx.argvs == []


def test_listens_sees_a_listening_socket_of_the_named_process():
    import socket
    import subprocess
    import sys

    import psutil

    from sdnperf.workloads.procs import listens

    code = (
        "import socket, sys, time\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\n"
        "s.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        name = psutil.Process(child.pid).name()
        assert listens(child.pid, port, name)
        assert not listens(child.pid, port, "iperf3")  # not (yet) the tool we wait for
        with socket.socket() as other:
            other.bind(("127.0.0.1", 0))
            assert not listens(child.pid, other.getsockname()[1], name)  # bound, not listening
    finally:
        child.kill()
        child.wait()
    assert not listens(child.pid, port, name)  # gone
