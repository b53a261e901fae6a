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
    pytest.mark.skipif(
        not shutil.which("ip") or not shutil.which("ethtool"), reason="needs iproute2 and ethtool"
    ),
]

PROGRAM = os.path.join(os.path.dirname(__file__), "../../rust/switch/tests/programs/l1_fwd.json")
SINK_MAC = "0x020000000099"


def _binary():
    from sdnperf import tools

    try:
        return tools.find("sdnperf-switch")
    except tools.ToolNotFound as e:
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


def _start(binary, nss, s1, s2, program=PROGRAM, *extra):
    sw = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            nss["S"],
            binary,
            "run",
            "--json",
            program,
            "-i",
            f"1@{s1}",
            "-i",
            f"2@{s2}",
            "--no-vnet",
            "--die-with-parent",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = sw.stdout.readline().strip()
    if line != "READY":
        sw.kill()
        raise AssertionError(sw.stderr.read())
    return sw


def _stop(sw) -> str:
    sw.terminate()
    return sw.communicate(timeout=10)[1]


def test_xdp_generator_through_af_xdp_switch(path3):
    binary = _binary()
    nss, a, s1, s2, b = path3
    sw = _start(binary, nss, s1, s2, PROGRAM, "--rx-frames", "8192")
    try:
        banner = sw.stderr.readline()
        if "=af_xdp" not in banner:
            pytest.skip(f"kernel refused AF_XDP: {banner.strip()}")
        g = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                nss["A"],
                binary,
                "blast",
                a,
                "--mode",
                "xdp",
                "--seconds",
                "1",
                "--dst-mac",
                SINK_MAC,
            ],
            capture_output=True,
            text=True,
        )
        if g.returncode != 0 and "live frames" in g.stderr:
            pytest.skip(g.stderr.strip())
        assert g.returncode == 0, g.stderr
        time.sleep(0.3)
        offered = sum(
            int(x)
            for x in re.findall(
                r"tx_queue_\d+_xdp_xmit: (\d+)", sh(f"ip netns exec {nss['A']} ethtool -S {a}")
            )
        )
        fwd = int(sh(f"ip netns exec {nss['B']} cat /sys/class/net/{b}/statistics/rx_packets"))
        assert offered > 20_000, g.stdout
        # every forwarded frame was offered; most of them make it even on a busy machine
        assert 0.2 * offered < fwd <= offered + 10, (offered, fwd)
    finally:
        err = _stop(sw)
    # (B's counter also sees a few IPv6 ND/MLD frames from S's own kernel)
    m = re.search(r"port 2 \S+ \(af_xdp\): rx=\d+ tx=(\d+)", err)
    assert m and abs(int(m.group(1)) - fwd) <= 20, err


def test_xdp_generator_refuses_what_it_cannot_do(path3):
    binary = _binary()
    nss, a, *_ = path3
    for extra in (["--flows", "4"], ["--pps", "1000"]):
        g = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                nss["A"],
                binary,
                "blast",
                a,
                "--mode",
                "xdp",
                "--seconds",
                "0.1",
                *extra,
            ],
            capture_output=True,
            text=True,
        )
        assert g.returncode == 1 and "--mode af_packet" in g.stderr, g.stderr


def _gro_on(nss, a, b):
    # a redirect into a veth is accepted only while the peer runs NAPI (GRO on)
    for n, d in ((nss["A"], a), (nss["B"], b)):
        sh(f"ip netns exec {n} ethtool -K {d} gro on")


def test_xdp_fastpath_forwards_in_the_kernel(path3):
    """--xdp-fastpath: l1_fwd runs in the XDP hook; the generator's frames reach B without
    passing through the switch process (its AF_XDP socket transmits next to nothing)."""
    binary = _binary()
    nss, a, s1, s2, b = path3
    _gro_on(nss, a, b)
    sw = _start(binary, nss, s1, s2, PROGRAM, "--xdp-fastpath")
    try:
        banner = ""
        while "ports " not in banner:
            banner += sw.stderr.readline()
        assert "xdp fast path on for port(s) 1,2" in banner, banner
        g = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                nss["A"],
                binary,
                "blast",
                a,
                "--mode",
                "xdp",
                "--seconds",
                "1",
                "--dst-mac",
                SINK_MAC,
            ],
            capture_output=True,
            text=True,
        )
        assert g.returncode == 0, g.stderr
        time.sleep(0.3)
        offered = sum(
            int(x)
            for x in re.findall(
                r"tx_queue_\d+_xdp_xmit: (\d+)", sh(f"ip netns exec {nss['A']} ethtool -S {a}")
            )
        )
        fwd = int(sh(f"ip netns exec {nss['B']} cat /sys/class/net/{b}/statistics/rx_packets"))
        assert offered > 20_000
        assert 0.5 * offered < fwd <= offered + 20, (offered, fwd)
    finally:
        err = _stop(sw)
    m = re.search(r"xdp fast path: on forwarded=(\d+) dropped=(\d+) to_engine=(\d+)", err)
    assert m, err
    assert int(m.group(1)) >= fwd - 20, (m.group(0), fwd)
    tx = re.search(r"port 2 \S+ \(af_xdp\): rx=\d+ tx=(\d+)", err)
    assert tx and int(tx.group(1)) < 100, (
        err
    )  # only what the engine handled (IPv6 ND/MLD from S's kernel)


