"""The answer of `recirc plan --verify` never ranks noise (issues 25 and 27): on synthetic
verifying studies (N = 0, the planned N, the hold by time), the cost at the planned N (TCP
and UDP throughput, UDP loss, the switch's CPU per workload) gives every figure its n and
95 % CI, or at n = 1 the repetitions a CI needs, and compares it with N = 0 by the study's
significance rule: a difference inside the runs' spread (or at n = 1) is
"indistinguishable", one outside it is stated with its CI and p. The delay sentence gives
the mean and p99 with their CIs and the pings (n) they come from. The same in the text and
the --json of `recirc plan --verify` (its verifying studies' stores written here, no network)."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from sdnperf.cli import main
from sdnperf.samples import CpuReport, RunResult, Sample, Summary
from sdnperf.store.sqlite import Store
from sdnperf.studies.answers import answer_for
from sdnperf.studies.answers.recirculation import verified

NOISY = [1.0, 3.0, 0.5, 2.5, 1.5]  # mean 1.7, sd ~1.04
QUIET = [1.00, 1.01, 0.99, 1.00, 1.02]
PASSES = 4980
PASSES_PARAM = "recirc_passes"
NAME = f"recirculation-verify-5ms-sdnperf-one-switch-r{PASSES}"
DESIGNS = {"base": "p4-n0", "passes": f"p4-n{PASSES}", "hold": "p4-hold"}


def scaled(vals, k):
    return [v * k for v in vals]


def arch(name: str, passes: int = 0, hold_us: int = 0) -> dict:
    held = {"recirc_dst": "10.0.0.2", "recirc_passes": passes}
    if hold_us:
        return {"name": name, "kind": "p4", "program": "recirc_hold", "params": held}
    return {"name": name, "kind": "p4", "program": "recirc", "params": held}


ARCHS = {
    "base": arch(DESIGNS["base"]),
    "passes": arch(DESIGNS["passes"], PASSES),
    "hold": arch(DESIGNS["hold"], hold_us=5000),
}


def pings(added_ms: float, count: int = 40) -> list[Sample]:
    """Steady RTTs of 0.1 ms plus the added delay, spread by ±2 % of it and 10 µs."""
    return [
        Sample(
            "ping",
            "rtt_ms",
            0.1 + added_ms * (1 + 0.02 * ((i % 5) - 2) / 2) + 0.01 * (i % 3),
            "ms",
            phase="steady",
        )
        for i in range(count)
    ]


def write(db, name, runs, archs=None) -> None:
    """A verifying study: runs are (design, workload, samples, summaries, switch CPU %);
    `archs`: design -> architecture (default ARCHS)."""
    archs = archs or ARCHS
    db.parent.mkdir(parents=True, exist_ok=True)
    with Store(db) as store:
        sid = store.open_study(name, None, {}, {})
        for i, (design, workload, samples, summaries, cpu) in enumerate(runs):
            a = archs[design]
            store.record_run(
                sid,
                RunResult(
                    key=f"k{i}",
                    topology="one-switch",
                    architecture=a["name"],
                    workload=workload,
                    repetition=i,
                    params={"architecture": a},
                    status="ok",
                    samples=samples,
                    summaries=[Summary(workload, *s) for s in summaries],
                    cpu=CpuReport(per_role={"switch": cpu}) if cpu is not None else CpuReport(),
                ),
            )


def cost_runs(tcp: dict, cpu: dict | None = None, loss: dict | None = None) -> list:
    """TCP runs (design -> Mbit/s of each run, CPU % of each run) and UDP runs (design ->
    loss % of each run, 10 Mbit/s each) beside one ping run per design."""
    cpu, loss = cpu or {}, loss or {}
    runs: list = [
        ("base", "ping", pings(0.0), [], None),
        ("passes", "ping", pings(5.0), [], None),
        ("hold", "ping", pings(5.0), [], None),
    ]
    for design, vals in tcp.items():
        for i, v in enumerate(vals):
            c = cpu.get(design, [None] * len(vals))[i]
            runs.append((design, "tcp", [], [("throughput_mbps", v, "Mbit/s", "higher")], c))
    for design, vals in loss.items():
        for v in vals:
            summaries = [("throughput_mbps", 10.0, "Mbit/s", "higher"), ("loss_pct", v, "%")]
            runs.append((design, "udp", [], summaries, None))
    return runs


def answer(tmp_path, runs) -> tuple[dict, list[str]]:
    """verified()'s row and the verifying study's answer sentences."""
    db = tmp_path / NAME / "study.sqlite"
    write(db, NAME, runs)
    with Store(db) as store:
        sid = store.studies()[-1].id
        return verified(store, sid, 5.0), answer_for(store, sid).sentences


def cost_sentence(sentences, what=f"cost at N = {PASSES}") -> str:
    (s,) = [s for s in sentences if s.startswith(f"one-switch, our switch: {what} ")]
    return s


def test_a_cost_outside_the_noise_is_stated_with_n_ci_and_p(tmp_path):
    tcp = {"base": scaled(QUIET, 900), "passes": scaled(QUIET, 300), "hold": scaled(QUIET, 880)}
    row, text = answer(tmp_path, cost_runs(tcp))
    s = cost_sentence(text)
    assert re.fullmatch(
        rf"one-switch, our switch: cost at N = {PASSES} \(each against N = 0 of the same "
        r"study\): tcp throughput 301\.2 Mbit/s \(95 % CI \S+ \.\. \S+, n = 5\) against N = "
        r"0's 903\.6 Mbit/s \(95 % CI \S+ \.\. \S+, n = 5\): -66\.7 % \(worse; 95 % CI "
        r"\S+ \.\. \S+ %; p = \S+\)\.",
        s,
    ), s
    fig = row["cost_figures"]["passes"]["tcp_mbps"]
    assert fig["n"] == 5 and fig["mean"] == pytest.approx(301.2)
    assert fig["ci"][0] < 301.2 < fig["ci"][1]
    c = row["cost_compared"]["passes"]["tcp_mbps"]
    assert c["verdict"] == "worse" and c["p"] < 0.05 and c["n"] == [5, 5]
    assert c["delta_pct"] == pytest.approx(-66.67, abs=0.01)
    assert c["delta_ci_pct"][1] < 0 and c["repetitions_needed"] is None
    # what the closing table reads stays: the mean of the runs, and % of N = 0's
    assert row["cost"]["passes"]["tcp_mbps"] == pytest.approx(301.2)
    assert row["cost_vs_base"]["passes"]["tcp_pct_of_base"] == pytest.approx(33.33, abs=0.01)
    # the hold by time against the same N = 0, with its own n and CI
    hold = cost_sentence(text, "cost of the hold by time")
    assert "tcp throughput 883.5 Mbit/s (95 % CI " in hold and ", n = 5) against N = 0's" in hold


def test_a_cost_inside_the_noise_is_indistinguishable_and_says_the_repetitions(tmp_path):
    # N passes has 90 % of N = 0's mean, but the runs spread by ~60 %
    tcp = {"base": scaled(NOISY, 500), "passes": scaled(NOISY, 450)}
    row, text = answer(tmp_path, cost_runs(tcp))
    s = cost_sentence(text)
    assert (
        "tcp throughput 765 Mbit/s (95 % CI 185.7 .. 1344, n = 5) against N = 0's 850 Mbit/s "
        "(95 % CI 206.3 .. 1494, n = 5): indistinguishable (Δ -10.0 %, 95 % CI " in s
    ), s
    m = re.search(r"p = 0\.\d+; about (\d+) repetitions each would tell a difference", s)
    assert m and int(m.group(1)) > 5, s
    assert "(worse" not in s and "(better" not in s
    c = row["cost_compared"]["passes"]["tcp_mbps"]
    assert c["verdict"] == "indistinguishable" and c["p"] >= 0.05
    assert c["repetitions_needed"] == int(m.group(1))


def test_a_cost_at_n_1_gives_no_ci_and_asks_for_3_repetitions(tmp_path):
    tcp = {"base": [900.0], "passes": [90.0]}  # -90 %, but one run each
    row, text = answer(tmp_path, cost_runs(tcp, cpu={"base": [10.0], "passes": [60.0]}))
    s = cost_sentence(text)
    assert s == (
        f"one-switch, our switch: cost at N = {PASSES} (each against N = 0 of the same study): "
        "tcp throughput 90 Mbit/s (n = 1: at least 3 repetitions needed for a CI) against "
        "N = 0's 900 Mbit/s (n = 1: at least 3 repetitions needed for a CI): "
        "indistinguishable at n = 1 (Δ -90.0 %, no spread to test; needs at least 3 "
        "repetitions each); switch CPU during tcp 60 % of one core (n = 1: at least 3 "
        "repetitions needed for a CI) against N = 0's 10 % of one core (n = 1: at least 3 "
        "repetitions needed for a CI): indistinguishable at n = 1 (Δ +500.0 %, no spread to "
        "test; needs at least 3 repetitions each)."
    )
    fig = row["cost_figures"]["passes"]["tcp_mbps"]
    assert fig["n"] == 1 and fig["ci"] is None
    c = row["cost_compared"]["passes"]["tcp_mbps"]
    assert c["verdict"] == "indistinguishable" and c["p"] is None
    assert c["repetitions_needed"] == 3 and c["n"] == [1, 1]


def test_udp_loss_and_the_switch_cpu_per_workload(tmp_path):
    """Loss against N = 0's 0 % (no percentage of zero: the direction, with its test); the
    switch's CPU compared per workload (a TCP run and a UDP run are no repetitions of each
    other), while `cost`'s one switch_cpu_pct stays the mean of every run."""
    runs = cost_runs(
        {"base": scaled(QUIET, 900), "passes": scaled(QUIET, 890)},
        cpu={"base": scaled(QUIET, 10), "passes": scaled(NOISY, 12)},
        loss={"base": [0.0] * 5, "passes": scaled(QUIET, 40)},
    )
    row, text = answer(tmp_path, runs)
    s = cost_sentence(text)
    assert re.search(
        r"udp loss 40\.2 % \(95 % CI 39\.6 \.\. 40\.7, n = 5\) against N = 0's 0 % \(95 % CI "
        r"0 \.\. 0, n = 5\): \(worse; p = \S+\)",
        s,
    ), s
    assert re.search(
        r"switch CPU during tcp 20\.4 % of one core \(95 % CI \S+ \.\. \S+, n = 5\) against "
        r"N = 0's 10 % of one core \(95 % CI \S+ \.\. \S+, n = 5\): indistinguishable \(Δ "
        r"\+\d+\.\d %",
        s,
    ), s
    # the order: per workload, throughput before loss before CPU
    assert s.index("tcp throughput") < s.index("switch CPU during tcp") < s.index("udp throughput")
    assert s.index("udp throughput") < s.index("udp loss")
    assert row["cost_compared"]["passes"]["udp_loss_pct"]["verdict"] == "worse"
    assert row["cost_compared"]["passes"]["tcp_switch_cpu_pct"]["verdict"] == "indistinguishable"
    assert row["cost"]["passes"]["switch_cpu_pct"] == pytest.approx(20.4)  # tcp runs only here


