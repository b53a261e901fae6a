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


def test_configured_link_delay_is_not_a_slow_switch():
    """A 2-switch path over 3 links of 10 ms: 60 ms of RTT are the study's own delay."""
    spec = topo("linear", switches=2).with_link_defaults(None, 10.0, None)
    assert hops.configured_rtt_ms(spec, "h1", "h2") == 60.0
    assert hops.configured_rtt_ms(topo("linear", switches=2), "h1", "h2") == 0.0
    assert not hops.judge(60.4, 2, 60.0)[0]  # 0.1 ms per switch once the delay is off
    bound, reason = hops.judge(70.0, 2, 60.0)
    assert bound and "60 ms of it configured link delay" in reason


def steady(flow, *rtts, phase="steady"):
    from sdnperf.samples import Sample

    return [Sample("ping", "rtt_ms", v, "ms", flow, phase) for v in rtts]


def test_the_workloads_own_pings_judge_the_pace_over_their_longer_path():
    """Issue 27: on a 10x10 grid one userspace ovs-vswitchd showed 0.89 ms per switch on the
    probe's 2-switch path (unmarked) but a steady RTT of 54 ms from corner to corner."""
    grid = topo("grid", rows=10, cols=10)
    assert not hops.judge(4 * 0.89, 2)[0]  # the probe alone: unmarked
    cold = steady("h1->h100", 1.0, phase="cold")  # a cold ping says nothing of the pace
    pace = hops.workload_pace(
        grid, steady("h1->h100", 56.0, 54.0, 60.0) + steady("h1->h2", 3.0) + cold
    )
    hop, flow, rtt, switches, configured = pace
    assert (flow, rtt, switches, configured) == ("h1->h100", 54.0, 19, 0.0)
    assert round(hop, 3) == round(54.0 / 38, 3)  # 1.42 ms per switch
    bound, reason = hops.judge(rtt, switches, configured, what=f"the workload's {flow}")
    assert bound and "the workload's h1->h100 min RTT 54.00 ms over 19 switches" in reason
    # p4 on the same grid: 1.5 ms over the same path is far below the limit
    hop, *_ = hops.workload_pace(grid, steady("h1->h100", 1.5))
    assert not hops.judge(1.5, 19)[0] and hop < 0.1
    assert hops.workload_pace(grid, []) is None
    assert hops.workload_pace(grid, steady("h1->nowhere", 5.0)) is None


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
    # the warm-up: until the first reply (-c counts replies under a -w deadline), bounded
    assert warm[warm.index("-c") + 1] == "1"
    assert warm[warm.index("-w") + 1] == str(hops.WARM_UP_S) and "-w" not in series
    assert series[series.index("-c") + 1] == str(hops.PROBE_PINGS)
    assert series[-1] == "10.0.0.2"


def test_recirculation_holds_are_not_a_slow_switch():
    """A recirculation study holds its pings to h2 for ms by design (recirc.p4's passes,
    recirc_hold.p4's hold): those flows are left out of the pace rule, other flows still
    judge it; no hold (N = 0) leaves every flow in."""
    from sdnperf.p4.catalog import held_selection

    assert held_selection("recirc", {"recirc_passes": 5000, "recirc_dst": "10.0.0.2"}) == (
        "10.0.0.2/32"
    )
    assert held_selection("recirc_hold", {"recirc_hold_us": 5000}) == "any"
    assert held_selection("recirc", {"recirc_passes": 0}) is None
    assert held_selection("recirc_hold", {"recirc_hold_us": 0}) is None
    assert held_selection("l2l3", {}) is None and held_selection(None, None) is None
    ips = {"h1": "10.0.0.1", "h2": "10.0.0.2", "h3": "10.0.0.3"}
    assert hops.held_hosts(ips, "10.0.0.2/32") == {"h2"}
    assert hops.held_hosts(ips, "any") == set(ips)
    assert hops.held_hosts(ips, "10.0.0.0/31") == {"h1"}
    assert hops.held_hosts(ips, None) == frozenset()
    one = topo("single", hosts=2)
    held = hops.held_hosts(ips, "10.0.0.2/32")
    # 5 ms of recirculation over one switch: 2.5 ms per pass of a switch, far past the rule
    assert hops.judge(5.1, 1)[0]
    assert hops.workload_pace(one, steady("h1->h2", 5.1), held) is None
    assert hops.probe_pair(one, held) is None  # two hosts, one held: nothing to probe
    three = topo("single", hosts=3)
    assert hops.probe_pair(three, held) == ("h1", "h3", 1)
    # a slow switch on a flow that is not held still marks the run
    pace = hops.workload_pace(three, steady("h1->h2", 5.1) + steady("h1->h3", 4.0), held)
    assert pace[1] == "h1->h3" and hops.judge(pace[2], pace[3])[0]
