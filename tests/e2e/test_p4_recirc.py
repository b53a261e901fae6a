"""recirc.p4 on our P4Runtime switch in Mininet, its passes set at run time over P4Runtime
(`params = {recirc_passes = N}`): `recirc study` (a pilot's cost per pass, then N values
that bracket the target), `recirc plan` on its store (an interpolation; --verify runs the
planned N and recirc_hold.p4's hold by time; an unreachable or unmeasured target is
refused), and the switch's counters show exactly N recirculations per selected packet, on
our switch and on BMv2."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from sdnperf.store.sqlite import Store
from sdnperf.studies.answers import answer_for
from tests.e2e.support import (
    NEEDS_DAEMON,
    NEEDS_MININET,
    bmv2_env,
    ping_min_ms,
    recirc_network,
    sdnperf_cli,
    switch_recirculations,
)

pytestmark = [*NEEDS_MININET, NEEDS_DAEMON]
PINGS = 5

# The template of `recirc study --file`: one switch, our switch, a few pings (the e2e
# scale); the pilot and the bracketing study are written from it.
TEMPLATE = textwrap.dedent("""\
    [study]
    name = "recirculation"
    repetitions = 1

    [[topology]]
    name = "one-switch"
    kind = "single"
    hosts = 2

    [[architecture]]
    name = "p4"
    kind = "p4"
    app = "proactive"
    program = "recirc"

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    count = 30
    interval = 0.01

    [[workload]]
    name = "tcp"
    kind = "iperf-tcp"
    pairs = [["h1", "h2"]]
    duration = 2
    """)
TARGET_MS = 2.0


def test_pilot_brackets_the_target_plan_verifies_and_refuses_the_unreachable(tmp_path):
    """recirc study: the pilot finds a cost per pass, the study's N reach past the target;
    recirc plan interpolates; --verify runs the planned N and the hold by time (our switch)
    and measures the delay they add; a target no N can reach is refused, saying why."""
    template = tmp_path / "template.toml"
    template.write_text(TEMPLATE)
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot")}
    env.pop("SDNPERF_TAG", None)
    out = tmp_path / "results"
    r = sdnperf_cli(
        "recirc",
        "study",
        "--target-delay",
        f"{TARGET_MS}ms",
        "--file",
        str(template),
        "--out",
        str(out),
        env=env,
    )
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    cost_us = float(
        re.search(r"pilot: one-switch, target sdnperf: ([\d.e+-]+) µs per pass", r.stdout).group(1)
    )
    assert cost_us > 0
    designed = json.loads((out / "recirculation" / "recirc-design.json").read_text())
    values = designed["passes"]["p4"]
    # the pilot cannot under-shoot: its rounds (N, added delay measured) went on, N at
    # least doubled each round, until the last one's delay passed the target, and only it
    pilot = designed["pilot"]["sdnperf one-switch"]
    print(pilot)
    (n_past, past), *_ = pilot[::-1]
    assert past > TARGET_MS, pilot
    later = [n for n, _ in pilot[1:]]
    assert all(b >= 2 * a for a, b in zip(later, later[1:])), pilot
    assert all(d <= TARGET_MS for _, d in pilot[1:-1]), pilot  # (the first round has two N)
    # the study's N reach past that measured N, and start below it
    assert values[0] == 0 and values[1] < n_past <= values[-1], (values, pilot)
    # the study's own answer never ranks noise (issue 27): at one repetition per N its switch
    # CPU sentences (and TCP ones, where the study ran TCP: the bracketing study pings only)
    # give n = 1 and ask for repetitions, claiming nothing
    with Store(out / "recirculation" / "study.sqlite") as store:
        study_text = answer_for(store, store.studies()[-1].id).sentences
    print(study_text)
    tcp = [s for s in study_text if ": TCP throughput " in s]
    cpu = [s for s in study_text if ": switch CPU during " in s]
    assert cpu, study_text
    for s in tcp:
        assert "(n = 1)" in s and "needs at least 3 repetitions per N" in s, s
        assert "halves by" not in s and "does not halve" not in s, s
    assert all("indistinguishable at n = 1" in s for s in cpu), cpu
    plan = sdnperf_cli(
        "recirc",
        "plan",
        "--target-delay",
        f"{TARGET_MS}ms",
        "--from",
        str(out / "recirculation"),
        "--verify",
        "--json",
        env=env,
    )
    print(plan.stdout, plan.stderr)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    (row,) = json.loads(plan.stdout)
    assert (row["target"], row["topology"]) == ("sdnperf", "one-switch")
    # read between two measured N (possibly 0 and the first: the pilot's 40 pings can
    # misjudge the cost per pass by more than the design's 4x margin below the target on a
    # loaded machine; seen: 0.158 µs per pass, so N = 3171 already held more than 2 ms;
    # never past the top N, which the pilot measured past the target)
    assert row["bracketed"] and 0 < row["planned_passes"] <= values[-1]
    # the closed loop: the planned N first, then N corrected from what each round held,
    # until within 10 % or 4 rounds; the answer is the closest round, every round kept
    rounds = row["rounds"]
    assert rounds[0]["passes"] == row["planned_passes"] and 1 <= len(rounds) <= 4
    assert len({r["passes"] for r in rounds}) == len(rounds)  # each round a new N
    assert row["converged"] == (abs(row["error_pct"]) <= 10)
    # it stops early only when close, or when two rounds put the target on a step of the
    # delay-vs-N curve (the answer then names both sides)
    step = row.get("step")
    assert row["converged"] or len(rounds) == 4 or step, rounds
    if step:
        assert set(step["between"]) <= {r["passes"] for r in rounds}, (step, rounds)
        # a step in N, or none: the fast pings of both on one line, the machine's speed
        # changed between the rounds (the sentence says which)
        assert ("lies on a step" in step["sentence"]) != step["in_time"], step
        assert step["in_time"] == ("That is no step in N" in step["sentence"]), step
    # every round says how many of its pings ran slow, and by how much
    for r in rounds:
        speeds = r["speeds"]
        assert 0 <= speeds["slow_share_pct"] <= 100 and speeds["pings"] >= 2, r
        assert speeds["slow_share_pct"] in (0, 100) or speeds["slow_over_fast"] > 1, r
    # the design that met the target: N passes when the loop converged, else the hold by
    # time (first round) when that came within 10 %, else none
    met = row["meets_target"]
    if row["converged"]:
        assert met["design"] == "N passes" and met["passes"] == row["passes"], met
    elif abs(row["hold_error_pct"]) <= 10:
        assert met["design"] == "hold by time" and met["hold_ms"] == TARGET_MS, met
        assert met["achieved_ms"] == row["hold_achieved_median_ms"], met
    else:
        assert met is None, met
    assert min(abs(r["error_pct"]) for r in rounds) == abs(row["error_pct"])
    assert any(r["passes"] == row["passes"] for r in rounds)
    # the cost is measured once, at the final N, beside N = 0 and the hold by time
    assert {"base", "passes", "hold"} <= set(row["cost"]), row["cost"]
    assert row["cost"]["passes"].get("tcp_mbps") is not None
    # at one repetition the cost has no CI and ranks nothing against N = 0 (issue 27)
    tcp = row["cost_compared"]["passes"]["tcp_mbps"]
    assert tcp["verdict"] == "indistinguishable" and tcp["n"] == [1, 1], tcp
    assert (
        tcp["repetitions_needed"] == 3 and row["cost_figures"]["passes"]["tcp_mbps"]["ci"] is None
    )
    for prefix in ("", "hold_"):  # bounded CIs around the points (mean and median)
        for stat in ("", "_median"):
            lo, hi = row[f"{prefix}achieved{stat}_ci_ms"]
            assert lo <= row[f"{prefix}achieved{stat}_ms"] <= hi and hi - lo < 10 * TARGET_MS
    # the planned N holds a packet back: clearly more than nothing. (On a loaded machine a
    # switch that loops for ms is preempted, so N holds longer than planned: no upper
    # bound here; the report's table gives the error.)
    assert row["achieved_median_ms"] > 0.25 * TARGET_MS
    # held by time: never leaves early (the base RTT's spread aside); most pings within a
    # pass or so of the hold, so the median is close even where preemption adds outliers
    assert row["hold_achieved_min_ms"] > 0.9 * TARGET_MS
    assert abs(row["hold_achieved_median_ms"] - TARGET_MS) < 0.25 * TARGET_MS
    # the verifying study's answer says it in a sentence
    with Store(out / row["verify_study"] / "study.sqlite") as store:
        sentences = answer_for(store, store.studies()[-1].id).sentences
    print(sentences)
    assert re.search(
        rf"one-switch, our switch: N = {row['passes']}, measured [\d.]+ ms \(median .*"
        rf"target {TARGET_MS:g} ms.*p99 [-\d.]+ ms \(95 % CI .*; n = \d+ pings in 1 run",
        sentences[0],
    )
    # the cost study's answer: each figure at n = 1 asks for repetitions, none is ranked
    with Store(out / row["cost_study"] / "study.sqlite") as store:
        cost_text = answer_for(store, store.studies()[-1].id).sentences
    print(cost_text)
    (cost_line,) = [s for s in cost_text if f": cost at N = {row['passes']} " in s]
    assert "tcp throughput " in cost_line and "indistinguishable at n = 1" in cost_line
    assert "(n = 1: at least 3 repetitions needed for a CI)" in cost_line
    assert "(worse" not in cost_line and "(better" not in cost_line
    # the hold by time ran in the first round, beside the planned N
    with Store(out / rounds[0]["verify_study"] / "study.sqlite") as store:
        first = answer_for(store, store.studies()[-1].id).sentences
    assert any("held by time, measured" in s for s in first), first
    # a 2 ms hold over one switch is the experiment, not a slow emulator: no run of the
    # verifying studies is marked emulator-bound (1 ms per switch passage would be)
    for name in [r["verify_study"] for r in rounds] + [row["cost_study"]]:
        with Store(out / name / "study.sqlite") as store:
            marked = [r.key for r in store.runs(store.studies()[-1].id) if r.cpu.emulator_bound]
        assert not marked, (name, marked)
    # unreachable: more passes than a packet may make
    far = sdnperf_cli(
        "recirc",
        "plan",
        "--target-delay",
        "3600s",
        "--extrapolate",
        "--from",
        str(out / "recirculation"),
        env=env,
    )
    assert far.returncode == 2
    assert re.search(r"unreachable: 3.6e\+06 ms needs N = \d+ passes, more than", far.stderr), (
        far.stderr
    )
    # beyond the N measured: refused as an extrapolation
    beyond = sdnperf_cli(
        "recirc",
        "plan",
        "--target-delay",
        f"{TARGET_MS * 10}ms",
        "--from",
        str(out / "recirculation"),
        env=env,
    )
    assert beyond.returncode == 2 and "would be an extrapolation" in beyond.stderr


def test_pilot_refuses_a_target_past_its_maximum_n(tmp_path):
    """The pilot doubles N until the added delay passes the target, but not past
    --pilot-max-passes: a target that N cannot reach there is refused, naming the bound."""
    template = tmp_path / "template.toml"
    template.write_text(TEMPLATE)
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot")}
    env.pop("SDNPERF_TAG", None)
    r = sdnperf_cli(
        "recirc",
        "study",
        "--target-delay",
        "10s",
        "--pilot-max-passes",
        "4000",
        "--file",
        str(template),
        "--out",
        str(tmp_path / "results"),
        env=env,
    )
    print(r.stdout, r.stderr)
    assert r.returncode == 2, r.stdout + r.stderr
    # it measured at the bound before refusing (round 2 ran N = 4000), then said why
    assert (tmp_path / "results" / "recirculation-pilot-r2-one-switch.toml").exists()
    assert re.search(
        r"refused: the pilot reached its maximum of N = 4000 passes \(added delay [-\d.e]+ "
        r"ms\) without passing the largest target, 10000 ms",
        r.stderr,
    ), r.stderr
    assert not (tmp_path / "results" / "recirculation" / "recirc-design.json").exists()


def read_counter(sw, p4info: Path, name: str) -> int:
    """Packets of counter `name`[0], read over P4Runtime by a second (non-primary) client:
    what any P4Runtime tool would see, on our switch and on BMv2 alike."""
    import grpc
    from finsy.proto import p4r, p4r_grpc

    from sdnperf.controllers.p4rt.schema import Schema

    schema = Schema.from_file(p4info)
    counter_id = next(c.preamble.id for c in schema.p4info.counters if c.preamble.name == name)
    with grpc.insecure_channel(f"127.0.0.1:{sw.grpc_port}") as channel:
        request = p4r.ReadRequest(
            device_id=sw.device_id,
            entities=[
                p4r.Entity(
                    counter_entry=p4r.CounterEntry(counter_id=counter_id, index=p4r.Index(index=0))
                )
            ],
        )
        for response in p4r_grpc.P4RuntimeStub(channel).Read(request, timeout=10):
            for entity in response.entities:
                return entity.counter_entry.data.packet_count
    raise AssertionError(f"no {name} in the switch's answer")


def switch_counters(passes: int, tmp_path: Path, target: str = "sdnperf") -> dict:
    """Ping h1 -> h2 PINGS times through one switch running recirc.p4 with `passes`: the
    program's recirculations counter (P4Runtime), our switch's own count, the min RTT."""
    with recirc_network(
        tmp_path / "run",
        "single",
        {"hosts": 2},
        "recirc",
        target=target,
        params={"recirc_passes": passes},
    ) as started:
        net, arch = started.net, started.arch
        h1, h2 = net.get("h1"), net.get("h2")
        out = h1.cmd(f"ping -c {PINGS} -i 0.05 -W 2 {h2.IP()}")
        assert f"{PINGS} received" in out, out
        sw = net.switches[0]
        found = {
            "counter": read_counter(sw, arch.program.p4info, "RecircEgress.recirculations"),
            "rtt_min_ms": ping_min_ms(out),
        }
        if target == "sdnperf":
            found["switch_total"] = switch_recirculations(sw)
            found["ctl_counter"] = int(
                re.search(
                    r"packets=(\d+)", sw.ctl("counter_read RecircEgress.recirculations 0")
                ).group(1)
            )
    return found


@pytest.mark.parametrize("passes", [0, 15])
def test_counters_show_n_passes_per_selected_packet(passes, tmp_path):
    # proactive entries: every echo request and reply is forwarded by the tables (no
    # packet-in / packet-out), and every IPv4 packet is selected (recirc_dscp = "any")
    found = switch_counters(passes, tmp_path)
    assert found["counter"] == passes * 2 * PINGS
    assert found["switch_total"] == found["ctl_counter"] == found["counter"]


def test_bmv2_reads_the_same_params(tmp_path, monkeypatch):
    """BMv2's simple_switch_grpc (the reference, ../shared/p4-reference) takes the same
    P4Runtime writes: its counter shows N passes per packet and its RTT grows with N."""
    for name, value in bmv2_env().items():
        monkeypatch.setenv(name, value)
    none, some = (switch_counters(n, tmp_path / str(n), target="bmv2") for n in (0, 15))
    print(none, some)
    assert (none["counter"], some["counter"]) == (0, 15 * 2 * PINGS)
    assert some["rtt_min_ms"] > none["rtt_min_ms"]


def test_held_packets_do_not_starve_other_traffic(tmp_path):
    """Packets to h2 loop for about a second each (2,000,000 passes), hundreds at once;
    meanwhile h1 -> h3 is forwarded as usual: the switch serves its ports between bounded
    batches of recirculation passes (RECIRC_BUDGET), so looping packets never starve them."""
    with recirc_network(
        tmp_path / "run",
        "single",
        {"hosts": 3},
        "recirc",
        params={"recirc_passes": 2_000_000, "recirc_dst": "10.0.0.2"},
    ) as started:
        net = started.net
        h1, h2, h3 = (net.get(h) for h in ("h1", "h2", "h3"))
        assert h2.IP() == "10.0.0.2"  # the held destination (recirc_design.HELD_DST)
        flood = h1.popen(["ping", "-q", "-c", "300", "-i", "0.005", "-W", "5", h2.IP()])
        try:
            out = h1.cmd(f"ping -c 20 -i 0.05 -W 2 {h3.IP()}")
            stats = net.switches[0].ctl("stats")
        finally:
            flood.kill()
            flood.wait()
    print(out, stats)
    assert "20 received" in out, out
    rtts = sorted(float(x) for x in re.findall(r"time=([\d.]+) ms", out))
    held = int(re.search(r"recirculations=(\d+)", stats).group(1))
    assert held > 100_000  # packets to h2 were looping meanwhile
    assert rtts[len(rtts) // 2] < 10.0, rtts  # h3's median RTT: ms at most, not seconds


def test_study_cpu_priority_reaches_the_pilots_switches_and_their_facts(tmp_path):
    """`recirc study --cpu-priority high` over a file that sets none: every pilot run's
    switch ran at nice -10 and says so in its facts (the setting and what the kernel
    said); the refused pilot (a target past --pilot-max-passes) keeps the test short."""

    template = tmp_path / "template.toml"
    template.write_text(TEMPLATE)
    env = {**os.environ, "SDNPERF_RUN_ROOT": str(tmp_path / "runroot")}
    env.pop("SDNPERF_TAG", None)
    out = tmp_path / "results"
    argv = ["recirc", "study", "--target-delay", "10s", "--pilot-max-passes", "1000"]
    r = sdnperf_cli(
        *argv, "--cpu-priority", "high", "--file", str(template), "--out", str(out), env=env
    )
    print(r.stdout, r.stderr)
    assert r.returncode == 2 and "refused: the pilot reached its maximum" in r.stderr, r.stderr
    with Store(out / "recirculation-pilot" / "study.sqlite") as store:
        runs = store.runs(store.studies()[-1].id)
    assert runs and all(run.status == "ok" for run in runs), [run.error for run in runs]
    for run in runs:
        facts = run.params["facts"]
        assert run.params["architecture"]["cpu_priority"] == facts["cpu_priority"] == "high"
        assert list(facts["switch_scheduling"]["threads"]) == ["SCHED_OTHER nice -10"]
