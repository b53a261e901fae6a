"""The serialising link model (`serialise = true`) through real Mininet hosts, ping and our
P4 switch: on a serialised 1 Mbit/s link every packet is held for its transmission time, so
a ping's RTT grows by the transmission times thesis 003's theory counts; with htb's model
(the default) a lone ping on the idle link pays none of them. This machine lacks sch_netem,
so the hosts' ends are serialised by the switch port's ingress; with sch_netem they are
netem's `rate` in the host. Either way each link crossing holds the packet once."""

from __future__ import annotations

import re

import pytest

from sdnperf.arch.config import P4Config
from sdnperf.emulation import capabilities
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]

PAYLOAD = 1200  # ping -s 1200, as the thesis
FRAME = PAYLOAD + 8 + 20 + 14  # ICMP, IPv4 and Ethernet headers: what a port transmits


def ping(spec, tmp_path):
    """(received, transmitted, min, avg RTT in ms, port_impair_show of every switch)."""
    config = P4Config(kind="p4", name="p4", app="proactive")
    with started_network(spec, config, tmp_path / "run", ready_timeout=90) as started:
        net = started.net
        src, dst = net.get(spec.hosts()[0]), net.get(spec.hosts()[-1])
        src.cmd(f"ping -c 3 -i 0.2 -W 2 {dst.IP()}")  # ARP resolved before the series
        out = src.cmd(f"ping -q -s {PAYLOAD} -c 10 -i 0.2 -W 3 {dst.IP()}")
        shown = "\n".join(sw.ctl("port_impair_show") for sw in net.switches)
    sent, got = map(int, re.search(r"(\d+) packets transmitted, (\d+) received", out).groups())
    rtt = re.search(r"= ([\d.]+)/([\d.]+)/", out)
    lo, avg = (float(rtt.group(1)), float(rtt.group(2))) if rtt else (None, None)
    return got, sent, lo, avg, shown


@pytest.mark.parametrize(
    "topo,params,links", [("single", {"hosts": 2}, 2), ("linear", {"switches": 2}, 3)]
)
def test_serialised_link_adds_each_crossings_transmission_time(topo, params, links, tmp_path):
    rate_mbit = 1.0
    spec = build_topology(topo, params, seed=1)
    _, _, base_min, _, _ = ping(spec, tmp_path / "base")
    got_h, sent_h, htb_min, _, _ = ping(spec.with_link_defaults(rate_mbit), tmp_path / "htb")
    got, sent, rtt_min, rtt_avg, shown = ping(
        spec.with_link_defaults(rate_mbit, serialise=True), tmp_path / "serial"
    )
    # an echo and its reply each cross every link once: 2 x links transmissions
    per_crossing_ms = FRAME * 8 / (rate_mbit * 1e6) * 1e3  # 9.936 ms
    expected = 2 * links * per_crossing_ms
    print(
        f"{topo}: {2 * links} crossings x {per_crossing_ms:.3f} ms = +{expected:.2f} ms; "
        f"min RTT unshaped {base_min}, htb {htb_min}, serialised {rtt_min} ms (avg {rtt_avg})"
    )
    assert got == sent and got_h == sent_h
    # The model holds each packet its full transmission time, so nothing can come back
    # sooner than the unshaped RTT plus every crossing's time (ping prints µs: 0.05 ms
    # slack). Above: each crossing's release waits for a timer wake-up (tens of µs late
    # on this machine) and the host's load; +3 ms, as for delay lines
    # (test_p4_link_impairment), bounds both.
    assert expected - 0.05 <= rtt_min - base_min <= expected + 3, (rtt_min, base_min)
    # htb's token bucket lets the lone ping through the idle link at once: the difference
    # is the transmission time the theory counts and htb does not
    assert htb_min - base_min < 0.25 * expected, (htb_min, base_min)
    sides = re.findall(r"^port \d+ (in|out): (\S+)", shown, re.M)
    assert all("serialise=1" in spec for _, spec in sides), shown
    # every switch end serialises what it sends; the hosts' ends are the switch ports'
    # ingress without sch_netem (netem's rate in the host with it)
    assert sum(d == "out" for d, _ in sides) == 2 * links - 2, shown
    assert sum(d == "in" for d, _ in sides) == (0 if capabilities.netem().ok else 2), shown
