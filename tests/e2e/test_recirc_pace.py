"""Our switch's recirculation path latency (`recirc_pace_us`, --recirc-pace-us): a packet
held by time (recirc_hold.p4) re-enters ingress once per latency instead of as fast as the
pipeline runs, so the data-plane thread sleeps while it waits: a 5 ms hold takes tens of
passes, not thousands, and still leaves no earlier than its hold."""

from __future__ import annotations

from tests.e2e.support import (
    NEEDS_DAEMON,
    NEEDS_MININET,
    ping_min_ms,
    recirc_network,
    switch_recirculations,
)

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]
PINGS = 10
HOLD_US = 5000


def held(tmp_path, pace_us: int) -> tuple[float, float, dict]:
    """(min RTT ms, recirculation passes per held ping, facts) of PINGS pings held 5 ms."""
    with recirc_network(
        tmp_path / str(pace_us),
        "single",
        {"hosts": 2},
        "recirc_hold",
        recirc_pace_us=pace_us,
        params={"recirc_hold_us": HOLD_US, "recirc_dst": "10.0.0.2"},
    ) as started:
        net, arch = started.net, started.arch
        sw = net.switches[0]
        before = switch_recirculations(sw)
        out = net.get("h1").cmd(f"ping -c {PINGS} -i 0.05 -W 2 {net.get('h2').IP()}")
        assert f"{PINGS} received" in out, out
        per_ping = (switch_recirculations(sw) - before) / PINGS
        return ping_min_ms(out), per_ping, arch.facts()


def test_a_paced_hold_makes_tens_of_passes_not_thousands_and_never_leaves_early(tmp_path):
    rtt_min, per_ping, facts = held(tmp_path, 100)
    assert facts["recirc_pace_us"] == 100
    assert rtt_min >= HOLD_US / 1000  # the hold by time is kept
    # one pass per 100 µs at most: <= 50 passes for 5 ms (plus the first)
    assert 1 <= per_ping <= HOLD_US / 100 + 1, per_ping
    # the same hold without a latency: the thread runs pass after pass (0.5-1 µs each)
    rtt_min0, per_ping0, _ = held(tmp_path, 0)
    assert rtt_min0 >= HOLD_US / 1000
    assert per_ping0 > 20 * per_ping, (per_ping0, per_ping)