def _ping(nss, dst, count=3):
    return subprocess.run(
        ["ip", "netns", "exec", nss["A"], "ping", "-c", str(count), "-i", "0.2", "-W", "1", dst],
        capture_output=True,
        text=True,
    )


def _ctl(binary, nss, sock, *cmd):
    r = subprocess.run(
        ["ip", "netns", "exec", nss["S"], binary, "ctl", sock, " ".join(cmd)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    return r.stdout


def _fast(binary, nss, sock):
    out = _ctl(binary, nss, sock, "fastpath")
    m = re.search(r"(on|off) forwarded=(\d+) dropped=(\d+) to_engine=(\d+)", out)
    assert m, out
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))


def test_xdp_fastpath_follows_tables_keeps_rate_only_ports_and_steps_aside_for_delay(
    path3, tmp_path
):
    """Ping through the fast path; a table entry added at run time drops in the kernel;
    a port with a rate alone stays on the fast path (the kernel and the engine share its
    token bucket, rust/switch xdpfast/shaper.rs: pings on an idle link leave from the
    kernel); a port with a delay sends what goes out of it to the engine (which delays
    it) while the fast path stays on for the rest (the replies coming in on that port)."""
    binary = _binary()
    nss, a, s1, s2, b = path3
    _gro_on(nss, a, b)
    sh(f"ip -n {nss['A']} addr add 10.77.0.1/24 dev {a}")
    sh(f"ip -n {nss['B']} addr add 10.77.0.2/24 dev {b}")
    for n, d in ((nss["A"], a), (nss["B"], b)):
        sh(f"ip -n {n} link set {d} up")
        sh(f"ip netns exec {n} ethtool -K {d} tx off tso off gso off")
    sock = str(tmp_path / "ctl.sock")
    sw = _start(binary, nss, s1, s2, PROGRAM, "--xdp-fastpath", "--ctl-socket", sock)
    try:
        assert _ping(nss, "10.77.0.2").returncode == 0
        state, fwd0, drop0, _ = _fast(binary, nss, sock)
        assert state == "on" and fwd0 >= 6  # 3 echo requests + 3 replies at least
        _ctl(binary, nss, sock, "table_add", "lpm", "drop", "10.77.0.2/32")
        assert _ping(nss, "10.77.0.2", 2).returncode != 0
        _, _, drop1, _ = _fast(binary, nss, sock)
        assert drop1 >= drop0 + 2
        _ctl(binary, nss, sock, "table_clear", "lpm")
        assert _ping(nss, "10.77.0.2").returncode == 0
        # a rate alone: pings find the link idle and leave from the kernel, both ways
        _ctl(binary, nss, sock, "port_impair", "2", "rate=100mbit,burst=1600")
        state, fwd1, _, _ = _fast(binary, nss, sock)
        assert state == "on"
        assert _ping(nss, "10.77.0.2").returncode == 0
        assert _fast(binary, nss, sock)[1] >= fwd1 + 6
        show = _ctl(binary, nss, sock, "port_impair_show")
        forwarded = re.search(r"port 2 out: \S+ .*xdp_forwarded=(\d+)", show)
        assert forwarded and int(forwarded.group(1)) >= 3, show
        # a delay: what goes out of port 2 goes through the engine, which delays it
        _ctl(binary, nss, sock, "port_impair", "2", "delay=30ms")
        state, fwd2, _, engine2 = _fast(binary, nss, sock)
        assert state == "on"
        r = _ping(nss, "10.77.0.2")
        assert r.returncode == 0
        rtt_min = float(re.search(r"= ([\d.]+)/", r.stdout).group(1))
        assert rtt_min >= 30, r.stdout  # the engine delayed the packets
        _, fwd3, _, engine3 = _fast(binary, nss, sock)
        assert engine3 >= engine2 + 3  # the 3 requests to the delayed port
        assert fwd3 >= fwd2 + 3  # the 3 replies from it, to a free port: in the kernel
        _ctl(binary, nss, sock, "port_impair", "2", "delay=0ms")
        assert _fast(binary, nss, sock)[0] == "on"
    finally:
        _stop(sw)


def test_xdp_fastpath_refused_program_says_why(path3):
    binary = _binary()
    nss, a, s1, s2, b = path3
    queues = os.path.join(os.path.dirname(PROGRAM), "queues.json")
    sw = _start(binary, nss, s1, s2, queues, "--xdp-fastpath")
    err = _stop(sw)
    assert "xdp fast path off: reads standard_metadata.enq_qdepth" in err, err
