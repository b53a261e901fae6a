"""The link-fidelity arithmetic (sdnperf/fidelity/links.py) on synthetic counters: what
counts as a link that did not do what the study configured, and what the mark says."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sdnperf.fidelity import links
from sdnperf.fidelity.links import LinkEnd, judge_switch_end, judge_tc_end

SHOW = (
    "port 1 out: delay=5000us,rate=10000000bit,seed=3 held=0 lost=0 full=0 offered=1000 "
    "released=1000 bytes=1500000 model_delay_ns=6000000000 late_ns=100000000 "
    "late_max_ns=900000 busy_packets=800 busy_bytes=1200000 busy_span_ns=1000000000\n"
    "port 1 in: delay=5000us held=2 lost=7 full=0\n"
    "not a port line\n"
)


def test_parse_impair_show_reads_every_counter_and_older_lines():
    parsed = links.parse_impair_show(SHOW)
    assert set(parsed) == {(1, "out"), (1, "in")}
    assert parsed[(1, "out")]["busy_span_ns"] == 1_000_000_000
    assert parsed[(1, "out")]["late_max_ns"] == 900_000
    assert parsed[(1, "in")] == {"held": 2, "lost": 7, "full": 0}


def test_delta_subtracts_counters_but_keeps_maxima():
    before = {"released": 10, "late_ns": 5, "late_max_ns": 7}
    after = {"released": 30, "late_ns": 9, "late_max_ns": 8}
    assert links.delta(after, before) == {"released": 20, "late_ns": 4, "late_max_ns": 8}
    assert links.delta(after, None) == after


def counters(**kw) -> dict:
    base = dict(
        offered=1000,
        released=1000,
        bytes=1_500_000,
        lost=0,
        full=0,
        model_delay_ns=1000 * 5_000_000,
        late_ns=1000 * 50_000,  # 0.05 ms late on average
        late_max_ns=400_000,
        busy_packets=800,
        busy_bytes=800 * 1500,
        busy_span_ns=800 * 1_200_000,  # 1500 B per 1.2 ms = 10 Mbit/s
    )
    return base | kw


END = LinkEnd("s1-h2", "s1 port 2 out (s1-eth2)", rate_mbit=10, delay_ms=5, loss_pct=None)


def test_a_link_that_kept_its_rate_and_delay_is_not_a_breach():
    check = judge_switch_end(END, counters())
    assert not check.breach, check.reason
    assert check.measured["rate_mbit"] == 10.0
    assert check.measured["added_delay_ms"] == 5.05
    assert check.configured == {"rate_mbit": 10, "delay_ms": 5}


def test_a_busy_link_that_sent_slower_than_its_rate_is_a_breach_with_its_numbers():
    # the same bytes over twice the time: 5 Mbit/s while packets queued for the link
    check = judge_switch_end(END, counters(busy_span_ns=800 * 2_400_000))
    assert check.breach
    assert check.measured["rate_mbit"] == 5.0
    assert "sent at 5 Mbit/s" in check.reason and "configured 10 Mbit/s (50%)" in check.reason
    # within the tolerance: 9.5 of 10 Mbit/s
    assert not judge_switch_end(END, counters(busy_span_ns=int(800 * 1_263_158))).breach


def test_too_few_back_to_back_departures_judge_no_rate():
    check = judge_switch_end(END, counters(busy_packets=10, busy_span_ns=10 * 9_999_999))
    assert "rate_mbit" not in check.measured and not check.breach


def test_late_departures_are_added_delay_the_study_did_not_ask_for():
    # 2 ms late on average on a 5 ms link: over max(10 % of 5 ms, 0.5 ms)
    check = judge_switch_end(END, counters(late_ns=1000 * 2_000_000, late_max_ns=9_000_000))
    assert check.breach
    assert check.measured["late_ms"] == 2.0 and check.measured["added_delay_ms"] == 7.0
    assert "2.00 ms after they were due" in check.reason and "configured 5 ms" in check.reason
    # 0.4 ms late is under the 0.5 ms floor; on a 20 ms link 1.5 ms is under 10 %
    assert not judge_switch_end(END, counters(late_ns=1000 * 400_000)).breach
    long_link = LinkEnd("s1-s2", "s1 port 3 out", delay_ms=20)
    assert not judge_switch_end(long_link, counters(late_ns=1000 * 1_500_000)).breach
    assert judge_switch_end(long_link, counters(late_ns=1000 * 2_500_000)).breach


def test_a_lateness_breach_says_who_waited_for_a_cpu_meanwhile():
    late = judge_switch_end(END, counters(late_ns=1000 * 2_000_000, late_max_ns=9_000_000))
    slow = judge_switch_end(END, counters(busy_span_ns=800 * 2_400_000))  # the rate alone
    held = judge_switch_end(END, counters())
    assert late.late and not slow.late and not held.late
    before = (slow.reason, held.reason)
    links.attribute_lateness([late, slow, held], "the switch waited 40 ms on run queues")
    assert late.reason.endswith("(meanwhile the switch waited 40 ms on run queues)")
    assert (slow.reason, held.reason) == before  # only lateness is about waking on time
    assert late.record()["late"] and late.breach  # the mark stays
    said = late.reason
    links.attribute_lateness([late], "")  # nothing recorded: nothing added
    assert late.reason == said
    # with the switch's run-queue time: 1000 packets 2 ms late = 2000 ms against 500 ms
    again = judge_switch_end(END, counters(late_ns=1000 * 2_000_000, late_max_ns=9_000_000))
    links.attribute_lateness([again], "the switch waited 500 ms", 500.0)
    assert again.measured["late_per_wait"] == 4.0
    assert again.reason.endswith(
        "(meanwhile the switch waited 500 ms: 4 ms late for every ms it waited, waiting for "
        "a CPU accounts for it)"
    )
    assert links.accounted_by_waiting(again.measured)
    # a switch that waited 20 ms for 2000 ms of lateness was stopped or slept through
    stopped = judge_switch_end(END, counters(late_ns=1000 * 2_000_000, late_max_ns=9_000_000))
    links.attribute_lateness([stopped], "the switch waited 20 ms", 20.0)
    assert stopped.measured["late_per_wait"] == 100.0 and stopped.breach
    assert "more than waiting for a CPU accounts for" in stopped.reason
    assert not links.accounted_by_waiting(stopped.measured)
    assert not links.accounted_by_waiting(held.measured)  # never attributed: no ratio


def test_loss_is_judged_by_a_binomial_test():
    lossy = LinkEnd("s1-h1", "s1 port 1 out", loss_pct=10)
    # 10 % of 1000: 100 expected, sd ~9.5; 4 sd + 1 ~ 39
    assert not judge_switch_end(lossy, counters(lost=120)).breach
    check = judge_switch_end(lossy, counters(lost=200))
    assert check.breach and check.measured["loss_pct"] == 20.0
    assert "lost 200 of 1000 packets (20.00 %), configured 10 %" in check.reason
    assert links.binomial_outside(0, 1000, 0.1) and not links.binomial_outside(1, 1, 0.5)


def test_few_packets_judge_nothing():
    check = judge_switch_end(END, counters(released=5, offered=5, late_ns=5 * 10**9))
    assert not check.breach and "late_ms" not in check.measured


def test_tc_shaper_that_let_more_through_than_its_rate_is_a_breach():
    end = LinkEnd("s1-h2", "s1-eth2 (tc)", rate_mbit=10)
    ok = {"htb": {"bytes": 12_500_000, "packets": 9000, "drops": 3}}  # 10 Mbit/s over 10 s
    check = judge_tc_end(end, ok, 10.0)
    assert not check.breach and check.measured == {"mean_rate_mbit": 10.0, "queue_drops": 3}
    check = judge_tc_end(end, {"htb": {"bytes": 25_000_000, "packets": 18000}}, 10.0)
    assert check.breach and "sent 20 Mbit/s on average" in check.reason


def test_tc_shaper_may_exceed_its_rate_by_its_burst_over_a_short_window():
    # htb at 1 Mbit/s with Mininet's ~1600-B bucket, judged over 0.1 s: a shaper that held
    # its rate sent at most 12 500 B in the window + 1600 B that left at once after an idle
    # spell = 1.128 Mbit/s on average, over the 10 % tolerance without the burst
    bucket = LinkEnd("s1-h2", "s1-eth2 (tc)", rate_mbit=1, burst_bytes=1600)
    held = {"htb": {"bytes": 12_500 + 1600, "packets": 40}}
    assert (12_500 + 1600) * 8 / 0.1 / 1e6 > 1.1
    assert judge_tc_end(replace(bucket, burst_bytes=0), held, 0.1).breach
    check = judge_tc_end(bucket, held, 0.1)
    assert not check.breach and check.measured["mean_rate_mbit"] == 1.128
    # a bypassed shaper is still caught: twice the rate is more than any burst explains
    check = judge_tc_end(bucket, {"htb": {"bytes": 25_000, "packets": 40}}, 0.1)
    assert check.breach and "and its 1600 B burst" in check.reason
    # over a whole workload (10 s) the burst is a rounding error of the rate
    assert judge_tc_end(bucket, {"htb": {"bytes": 1_400_000, "packets": 900}}, 10.0).breach


def test_netem_loss_from_tc_statistics():
    end = LinkEnd("s1-h2", "s1-eth2 (tc)", loss_pct=1)
    stats = {"netem": {"packets": 990, "drops": 10, "loss_pct": 1.0}}
    assert not judge_tc_end(end, stats, 5.0).breach
    stats = {"netem": {"packets": 900, "drops": 100, "loss_pct": 1.0}}
    assert judge_tc_end(end, stats, 5.0).breach


def test_parse_tc_qdiscs_keeps_shapers_and_netem():
    text = json.dumps(
        [
            {"kind": "noqueue", "dev": "lo", "bytes": 0},
            {"kind": "htb", "dev": "s1-eth1", "bytes": 10, "packets": 2, "drops": 0},
            {
                "kind": "netem",
                "dev": "s1-eth1",
                "options": {"loss-random": {"loss": 0.01}},
                "packets": 2,
                "drops": 1,
            },
        ]
    )
    parsed = links.parse_tc_qdiscs(text)
    assert set(parsed) == {"s1-eth1"}
    assert parsed["s1-eth1"]["htb"]["bytes"] == 10
    assert parsed["s1-eth1"]["netem"]["loss_pct"] == 1.0
    assert links.parse_tc_qdiscs("not json") == {}


def test_summarize_names_each_broken_end():
    good = judge_switch_end(END, counters())
    bad = judge_switch_end(END, counters(busy_span_ns=800 * 2_400_000))
    breach, reason = links.summarize([good, bad])
    assert breach and reason.startswith("link s1-h2 at s1 port 2 out (s1-eth2): sent at 5")
    assert links.summarize([good]) == (False, "")


# -- scheduled links: judged against the setting in force ---------------------------------

STEP_STUDY = """[study]
name = "t"
[topology]
kind = "single"
hosts = 2
[topology.schedule.step]
links = ["h1-s1"]
rate_mbps = { "0" = 100, "5" = 10, "10" = 100 }
[topology.schedule.lossy]
links = ["h2-s1"]
direction = "down"
loss_pct = { "0" = 0, "10" = 4 }
delay_ms = { "0" = 10, "5" = 30 }
[[architecture]]
name = "bridge"
kind = "bridge"
[[workload]]
name = "tcp"
kind = "iperf-tcp"
pairs = [["h1", "h2"]]
duration = 15
"""


def scheduled_spec():
    from sdnperf.study.loader import load_study_text

    return load_study_text(STEP_STUDY, "s.toml", Path(".")).topology


def test_steps_between_and_the_window_means():
    from sdnperf.links.schedule import flow_of, steps_between

    spec = scheduled_spec()
    assert flow_of(spec, "s1", "h1") == "h1-s1 down"
    assert flow_of(spec, "h1", "s1") == "h1-s1 up"
    assert flow_of(spec, "h2", "s1") is None  # only h2-s1 down is scheduled
    # monitor started 1 s before traffic, stopped at 15 s: 6 s at 100, 5 at 10, 5 at 100
    steps = steps_between(spec, "h1-s1 down", -1.0, 15.0)
    assert [(t, s.rate_mbps) for t, s in steps] == [(-1.0, 100), (5, 10), (10, 100)]
    w = links.over_window(steps, 15.0)
    assert w["rate_mbit"] == pytest.approx((6 * 100 + 5 * 10 + 5 * 100) / 16)
    w = links.over_window(steps_between(spec, "h2-s1 down", 0.0, 15.0), 15.0)
    assert w["delay_ms"] == pytest.approx((5 * 10 + 10 * 30) / 15)
    assert (w["loss_min_pct"], w["loss_max_pct"]) == (0, 4)
    # a window that ends before a change does not see it
    w = links.over_window(steps_between(spec, "h2-s1 down", 0.0, 4.0), 4.0)
    assert (w["delay_ms"], w["loss_max_pct"]) == (10, 0)


def scheduled_switch_end(spec, window=(0.0, 15.0)) -> LinkEnd:
    from sdnperf.links.schedule import steps_between

    end = LinkEnd("s1-h1", "s1 port 1 out (s1-eth1)", rate_mbit=100, flow="h1-s1 down")
    return links.scheduled_end(end, steps_between(spec, end.flow, *window), window[1])


def test_a_switch_port_that_followed_a_rate_step_is_not_a_breach():
    end = scheduled_switch_end(scheduled_spec())
    assert end.rate_mbit == pytest.approx(70.0)  # (5 x 100 + 5 x 10 + 5 x 100) / 15
    # the departures kept the spacing the rates in force asked for (5 % slower): most
    # packets went at 100, many at 10 -- far below the mean of 70, and still no breach
    c = counters(busy_span_ns=1_000_000_000, busy_model_ns=950_000_000, busy_bytes=3_000_000)
    check = judge_switch_end(end, c)
    assert not check.breach, check.reason
    assert check.measured["rate_share"] == 0.95
    assert check.configured["scheduled"] == "h1-s1 down"


def test_a_switch_port_that_lagged_its_schedule_is_a_breach():
    end = scheduled_switch_end(scheduled_spec())
    c = counters(busy_span_ns=1_000_000_000, busy_model_ns=850_000_000)
    check = judge_switch_end(end, c)
    assert check.breach
    assert "85% of the rate in force" in check.reason
    assert "scheduled 70 Mbit/s on average" in check.reason
    # an older switch without busy_model_ns: a scheduled rate is not judged at all
    c.pop("busy_model_ns")
    check = judge_switch_end(end, c)
    assert not check.breach and "rate_share" not in check.measured


def test_a_static_port_is_judged_by_the_switch_model_spacing_too():
    c = counters(busy_model_ns=800 * 1_200_000)  # exactly on time
    assert not judge_switch_end(END, c).breach
    c = counters(busy_model_ns=800 * 1_000_000)  # 1 ms asked, 1.2 ms taken: 83 %
    assert judge_switch_end(END, c).breach


def test_scheduled_loss_is_judged_against_its_range():
    from sdnperf.links.schedule import steps_between

    spec = scheduled_spec()
    end = LinkEnd("s1-h2", "s1-eth2 (tc)", delay_ms=10, flow="h2-s1 down")
    end = links.scheduled_end(end, steps_between(spec, end.flow, 0.0, 15.0), 15.0)
    assert end.loss_range_pct == (0, 4)
    assert end.delay_ms == pytest.approx((5 * 10 + 10 * 30) / 15)
    ok = counters(offered=10_000, lost=150)  # 1.5 %: between 0 and 4 %
    assert not judge_switch_end(end, ok).breach
    too_many = counters(offered=10_000, lost=600)  # 6 %: more than 4 % can explain
    check = judge_switch_end(end, too_many)
    assert check.breach and "scheduled 0 .. 4 %" in check.reason
    # netem's counters too
    netem = {"netem": {"packets": 9_400, "drops": 600, "loss_pct": 4.0}}
    assert judge_tc_end(end, netem, 15.0).breach
    netem = {"netem": {"packets": 9_850, "drops": 150, "loss_pct": 4.0}}
    assert not judge_tc_end(end, netem, 15.0).breach


def test_a_kernel_shaper_under_a_schedule_is_held_to_the_schedules_mean():
    from sdnperf.links.schedule import steps_between

    spec = scheduled_spec()
    end = LinkEnd("s1-h1", "s1-eth1 (tc)", rate_mbit=100, flow="h1-s1 down")
    end = links.scheduled_end(end, steps_between(spec, end.flow, 0.0, 15.0), 15.0)
    # 70 Mbit/s on average over 15 s is what the schedule allowed; 100 is not
    held = {"htb": {"bytes": int(68e6 * 15 / 8), "packets": 80_000, "drops": 0}}
    assert not judge_tc_end(end, held, 15.0).breach
    bypassed = {"htb": {"bytes": int(99e6 * 15 / 8), "packets": 120_000, "drops": 0}}
    check = judge_tc_end(end, bypassed, 15.0)
    assert check.breach and "scheduled rate's mean 70 Mbit/s" in check.reason


def test_binomial_range_is_the_plain_test_for_one_probability():
    assert links.binomial_outside(150, 10_000, 0.0, p_high=0.04) is False
    assert links.binomial_outside(150, 10_000, 0.02, p_high=0.04) is False
    assert links.binomial_outside(50, 10_000, 0.02, p_high=0.04) is True  # too few
    for lost in (80, 100, 140):
        assert links.binomial_outside(lost, 10_000, 0.01) == links.binomial_outside(
            lost, 10_000, 0.01, p_high=0.01
        )