def test_the_delay_sentence_gives_mean_and_p99_with_cis_and_the_pings(tmp_path):
    row, text = answer(tmp_path, cost_runs({}))
    (s,) = [s for s in text if s.startswith(f"one-switch, our switch: N = {PASSES}, measured")]
    assert re.fullmatch(
        rf"one-switch, our switch: N = {PASSES}, measured [\d.]+ ms \(median added RTT, 95 % CI "
        r"[\d.]+ \.\. [\d.]+; target 5 ms, error [-+][\d.]+ %\); mean [\d.]+ ms \(95 % CI "
        r"[\d.]+ \.\. [\d.]+\), p99 [\d.]+ ms \(95 % CI [\d.]+ \.\. [\d.]+\), SD [\d.]+ ms; "
        r"n = 40 pings in 1 run \(bootstrap CIs over the pings; each statistic minus the same one "
        r"at N = 0, so a heavy tail at N = 0 can put the p99 below the median\)\.",
        s,
    ), s
    lo, hi = row["achieved_p99_ci_ms"]
    assert lo <= row["achieved_p99_ms"] <= hi and row["ping_runs"] == 1
    assert any(t.startswith("one-switch, our switch: held by time, measured") for t in text)
    # no TCP or UDP run: no cost sentence
    assert not [t for t in text if " cost " in t]


