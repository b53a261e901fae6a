"""The recirculation answer's TCP halving, UDP loss and switch CPU sentences never rank
noise (issue 27): on synthetic stores, every figure carries its n and CI; a change over N
inside the runs' spread (or at n = 1) is called indistinguishable and the sentence says how
many repetitions would tell; one outside the spread is stated with its CI and p."""

from __future__ import annotations

import re

from sdnperf.arch.config import P4Config
from sdnperf.samples import CpuReport, RunResult, Summary
from sdnperf.store.sqlite import Store
from sdnperf.studies.answers import answer_for

NOISY = [1.0, 3.0, 0.5, 2.5, 1.5]  # mean 1.7, sd ~1.04
QUIET = [1.00, 1.01, 0.99, 1.00, 1.02]


def scaled(vals, k):
    return [v * k for v in vals]


def sentences(tmp_path, runs) -> list[str]:
    """The answer of a recirculation study whose runs are (N, workload, summaries, CPU %)."""
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("recirculation", None, {}, {})
        for i, (n, workload, summaries, cpu) in enumerate(runs):
            arch = P4Config(kind="p4", name="p4", program="recirc", params={"recirc_passes": n})
            store.record_run(
                sid,
                RunResult(
                    key=f"k{i}",
                    topology="one-switch",
                    architecture="p4",
                    workload=workload,
                    repetition=1,
                    params={"architecture": arch.model_dump()},
                    status="ok",
                    summaries=[Summary(workload, *s) for s in summaries],
                    cpu=CpuReport(per_role={"switch": cpu}) if cpu is not None else CpuReport(),
                    point={"architecture.p4.params.recirc_passes": n},
                ),
            )
        return answer_for(store, sid).sentences


def tcp_runs(by_n: dict[int, list[float]]):
    return [
        (n, "tcp", [("throughput_mbps", v, "Mbit/s", "higher")], None)
        for n, vals in by_n.items()
        for v in vals
    ]


def tcp_sentence(tmp_path, by_n) -> str:
    text = sentences(tmp_path, tcp_runs(by_n))
    return next(s for s in text if "TCP throughput" in s)


# -- TCP halving --------------------------------------------------------------------------


def test_tcp_halving_outside_the_noise_is_stated_with_p_n_and_ci(tmp_path):
    runs = {0: scaled(QUIET, 1000), 15: scaled(QUIET, 700), 31: scaled(QUIET, 300)}
    s = tcp_sentence(tmp_path, runs)
    assert re.match(
        r"one-switch, our switch: TCP throughput halves by N = 31 \(below half of N = 0's, "
        r"p = \S+\) \(Mbit/s: N = 0: 1004 Mbit/s \(95 % CI 989\.8 \.\. 1018, n = 5\); ",
        s,
    )
    # N = 15 is 70 % of N = 0: significantly lower, but not halved
    assert re.search(r"N = 15: 702\.8 Mbit/s \(95 % CI .*, n = 5\): -30\.0 % \(worse; 95 % CI ", s)
    assert re.search(r"N = 31: 301\.2 Mbit/s \(95 % CI .*, n = 5\): -70\.0 % \(worse; 95 % CI ", s)


def test_tcp_halving_inside_the_noise_is_not_claimed_and_says_the_repetitions(tmp_path):
    # N = 31 has 45 % of N = 0's mean, but the runs spread by ~60 %: no halving is claimed
    s = tcp_sentence(tmp_path, {0: scaled(NOISY, 1000), 31: scaled(NOISY, 450)})
    assert "halves by" not in s and "does not halve" not in s
    m = re.search(
        r"TCP throughput is not seen to halve: whether it has halved at N = 31 is inside the "
        r"noise \(about (\d+) repetitions per N would tell it from half of N = 0's\)",
        s,
    )
    assert m and int(m.group(1)) > 5
    assert "N = 31: 765 Mbit/s (95 % CI 185.7 .. 1344, n = 5): indistinguishable (Δ -55.0 %" in s
    assert "(worse" not in s


def test_tcp_that_stays_above_half_outside_the_noise_does_not_halve(tmp_path):
    s = tcp_sentence(tmp_path, {0: scaled(QUIET, 1000), 63: scaled(QUIET, 900)})
    assert s.startswith(
        "one-switch, our switch: TCP throughput does not halve up to N = 63 (every N above "
        "half of N = 0's) (Mbit/s: N = 0: 1004 Mbit/s (95 % CI 989.8 .. 1018, n = 5); "
    )
    assert re.search(r"N = 63: 903\.6 Mbit/s \(95 % CI .*n = 5\): -10\.0 % \(worse; ", s)


