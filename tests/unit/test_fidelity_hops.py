"""The emulator-bound rule (fidelity/hops.py): which hosts probe a switch's pace, the
per-switch time, the threshold, and the probe on a fake network's recorded ping."""

import subprocess
from pathlib import Path

import pytest

from sdnperf.fidelity import hops
from sdnperf.topo.registry import build_topology

DATA = Path(__file__).parent / "data"


def topo(kind, **params):
    return build_topology(kind, params, 1)


@pytest.mark.parametrize(
    "kind,params,pair",
    [
        ("grid", {"rows": 3, "cols": 3}, ("h1", "h2", 2)),  # adjacent switches
        ("grid", {"rows": 10, "cols": 10}, ("h1", "h2", 2)),
        ("linear", {"switches": 4}, ("h1", "h2", 2)),
        ("single", {"hosts": 3}, ("h1", "h2", 1)),  # one switch is all there is
    ],
)
def test_probe_pair_crosses_as_few_switches_as_possible(kind, params, pair):
    assert hops.probe_pair(topo(kind, **params)) == pair


def test_probe_pair_prefers_a_path_over_a_switch_link():
    # spine-leaf: h1's leaf neighbour h2 is one switch away; a host on another leaf is
    # three (leaf, spine, leaf) and is the one that shows a switch-to-switch link
    spec = topo("spine-leaf", spines=2, leaves=2, hosts_per_leaf=2)
    src, dst, switches = hops.probe_pair(spec)
    assert (src, switches) == ("h1", 3)
    assert spec.host_switches(dst) != spec.host_switches("h1")


def test_probe_pair_needs_two_hosts():
    assert hops.probe_pair(topo("single", hosts=1)) is None


def test_per_switch_time_is_half_the_rtt_per_switch():
    assert hops.per_switch_ms(8.0, 2) == 2.0  # a round trip crosses each switch twice
    assert hops.per_switch_ms(1.0, 1) == 0.5


def test_rule_marks_only_far_above_the_baseline():
    limit_rtt = 2 * 2 * hops.FACTOR * hops.BASELINE_HOP_MS  # over 2 switches
    assert hops.judge(limit_rtt, 2) == (False, "")  # at the limit: not marked
    bound, reason = hops.judge(limit_rtt * 1.01, 2)
    assert bound and "over 2 switches" in reason and "5x the 0.2 ms of a small topology" in reason
    # the 10x10 finding: openflow's min RTT of 107 ms over the grid's 19 switches
    assert hops.judge(107.0, 19)[0]
    assert not hops.judge(2.4, 19)[0]  # p4 on the same grid
    assert hops.judge(None, 2) == (False, "")  # no reply: nothing claimed


def test_rule_constants_are_the_documented_ones():
    assert (hops.BASELINE_HOP_MS, hops.FACTOR) == (0.2, 5.0)


class FakeHost:
    def __init__(self, recorded):
        self.recorded, self.argvs = recorded, []

    def IP(self):
        return "10.0.0.2"

    def popen(self, argv, **kwargs):
        self.argvs.append(argv)
        return subprocess.Popen(["cat", str(DATA / self.recorded)], **kwargs)


class FakeNet:
    def __init__(self, recorded):
        self.host = FakeHost(recorded)

    def get(self, name):
        return self.host


def test_measure_takes_the_min_of_the_series_after_the_warm_up():
    net = FakeNet("ping_steady.txt")
    assert hops.measure(net, "h1", "h2") == 0.032
    warm, series = net.host.argvs
    assert warm[warm.index("-c") + 1] == "2"
    assert series[series.index("-c") + 1] == str(hops.PROBE_PINGS)
    assert series[-1] == "10.0.0.2"