# -- recirc plan --verify --json and its text, on stores written as its studies would be --


def bracketing_study(db) -> None:
    """A bracketing study whose 5 ms lies between N = 2000 and N = 8000 (1 µs per pass)."""
    with Store(db) as store:
        sid = store.open_study("recirculation", None, {}, {})
        for i, n in enumerate((0, 2000, 8000)):
            a = {**arch("p4", n), "target": "sdnperf"}
            store.record_run(
                sid,
                RunResult(
                    key=f"k{i}",
                    topology="one-switch",
                    architecture="p4",
                    workload="ping",
                    repetition=1,
                    params={"architecture": a},
                    status="ok",
                    samples=pings(n / 1000),
                    summaries=[Summary("ping", "rtt_ms", 0.1 + n / 1000, "ms")],
                    point={"architecture.p4.params.recirc_passes": n},
                ),
            )


def design_of(name: str) -> str:
    """The design of a verifying study's architecture, by its name (as verified() reads it)."""
    return "base" if name.endswith("-n0") else "hold" if name.endswith("-hold") else "passes"


def fake_run_file(tcp: dict):
    """recirc_design.run_file without a network: the study file's runs written to its store,
    each N holding N µs, its TCP runs at `tcp` (design -> Mbit/s of each repetition)."""

    def run(path, out, parser) -> int:
        doc = tomllib.loads(path.read_text())
        name = doc["study"]["name"]
        archs, runs = {}, []
        for a in doc["architecture"]:
            design = design_of(a["name"])
            archs[design] = a
            for w in doc["workload"]:
                if w["kind"] == "ping":
                    added = 5.0 if design == "hold" else a["params"][PASSES_PARAM] / 1000
                    runs.append((design, "ping", pings(added), [], None))
                elif w["kind"] == "iperf-tcp":
                    for v in tcp[design]:
                        s = [("throughput_mbps", v, "Mbit/s", "higher")]
                        runs.append((design, "tcp", [], s, 30.0))
        write(out / name / "study.sqlite", name, runs, archs)
        return 0

    return run


