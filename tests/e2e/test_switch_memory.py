"""Receive rings of our switches are sized by `--rx-frames` for both back ends, so an idle
2-port `sdnperf-switch-grpc` stays small (it held 40 MB with fixed 16 MiB AF_PACKET rings),
and a ring size the kernel cannot take is refused naming the option. Real switches on real
veth ports; the ring memory is read from the process's own /proc/PID/smaps. An AF_XDP
switch started the moment another one on the same ports exits binds them too (the kernel
frees the old socket's queue a moment after the process is gone)."""

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
FRAME_KB = 2  # one ring frame


@pytest.fixture
def ports():
    """A namespace with two veth pairs (switch ends and idle far ends), named with our pid."""
    with veth_pairs_in_namespace("tmem") as (ns, pairs):
        yield ns, [dev for dev, _ in pairs]


def _argv(which, ns, names, *extra):
    ifaces = [x for i, d in enumerate(names, 1) for x in ("-i", f"{i}@{d}")]
    if which == "grpc":
        cmd = [switch_binary("sdnperf-switch-grpc"), PROGRAM, "--grpc-port", "0"]
    else:
        cmd = [switch_binary("sdnperf-switch"), "run", "--json", PROGRAM]
    return ["ip", "netns", "exec", ns, *cmd, *ifaces, "--die-with-parent", *extra]


def _start(argv):
    sw = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if sw.stdout.readline().strip() != "READY":
        sw.kill()
        raise AssertionError(sw.stderr.read())
    return sw


def _memory(pid):
    """(VmRSS kB, resident kB of each socket mapping = the packet rings)."""
    rss = next(
        int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:")
    )
    rings, current = [], None
    for line in open(f"/proc/{pid}/smaps"):
        head = line.split()
        if "-" in head[0] and len(head) >= 5:
            current = head[5] if len(head) > 5 else ""
        elif head[0] == "Rss:" and current and current.startswith("socket:"):
            rings.append(int(head[1]))
    return rss, rings


def _idle_memory(argv):
    """Starts a switch, reads its memory once it is ready, stops it."""
    sw = _start(argv)
    try:
        return _memory(sw.pid)
    finally:
        sw.terminate()
        sw.communicate(timeout=10)


@pytest.mark.parametrize("which", ["grpc", "switch"])
def test_rings_follow_rx_frames_and_idle_switch_stays_small(ports, which):
    ns, names = ports
    rss, rings = _idle_memory(_argv(which, ns, names))
    # AF_PACKET (virtio-net headers on): one ring per port of the default 2048 frames
    assert rings == [2048 * FRAME_KB, 2048 * FRAME_KB], rings
    assert rss < 20 * 1024, f"idle 2-port {which} holds {rss} kB resident"
    _, rings = _idle_memory(_argv(which, ns, names, "--rx-frames", "512"))
    assert rings == [512 * FRAME_KB, 512 * FRAME_KB], rings


def test_rx_frames_not_a_power_of_two_is_refused(ports):
    ns, names = ports
    r = subprocess.run(
        _argv("switch", ns, names, "--rx-frames", "3000"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode != 0
    assert "--rx-frames" in r.stderr and "3000" in r.stderr, r.stderr


def test_af_xdp_switch_restarted_at_once_binds_its_ports(ports):
    ns, names = ports
    argv = _argv("switch", ns, names, "--io", "af_xdp", "--no-vnet")
    for _ in range(4):
        sw = _start(argv)  # READY, or the error (bind: Device or resource busy)
        sw.kill()
        sw.communicate(timeout=10)
