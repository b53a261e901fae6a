"""`--pcap DIR` on both switch binaries, as BMv2's simple_switch does it: per-port files
`<iface>_in.pcap` (received) and `<iface>_out.pcap` (sent). Real switches on real veth
ports; frames sent into port 1 are read back (scapy's rdpcap) from port 1's received file
and port 2's sent file. With --xdp-fastpath the fast path is turned off, with a note."""

import os
import shutil
import subprocess

import pytest

from tests.e2e.support import switch_binary, veth_pairs_in_namespace

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, packet sockets)"),
    pytest.mark.skipif(not shutil.which("ip"), reason="needs iproute2"),
]

PROGRAM = os.path.join(os.path.dirname(__file__), "../../rust/switch/tests/programs/l1_fwd.json")


@pytest.fixture
def ports():
    """A namespace with two veth pairs (switch ends, far ends), named with our pid."""
    with veth_pairs_in_namespace("tpcap") as (ns, pairs):
        yield ns, pairs


def _frames(n):
    from scapy.all import IP, UDP, Ether

    return [
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        / IP(src="10.0.0.1", dst="10.0.0.2")
        / UDP(sport=1000 + k, dport=7)
        / f"pcap test frame {k}".encode()
        for k in range(n)
    ]


def _send(ns, iface, frames):
    """Sends raw frames out of `iface` inside namespace `ns` (a packet socket there)."""
    data = b"".join(len(bytes(f)).to_bytes(2, "big") + bytes(f) for f in frames)
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
        f"s.bind(({iface!r},0))\n"
        "d=sys.stdin.buffer.read()\n"
        "while d:\n"
        "    n=int.from_bytes(d[:2],'big'); s.send(d[2:2+n]); d=d[2+n:]\n"
    )
    subprocess.run(
        ["ip", "netns", "exec", ns, "python3", "-c", code], input=data, check=True, timeout=20
    )


@pytest.mark.parametrize("which", ["run", "grpc"])
def test_pcap_files_hold_the_packets_each_port_received_and_sent(ports, tmp_path, which):
    from scapy.all import rdpcap

    ns, pairs = ports
    ifaces = [x for i, (dev, _) in enumerate(pairs, 1) for x in ("-i", f"{i}@{dev}")]
    if which == "grpc":
        cmd = [switch_binary("sdnperf-switch-grpc"), PROGRAM, "--grpc-port", "0"]
    else:
        cmd = [switch_binary("sdnperf-switch"), "run", PROGRAM]
    argv = ["ip", "netns", "exec", ns, *cmd, *ifaces, "--die-with-parent"]
    argv += ["--pcap", str(tmp_path), "--xdp-fastpath"]
    sw = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sw.stdout.readline().strip() == "READY", sw.stderr.read()
        frames = _frames(3)
        _send(ns, pairs[0][1], frames)
        want = [bytes(f) for f in frames]
        (dev1, _), (dev2, _) = pairs
        got_in, got_out = [], []
        for _ in range(50):
            got_in = [bytes(p) for p in rdpcap(str(tmp_path / f"{dev1}_in.pcap"))]
            got_out = [bytes(p) for p in rdpcap(str(tmp_path / f"{dev2}_out.pcap"))]
            if all(w in got_in and w in got_out for w in want):
                break
            subprocess.run(["sleep", "0.1"])
        assert all(w in got_in for w in want), got_in
        assert all(w in got_out for w in want), got_out
        # nothing came back towards port 1, so port 1 sent none of them
        sent1 = [bytes(p) for p in rdpcap(str(tmp_path / f"{dev1}_out.pcap"))]
        assert not any(w in sent1 for w in want)
    finally:
        sw.terminate()
        _, err = sw.communicate(timeout=10)
    assert "--xdp-fastpath is off with --pcap" in err, err
