"""Link delay and loss on the p4 architecture, through real Mininet hosts and our switch,
on this machine's kernel whatever it has: with sch_netem the hosts' ends are netem and the
switch ports impair what they send; without it the switch ports impair both directions.
Either way the semantics are Mininet's TCLink: one delay_ms and one loss_pct per link and
direction, so ping's RTT grows by 2 x links x delay_ms."""

from __future__ import annotations

import re

import pytest

from sdnperf.arch.config import P4Config
from sdnperf.emulation import capabilities
from sdnperf.runner import started_network
from sdnperf.topo.registry import build_topology
from tests.e2e.support import NEEDS_DAEMON, NEEDS_MININET, sdnperf_cli

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]


def ping(spec, tmp_path, count: int, interval: float):
    """(received, transmitted, min, avg RTT in ms, port_impair_show per switch, facts)."""
    config = P4Config(kind="p4", name="p4", app="proactive")
    with started_network(spec, config, tmp_path / "run", ready_timeout=90) as started:
        arch, net = started.arch, started.net
        src, dst = net.get(spec.hosts()[0]), net.get(spec.hosts()[-1])
        src.cmd(f"ping -c 3 -i 0.2 -W 2 {dst.IP()}")  # ARP resolved before the series
        out = src.cmd(f"ping -q -c {count} -i {interval} -W 3 {dst.IP()}")
        shown = {sw.name: sw.ctl("port_impair_show") for sw in net.switches}
        facts = arch.facts()
    sent, got = map(int, re.search(r"(\d+) packets transmitted, (\d+) received", out).groups())
    rtt = re.search(r"= ([\d.]+)/([\d.]+)/", out)
    lo, avg = (float(rtt.group(1)), float(rtt.group(2))) if rtt else (None, None)
    return got, sent, lo, avg, shown, facts


@pytest.mark.parametrize(
    "topo,params,links", [("single", {"hosts": 2}, 2), ("linear", {"switches": 2}, 3)]
)
def test_link_delay_adds_one_delay_per_link_and_direction(topo, params, links, tmp_path):
    delay = 5.0
    spec = build_topology(topo, params, seed=1)
    *_, base_min, base_avg, _, _ = ping(spec, tmp_path / "base", 20, 0.05)
    got, sent, rtt_min, rtt_avg, shown, facts = ping(
        spec.with_link_defaults(None, delay, 0), tmp_path / "delayed", 20, 0.05
    )
    expected = 2 * links * delay
    print(
        f"{topo}: {links} links x {delay} ms: expected +{expected} ms; "
        f"min {base_min} -> {rtt_min} ms, avg {base_avg} -> {rtt_avg} ms"
    )
    assert got == sent
    # the delay lines release on time to ~0.1 ms per crossing; the rest is the host's load
    assert expected - 0.5 <= rtt_min - base_min <= expected + 3, (rtt_min, base_min)
    assert rtt_avg - base_avg <= expected + 8, (rtt_avg, base_avg)
    assert facts["switch_port_impairment"]
    kernel_netem = capabilities.netem().ok
    host_facing = "in: delay=5000us" in "\n".join(shown.values())
    assert host_facing != kernel_netem, shown  # ingress impairment only without netem
    assert facts["host_link_impairment"] == (
        "netem in the host" if kernel_netem else "switch port ingress (no sch_netem)"
    )


def test_link_loss_is_lost_once_per_link_and_direction(tmp_path):
    loss, n = 5.0, 400
    spec = build_topology("single", {"hosts": 2}, seed=1).with_link_defaults(None, 0, loss)
    got, sent, *_, shown, _ = ping(spec, tmp_path, n, 0.01)
    # an echo and its reply cross 2 links each way: 4 crossings at 5 %
    expected = 1 - (1 - loss / 100) ** 4  # 18.5 %; sd over 400 pings ~1.9 points
    measured = 1 - got / sent
    print(
        f"loss {loss} % per link and direction: expected {expected:.1%} of pings, "
        f"measured {measured:.1%} ({sent - got}/{sent})"
    )
    assert sent == n
    assert abs(measured - expected) < 0.09, (measured, expected)
    text = "\n".join(shown.values())
    lost = [int(x) for x in re.findall(r"lost=(\d+)", text)]
    assert lost and all(x > 0 for x in lost), text  # every impaired port side dropped some


def test_delay_and_loss_example_runs_end_to_end(tmp_path):
    proc = sdnperf_cli(
        "run", "examples/p4-link-delay.toml", "--no-report", "--out", str(tmp_path), timeout=600
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "No run failed" in output and "rtt_min_ms" in output