def test_plan_verify_json_and_text_carry_n_ci_and_the_comparison(tmp_path, capsys, monkeypatch):
    from sdnperf.studies import recirc_design

    bracketing_study(tmp_path / "recirculation" / "study.sqlite")
    tcp = {"base": scaled(QUIET, 900), "passes": scaled(NOISY, 500), "hold": [850.0]}
    monkeypatch.setattr(recirc_design, "run_file", fake_run_file(tcp))
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(tmp_path / "recirculation")]
    assert main([*argv, "--verify", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    n = row["passes"]
    # the fields issue 25 names stay
    assert (row["target"], row["topology"]) == ("sdnperf", "one-switch") and 4000 < n < 6000
    assert row["achieved_ci_ms"][0] <= row["achieved_ms"] <= row["achieved_ci_ms"][1]
    assert row["converged"] and row["cost_study"].endswith("-cost")
    # the cost at N: n and CI per figure, the test against N = 0, inside the noise here
    assert row["cost_figures"]["passes"]["tcp_mbps"]["n"] == 5
    c = row["cost_compared"]["passes"]["tcp_mbps"]
    assert c["verdict"] == "indistinguishable" and c["n"] == [5, 5]
    assert row["cost_compared"]["hold"]["tcp_mbps"]["repetitions_needed"] == 3  # one run
    assert row["cost_figures"]["base"]["tcp_switch_cpu_pct"]["n"] == 5
    # a round keeps its delays; the cost is the cost study's alone
    assert not [f for f in row["rounds"][0] if f.startswith("cost")]
    assert main([*argv, "--verify"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith(f"  cost at N = {n} ")]
    assert "tcp throughput 850 Mbit/s (95 % CI " in line and ": indistinguishable (Δ " in line
    assert "(worse" not in line
    (hold,) = [x for x in out.splitlines() if x.startswith("  cost of the hold by time ")]
    assert "tcp throughput 850 Mbit/s (n = 1: at least 3 repetitions needed for a CI)" in hold
    assert "indistinguishable at n = 1" in hold
    assert re.search(
        rf"N = {n}, measured \(each minus N = 0's\) mean [\d.]+ ms \(95 % CI .*\); min [\d.]+ \(95 % CI [\d.]+ \.\. [\d.]+\), "
        r"p99 [\d.]+ \(95 % CI [\d.]+ \.\. [\d.]+\); spread \(SD\) [\d.]+ ms; n = 40 pings in 1 run",
        out,
    ), out
    # the cost study's own answer (printed by its run, atop its report) says the same
    with Store(tmp_path / row["cost_study"] / "study.sqlite") as store:
        text = answer_for(store, store.studies()[-1].id).sentences
    assert cost_sentence(text, f"cost at N = {n}") == f"one-switch, our switch: {line.strip()}"
