"""Our P4 switch (sdnperf-switch) in a real Mininet network: ping, iperf, impairment."""

import os
import re
import shutil
from functools import partial
from pathlib import Path

import pytest

from tests.e2e.support import iperf3_tcp

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root"),
    pytest.mark.skipif(
        not shutil.which("iperf3") or not shutil.which("mnexec"), reason="needs iperf3 and Mininet"
    ),
]

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "rust/switch/tests/programs/l1_fwd.json"


def _binary():
    from sdnperf import tools

    try:
        return tools.find("sdnperf-switch")
    except tools.ToolNotFound as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def net():
    from mininet.net import Mininet
    from mininet.topo import SingleSwitchTopo

    from sdnperf.emulation.p4switch import P4Switch

    _binary()
    n = Mininet(
        topo=SingleSwitchTopo(2),
        switch=partial(P4Switch, json_path=str(PROGRAM)),
        controller=None,
        autoSetMacs=True,
    )
    try:
        n.start()
        yield n
    finally:
        n.stop()


def _rtts(h, dst, count=10, interval=0.05):
    out = h.cmd(f"ping -n -c {count} -i {interval} -W 2 {dst}")
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)], out


def test_ping_through_switch(net):
    h1, h2 = net.get("h1", "h2")
    rtts, out = _rtts(h1, h2.IP(), count=5)
    assert len(rtts) == 5, out


def test_iperf_tcp_through_switch(net):
    h1, h2 = net.get("h1", "h2")
    res = iperf3_tcp(h1, h2, seconds=2)
    bps = res["end"]["sum_received"]["bits_per_second"]
    assert bps > 50e6, f"only {bps / 1e6:.1f} Mbit/s"


def test_port_impairment_delays_by_set_amount(net):
    h1, h2 = net.get("h1", "h2")
    s1 = net.get("s1")
    base, _ = _rtts(h1, h2.IP())
    assert base, "no baseline RTT"
    s1.ctl("port_impair 2 delay=20ms")
    try:
        delayed, out = _rtts(h1, h2.IP())
    finally:
        s1.ctl("port_impair 2 delay=0ms")
    assert len(delayed) >= 8, out
    added = min(delayed) - min(base)
    # one direction (towards h2) is delayed by 20 ms
    assert 19.5 <= added <= 23.0, f"added {added:.2f} ms (base {min(base)} ms, delayed {delayed})"
    after, _ = _rtts(h1, h2.IP(), count=5)
    assert min(after) < 5.0


def _wakeups(pid: int) -> int:
    """Context switches of all the process's threads so far: each sleep/wake-up is one."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        status = (task / "status").read_text()
        total += sum(int(n) for n in re.findall(r"ctxt_switches:\s+(\d+)", status))
    return total


def _tx(s1) -> int:
    return int(re.search(r"\btx=(\d+)", s1.ctl("stats")).group(1))


def test_idle_switch_does_not_wake_on_a_timer(net):
    """No packets, no deadlines: the loop sleeps until something happens (it used to
    wake every 1-20 ms: 100-2,000 wake-ups in 2 s)."""
    import time

    s1 = net.get("s1")
    time.sleep(0.5)  # let the hosts' start-up packets (IPv6 ND) pass
    before = _wakeups(s1.switch_pid)
    time.sleep(2.0)
    woke = _wakeups(s1.switch_pid) - before
    assert woke < 20, f"an idle switch woke {woke} times in 2 s"


def test_shaped_port_delivers_its_rate(net):
    """A port shaped to 20 Mbit/s delivers about that to TCP (one timer expiry per
    departure paces it; no sleep loop), with no more wake-ups than packets moved twice."""
    h1, h2 = net.get("h1", "h2")
    s1 = net.get("s1")
    s1.ctl("port_impair 2 rate=20mbit")
    try:
        w0, t0 = _wakeups(s1.switch_pid), _tx(s1)
        res = iperf3_tcp(h1, h2, seconds=3)
        woke, sent = _wakeups(s1.switch_pid) - w0, _tx(s1) - t0
    finally:
        s1.ctl("port_impair 2 rate=0")
    mbps = res["end"]["sum_received"]["bits_per_second"] / 1e6
    assert 15.0 <= mbps <= 20.5, f"{mbps:.1f} Mbit/s through a 20 Mbit/s port"
    # each packet may wake the loop when it arrives and again when it departs
    assert woke <= 2.0 * sent, f"{woke} wake-ups for {sent} packets sent"


def test_delayed_port_wakes_once_per_departure(net):
    """Pings through a port delaying 20 ms: per ping the loop wakes for the request's
    arrival, its departure 20 ms later (one timer expiry) and the reply (the old loop
    woke every 1 ms or 50 us while a packet was held: ~40 times per ping)."""
    h1, h2 = net.get("h1", "h2")
    s1 = net.get("s1")
    s1.ctl("port_impair 2 delay=20ms")
    try:
        w0 = _wakeups(s1.switch_pid)
        rtts, out = _rtts(h1, h2.IP(), count=50, interval=0.05)
        woke = _wakeups(s1.switch_pid) - w0
    finally:
        s1.ctl("port_impair 2 delay=0ms")
    assert len(rtts) >= 45, out
    assert min(rtts) >= 20.0, out
    assert woke <= 6 * len(rtts), f"{woke} wake-ups for {len(rtts)} pings"


def test_ctl_reads_counters_and_tables(net):
    s1 = net.get("s1")
    out = s1.ctl("stats")
    assert "rx=" in out
    out = s1.ctl("table_add lpm drop 10.123.0.0/16", "table_num_entries lpm", "table_clear lpm")
    assert "handle" in out and "\n1\n" in f"\n{out}"


L2_COMMANDS = [
    "mc_mgrp_create 1",
    "mc_node_create 0 1 2 3",
    "mc_node_associate 1 0",
    "table_add dmac fwd 00:00:00:00:00:04 => 1",
    "table_add dmac fwd 00:00:00:00:00:05 => 2",
    "table_add dmac fwd 00:00:00:00:00:06 => 3",
]


def test_down_port_does_not_block_others():
    """A port whose interface is down (sends fail) only loses its own packets."""
    from mininet.net import Mininet
    from mininet.topo import Topo

    from sdnperf.emulation.p4switch import P4Switch

    _binary()

    class Three(Topo):  # names distinct from the module's network (still running)
        def build(self):
            s = self.addSwitch("s2")
            for i in (4, 5, 6):
                self.addLink(
                    self.addHost(f"h{i}", mac=f"00:00:00:00:00:0{i}", ip=f"10.0.9.{i}/24"), s
                )

    prog = REPO / "rust/switch/tests/programs/l2_basic.json"
    n = Mininet(
        topo=Three(),
        switch=partial(P4Switch, json_path=str(prog), commands=L2_COMMANDS),
        controller=None,
    )
    try:
        n.start()
        h1, h2, h3 = n.get("h4", "h5", "h6")
        s1 = n.get("s2")
        rtts, out = _rtts(h1, h3.IP(), count=3)
        assert len(rtts) == 3, out
        s1.cmd("ip link set s2-eth3 down")
        # flood traffic (broadcast ARP) now also targets the dead port 3
        h1.cmd("ip neigh flush all")
        rtts, out = _rtts(h1, h2.IP(), count=20, interval=0.01)
        assert len(rtts) == 20, out
        assert s1.connected()
    finally:
        n.stop()