def test_tcp_at_n_1_is_never_ranked_and_asks_for_repetitions(tmp_path):
    s = tcp_sentence(tmp_path, {0: [1000.0], 31: [100.0]})  # -90 %, but one run each
    assert s == (
        "one-switch, our switch: TCP throughput is not seen to halve: whether it has halved "
        "at N = 31 is inside the noise (at n = 1; needs at least 3 repetitions per N) "
        "(Mbit/s: N = 0: 1000 Mbit/s (n = 1); N = 31: 100 Mbit/s (n = 1): indistinguishable "
        "at n = 1 (Δ -90.0 %, no spread to test; needs at least 3 repetitions each))."
    )


def test_the_old_sweep_still_halves_where_the_runs_agree(tmp_path):
    """1000 / (1 + N / 20) Mbit/s in three identical runs per N: no spread, so a difference
    is no noise (common.compare's constant rule) and the answer stays 'halves by N = 31'."""
    by_n = {n: [1000 / (1 + n / 20)] * 3 for n in (0, 1, 3, 7, 15, 31, 63)}
    s = tcp_sentence(tmp_path, by_n)
    assert "TCP throughput halves by N = 31 (below half of N = 0's in every run)" in s


# -- UDP loss and switch CPU --------------------------------------------------------------


def udp_runs(by_n: dict[int, list[float]], cpu: dict[int, list[float]] | None = None):
    cpu = cpu or {}
    return [
        (n, "udp", [("loss_pct", v, "%", "lower")], cpu.get(n, [None] * len(vals))[i])
        for n, vals in by_n.items()
        for i, v in enumerate(vals)
    ]


def test_udp_loss_outside_the_noise_is_stated_against_n_0(tmp_path):
    text = sentences(tmp_path, udp_runs({0: [0.0] * 5, 63: scaled(QUIET, 40)}))
    (s,) = [s for s in text if "UDP loss" in s]
    # no percentage of 0 % loss: the direction, with its test
    assert re.fullmatch(
        r"one-switch, our switch: UDP loss N = 0: 0 % \(95 % CI 0 \.\. 0, n = 5\); N = 63: "
        r"40\.2 % \(95 % CI 39\.6 \.\. 40\.7, n = 5\): \(worse; p = \S+\)\.",
        s,
    )


def test_udp_loss_inside_the_noise_is_indistinguishable(tmp_path):
    runs = {0: scaled(NOISY, 2), 7: scaled(NOISY, 2), 63: scaled(NOISY, 2.6)}
    (s,) = [s for s in sentences(tmp_path, udp_runs(runs)) if "UDP loss" in s]
    assert "N = 7" not in s  # the largest N against the smallest
    assert "N = 63: 4.42 % (95 % CI 1.07 .. 7.77, n = 5): indistinguishable (Δ +30.0 %" in s
    assert re.search(r"p = 0\.\d+; about \d+ repetitions each would tell a difference", s)
    assert "(worse" not in s


def test_switch_cpu_per_workload_with_n_ci_and_the_test(tmp_path):
    cpu = {0: scaled(QUIET, 10), 63: scaled(QUIET, 70)}
    runs = udp_runs({0: [0.0] * 5, 63: [0.0] * 5}, cpu=cpu)
    (s,) = [s for s in sentences(tmp_path, runs) if "switch CPU" in s]
    assert s.startswith(
        "one-switch, our switch: switch CPU during udp (% of one core) N = 0: 10 % (95 % CI "
    )
    assert re.search(r"N = 63: 70\.3 % \(95 % CI .*n = 5\): \+600\.0 % \(worse; 95 % CI ", s)


def test_switch_cpu_inside_the_noise_and_at_n_1(tmp_path):
    cpu = {0: scaled(NOISY, 10), 63: scaled(NOISY, 12)}
    noisy = udp_runs({0: [0.0] * 5, 63: [0.0] * 5}, cpu=cpu)
    (s,) = [s for s in sentences(tmp_path, noisy) if "switch CPU" in s]
    assert ": indistinguishable (Δ +20.0 %" in s and "(worse" not in s
    one = tmp_path / "one"
    one.mkdir()
    single = udp_runs({0: [0.0], 63: [0.0]}, cpu={0: [10.0], 63: [50.0]})
    (s,) = [s for s in sentences(one, single) if "switch CPU" in s]
    assert s.endswith(
        "N = 0: 10 % (n = 1); N = 63: 50 % (n = 1): indistinguishable at n = 1 (Δ +400.0 %, "
        "no spread to test; needs at least 3 repetitions each)."
    )
