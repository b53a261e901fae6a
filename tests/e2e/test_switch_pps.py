"""64-byte path of our P4 switch: the XDP generator (`blast --mode xdp`) feeds an AF_XDP
switch between three namespaces, and the frames arrive at the far veth."""
import os
import re
import shutil
import subprocess
import time

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, XDP)"),
    pytest.mark.skipif(not shutil.which("ip") or not shutil.which("ethtool"), reason="needs iproute2 and ethtool"),
]

PROGRAM = os.path.join(os.path.dirname(__file__), "../../rust/switch/tests/programs/l1_fwd.json")
SINK_MAC = "0x020000000099"


def _binary():
    from sdnperf.emulation.p4switch import P4SwitchError, find_binary
    try:
        return find_binary()
    except P4SwitchError as e:
        pytest.skip(str(e))


def sh(cmd):
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def path3():
    """Namespaces A - S - B joined by two veth pairs; names carry our pid."""
    tag = f"{os.getpid() % 100000}"
    nss = {k: f"tpps{k}{tag}" for k in "ASB"}
    for n in nss.values():
        sh(f"ip netns add {n}")
    try:
        a, s1, b, s2 = f"tpa{tag}", f"tps1{tag}", f"tpb{tag}", f"tps2{tag}"
        sh(f"ip link add {a} netns {nss['A']} type veth peer name {s1} netns {nss['S']}")
        sh(f"ip link add {b} netns {nss['B']} type veth peer name {s2} netns {nss['S']}")
        for n, d in ((nss["A"], a), (nss["S"], s1), (nss["S"], s2), (nss["B"], b)):
            sh(f"ip -n {n} link set {d} up")
        yield nss, a, s1, s2, b
    finally:
        for n in nss.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def test_xdp_generator_through_af_xdp_switch(path3):
    binary = _binary()
    nss, a, s1, s2, b = path3
    sw = subprocess.Popen(["ip", "netns", "exec", nss["S"], binary, "run", "--json", PROGRAM, "-i", f"1@{s1}",
                           "-i", f"2@{s2}", "--no-vnet", "--rx-frames", "8192", "--die-with-parent"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sw.stdout.readline().strip() == "READY", sw.stderr.read()
        banner = sw.stderr.readline()
        if "=af_xdp" not in banner:
            pytest.skip(f"kernel refused AF_XDP: {banner.strip()}")
        g = subprocess.run(["ip", "netns", "exec", nss["A"], binary, "blast", a, "--mode", "xdp", "--seconds", "1",
                            "--dst-mac", SINK_MAC], capture_output=True, text=True)
        if g.returncode != 0 and "live frames" in g.stderr:
            pytest.skip(g.stderr.strip())
        assert g.returncode == 0, g.stderr
        time.sleep(0.3)
        offered = sum(int(x) for x in re.findall(r"tx_queue_\d+_xdp_xmit: (\d+)", sh(f"ip netns exec {nss['A']} ethtool -S {a}")))
        fwd = int(sh(f"ip netns exec {nss['B']} cat /sys/class/net/{b}/statistics/rx_packets"))
        assert offered > 20_000, g.stdout
        # every forwarded frame was offered; most of them make it even on a busy machine
        assert 0.2 * offered < fwd <= offered + 10, (offered, fwd)
    finally:
        sw.terminate()
        _, err = sw.communicate(timeout=10)
    # (B's counter also sees a few IPv6 ND/MLD frames from S's own kernel)
    m = re.search(r"port 2 \S+ \(af_xdp\): rx=\d+ tx=(\d+)", err)
    assert m and abs(int(m.group(1)) - fwd) <= 20, err


def test_xdp_generator_refuses_what_it_cannot_do(path3):
    binary = _binary()
    nss, a, *_ = path3
    for extra in (["--flows", "4"], ["--pps", "1000"]):
        g = subprocess.run(["ip", "netns", "exec", nss["A"], binary, "blast", a, "--mode", "xdp", "--seconds", "0.1",
                            *extra], capture_output=True, text=True)
        assert g.returncode == 1 and "--mode af_packet" in g.stderr, g.stderr
