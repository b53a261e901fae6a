"""`sdnperf recirc plan` over a study store written through the store's own API: the points
come from each run's stored architecture (program recirc, params.recirc_passes) and its
RTT summary; missing data gets a clear error."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sdnperf.arch.config import P4Config
from sdnperf.cli import main
from sdnperf.samples import RunResult, Sample, Summary
from sdnperf.store.sqlite import Store


def write_study(db, points, program="recirc", target="sdnperf", status="ok"):
    with Store(db) as store:
        sid = store.open_study("recirc", None, {}, {})
        for i, (passes, rtt) in enumerate(points):
            arch = P4Config(
                kind="p4",
                name=f"{target}-{passes}",
                target=target,
                program=program,
                params={"recirc_passes": passes} if program == "recirc" else {},
            )
            store.record_run(
                sid,
                RunResult(
                    key=f"single|{arch.name}|ping|{i}",
                    topology="single",
                    architecture=arch.name,
                    workload="ping",
                    repetition=i,
                    params={"architecture": arch.model_dump()},
                    status=status,
                    # steady pings around rtt: their median is the default metric
                    samples=[
                        Sample("ping", "rtt_ms", rtt + d, "ms", phase="steady")
                        for d in (-0.001, 0.0, 0.001, 0.5)  # one outlier: moves the mean only
                    ],
                    summaries=[
                        Summary("ping", "rtt_ms", rtt, "ms"),
                        Summary("ping", "rtt_min_ms", rtt * 0.9, "ms"),
                    ],
                ),
            )


def synthetic(a=0.1, b=0.02, reps=3, seed=1):
    rng = np.random.default_rng(seed)
    return [
        (n, a + b * n + rng.normal(0, 0.002)) for n in (0, 1, 3, 7, 15, 31, 63) for _ in range(reps)
    ]


def test_plan_prints_the_fit_and_the_passes(tmp_path, capsys):
    write_study(tmp_path / "study.sqlite", synthetic())
    assert main(["recirc", "plan", "--target-delay", "1ms", "--from", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (
        "recirc: single, ping, target sdnperf: 21 runs, recirc_passes [0, 1, 3, 7, 15, 31, 63], "
        "rtt_median_ms" in out
    )
    n = int(re.search(r"needs N = (\d+) passes", out).group(1))
    assert 45 <= n <= 55  # 1 ms / 0.02 ms per pass, inside the N measured
    lo, hi = map(int, re.search(r"from the CIs: (\d+) \.\. (\d+)", out).groups())
    assert lo <= n <= hi


def test_each_target_is_fitted_apart(tmp_path, capsys):
    db = tmp_path / "study.sqlite"
    write_study(db, synthetic(b=0.02))
    write_study(db, [(n, 1.0 + 0.5 * n) for n in (0, 1, 3, 7, 15)], target="bmv2")
    args = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--total"]
    assert main([*args, "--extrapolate"]) == 0
    out = capsys.readouterr().out
    assert (
        "single, ping, target bmv2: 5 runs" in out
        and "single, ping, target sdnperf: 21 runs" in out
    )
    assert "A total delay of 5 ms needs N = 8 passes" in out  # (5 - 1) / 0.5
    assert re.search(r"answer \(the line\): N = 24\d — EXTRAPOLATED", out)  # (5 - 0.1) / 0.02 > 63
    # without --extrapolate: bmv2 answers, our switch's N (beyond 63) is refused, saying why
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "A total delay of 5 ms needs N = 8 passes" in captured.out
    assert (
        "error: single, ping, target sdnperf: not measured: 5 ms lies outside the delays "
        "measured (up to 1.36 ms at N = 63); the answer would be an extrapolation" in captured.err
    )


def test_unreachable_target_is_refused_saying_why(tmp_path, capsys):
    write_study(tmp_path / "study.sqlite", synthetic())
    argv = ["recirc", "plan", "--target-delay", "1000s", "--from", str(tmp_path)]
    assert main([*argv, "--extrapolate"]) == 2
    err = capsys.readouterr().err
    assert "unreachable: 1e+06 ms needs N = 5000000" not in err  # not the exact N: the fit's
    assert re.search(r"unreachable: 1e\+06 ms needs N = \d+ passes, more than", err), err
    assert "recirc_passes allows (16777215" in err


def test_json_lists_one_object_per_target_and_topology(tmp_path, capsys):
    import json

    db = tmp_path / "study.sqlite"
    write_study(db, synthetic())
    write_study(db, [(n, 1.0 + 0.5 * n) for n in (0, 1, 3, 7, 15)], target="bmv2")
    assert main(["recirc", "plan", "--target-delay", "1ms", "--from", str(db), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["target"], r["topology"]) for r in rows] == [
        ("bmv2", "single"),
        ("sdnperf", "single"),
    ]
    for r in rows:
        assert {"target", "topology", "passes", "achieved_ms", "achieved_ci_ms"} <= set(r)
        assert r["achieved_ms"] is None  # no --verify
        assert r["bracketed"] is True
    assert rows[0]["passes"] == 2 and 45 <= rows[1]["passes"] <= 55


def test_no_recirc_runs_is_a_clear_error(tmp_path, capsys):
    write_study(tmp_path / "study.sqlite", [(0, 0.1), (0, 0.2), (0, 0.3)], program="l2l3")
    assert main(["recirc", "plan", "--target-delay", "5ms", "--from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert 'no finished run of a p4 architecture with program = "recirc"' in err


def test_failed_runs_do_not_count_and_one_pass_count_cannot_be_fitted(tmp_path, capsys):
    db = tmp_path / "study.sqlite"
    write_study(db, [(7, 0.3), (7, 0.31), (7, 0.32)])
    assert main(["recirc", "plan", "--target-delay", "5ms", "--from", str(db)]) == 2
    err = capsys.readouterr().err
    assert "an added delay needs the delays at N = 0" in err  # the interpolation's
    assert (
        main(["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--extrapolate"]) == 2
    )
    assert "at least 2 different pass counts" in capsys.readouterr().err  # the line's


def test_missing_store_and_bad_target(tmp_path, capsys):
    assert main(["recirc", "plan", "--target-delay", "5ms", "--from", str(tmp_path / "x")]) == 2
    assert "no study database here" in capsys.readouterr().err
    write_study(tmp_path / "study.sqlite", synthetic())
    assert main(["recirc", "plan", "--target-delay", "soon", "--from", str(tmp_path)]) == 2
    assert "--target-delay: cannot read delay 'soon'" in capsys.readouterr().err


def test_help_exits_0(capsys):
    with pytest.raises(SystemExit) as info:
        main(["recirc", "plan", "--help"])
    assert info.value.code == 0 and "--target-delay" in capsys.readouterr().out


def fake_verify(delay_of, calls):
    """recirc_cli._verify_run without a network: the delay an N achieves is delay_of(N)
    (a curve that bends, as on a loaded machine), with a CI of ±2 %."""

    def run(args, path, study_name, key, target_ms, passes, k, what):
        calls.append((k, passes, what))
        if what == "cost":
            return {"verify_study": f"cost-{passes}", "cost": {"passes": {"tcp_mbps": 1.0}}}
        d = delay_of(passes)
        row = {
            "verify_study": f"r{k}",
            "achieved_ms": d,
            "achieved_ci_ms": [d * 0.98, d * 1.02],
            "achieved_median_ms": d,
            "achieved_median_ci_ms": [d * 0.98, d * 1.02],
            "error_pct": (d - target_ms) / target_ms * 100,
            "error_statistic": "median",
            "cost": {},
        }
        for stat in ("_min", "_p99"):
            row.update({f"achieved{stat}_ms": d, f"achieved{stat}_ci_ms": [d, d]})
        row.update(spread_ms=0.1, pings=100)
        if k == 0:
            row.update(hold_achieved_median_ms=target_ms * 1.01, hold_error_pct=1.0)
        return row

    return run


def test_verify_corrects_n_from_the_measured_delays_until_within_tolerance(
    tmp_path, capsys, monkeypatch
):
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    calls: list = []
    # the study said 1 µs per pass; at the verification each pass costs more and more
    monkeypatch.setattr(
        recirc_cli, "_verify_run", fake_verify(lambda n: n / 1000 + (n / 3000) ** 2, calls)
    )
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify", "--json"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["planned_passes"] == 5000
    rounds = row["rounds"]
    assert rounds[0]["passes"] == 5000 and rounds[0]["error_pct"] > 10  # 7.8 ms: missed
    assert 1 < len(rounds) <= 4 and row["converged"] is True
    assert abs(row["error_pct"]) <= 10 and row["passes"] == rounds[-1]["passes"]
    assert row["hold_achieved_median_ms"] == pytest.approx(5.05)  # the first round's
    # rounds run ping only; the cost runs once, at the final N
    assert [c[2] for c in calls] == ["ping"] * len(rounds) + ["cost"]
    assert calls[-1][1] == row["passes"] and row["cost"] == {"passes": {"tcp_mbps": 1.0}}


def test_verify_that_does_not_converge_says_so_with_every_round(tmp_path, capsys, monkeypatch):
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    calls: list = []
    # a delay that jumps past the target (a scheduler slice): no N lands within 10 %
    monkeypatch.setattr(
        recirc_cli, "_verify_run", fake_verify(lambda n: 3.0 if n < 4000 else 8.0, calls)
    )
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main([*argv, "--json", "--rounds", "3", "--delay-only"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["converged"] is False and len(row["rounds"]) == 3
    assert abs(row["error_pct"]) == 40.0  # the closest round: 3 ms, -40 %
    assert all(c[2] == "ping" for c in calls)  # --delay-only: no cost study
    # the third round found the target on the step (3 ms below N = 4000, 8 ms from it)
    assert row["step"]["delays_ms"] == [3.0, 8.0] and row["step"]["between"][1] == 5000
    main([*argv, "--rounds", "2", "--delay-only"])
    out = capsys.readouterr().out
    assert re.search(r"round 1: N = 5000: 8.000 ms \(95 % CI .*\), error \+60.0 %", out), out
    assert "round 2: N = " in out and "not within 10 %" in out


def test_verify_stops_on_a_step_naming_the_bracketing_pair(tmp_path, capsys, monkeypatch):
    """A step between neighbouring N (3 ms up to N = 4499, 8 ms from 4500 on): once the
    rounds bracket it so narrowly that the rise is far beyond the cost per pass, the loop
    stops before --rounds and says the target lies on a step, with the pair and delays."""
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    calls: list = []
    monkeypatch.setattr(
        recirc_cli, "_verify_run", fake_verify(lambda n: 3.0 if n < 4500 else 8.0, calls)
    )
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main([*argv, "--json", "--rounds", "8", "--delay-only"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["converged"] is False and len(row["rounds"]) < 8
    step = row["step"]
    lo, hi = step["between"]
    assert lo < 4500 <= hi and step["delays_ms"] == [3.0, 8.0]
    assert step["errors_pct"] == [-40.0, 60.0] and step["expected_rise_ms"] < 5.0 / 3
    assert (lo, 3.0) in [(r["passes"], r["achieved_median_ms"]) for r in row["rounds"]]
    main([*argv, "--rounds", "8", "--delay-only"])
    out = capsys.readouterr().out
    assert "closed loop stopped: the target (5 ms) lies on a step of the delay" in out, out
    assert f"N = {lo} held 3 ms (-40 %), N = {hi} held 8 ms (+60 %)" in out


def test_verify_takes_its_workloads_from_file(tmp_path, capsys, monkeypatch):
    """--file: the verifying runs' TCP/UDP workloads come from a study file (e.g. quick's
    with the thesis's 10 Mbit/s UDP); a file that is not a study is refused up front."""
    from sdnperf.studies import recirc_cli, recirc_design

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    quick = recirc_design.load_template("quick")
    quick["workload"] = [
        dict(w, rate="10M") if w["kind"] == "iperf-udp" else w for w in quick["workload"]
    ]
    file = recirc_design.write(quick, tmp_path / "thesis.toml")
    seen: list = []
    monkeypatch.setattr(
        recirc_cli,
        "_template_of",
        lambda path, scale, f=None: seen.append(f) or recirc_design.load_template_file(Path(f)),
    )
    monkeypatch.setattr(recirc_cli, "_verify_run", fake_verify(lambda n: n / 1000, []))
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main([*argv, "--file", str(file)]) == 0
    assert seen and set(seen) == {str(file)}
    bad = tmp_path / "bad.toml"
    bad.write_text("[study]\nname = 3\n")
    assert main([*argv, "--file", str(bad)]) == 2
    assert f"--file {bad}" in capsys.readouterr().err


def test_verify_runs_the_switches_at_the_cpu_priority_asked_and_says_so(
    tmp_path, capsys, monkeypatch
):
    """--cpu-priority reaches every verifying study; a row measured with a setting other
    than normal names it (and the threads' policies the runs recorded)."""
    from sdnperf.studies import recirc_cli, recirc_design

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    asked: list = []

    def stop(*args, **kwargs):
        asked.append(kwargs.get("cpu_priority"))
        raise recirc_design.DesignError("stopped by the test")

    monkeypatch.setattr(recirc_design, "verify_study", stop)
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    main([*argv, "--cpu-priority", "realtime", "--delay-only"])
    main([*argv, "--delay-only"])
    assert asked == ["realtime", None]  # None: the study file's (normal)
    capsys.readouterr()
    row = {
        "passes": 5,
        "cpu_priority": "realtime",
        "switch_scheduling": {"SCHED_RR prio 1": 12},
    }
    assert recirc_cli._verify_lines(row) == [
        "switch cpu_priority realtime (threads: 12 SCHED_RR prio 1)"
    ]
    assert recirc_cli._verify_lines({**row, "cpu_priority": "normal"}) == []


def test_verify_records_the_cost_beside_n0_and_the_cost_studys_load_average(
    tmp_path, capsys, monkeypatch
):
    import json

    from sdnperf.studies import recirc_cli
    from sdnperf.studies.answers.recirculation import cost_comparison, cost_figure

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    run = fake_verify(lambda n: n / 1000, [])

    def with_base(*args):
        got = run(*args)
        if args[-1] == "cost":
            got["cost_vs_base"] = {"passes": {"tcp_pct_of_base": 1.0}}
            got["cost_figures"] = {"passes": {"tcp_mbps": cost_figure([1.0], "tcp_mbps")}}
            got["cost_compared"] = {
                "passes": {"tcp_mbps": cost_comparison([1.0], [2.0], "tcp_mbps")}
            }
        return got

    loads = iter([7.5, 9.25, 11.0])
    monkeypatch.setattr(recirc_cli, "_verify_run", with_base)
    monkeypatch.setattr(recirc_cli, "_load_average", lambda: next(loads))
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify", "--json"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["rounds"][0]["load_average"] == 7.5  # the one round, then the cost study
    assert row["cost_load_average"] == [9.25, 11.0]
    assert row["cost_vs_base"] == {"passes": {"tcp_pct_of_base": 1.0}}
    assert row["cost_compared"]["passes"]["tcp_mbps"]["verdict"] == "indistinguishable"
    lines = recirc_cli._verify_lines(row)
    # each figure with its n (no CI at one run) against N = 0's: never ranked at n = 1
    assert (
        f"cost at N = {row['passes']} (each against N = 0 of the same study): tcp throughput 1 Mbit/s (n = 1: "
        "at least 3 repetitions needed for a CI) against N = 0's 2 Mbit/s (n = 1: at least 3 "
        "repetitions needed for a CI): indistinguishable at n = 1 (Δ -50.0 %, no spread to "
        "test; needs at least 3 repetitions each)."
    ) in lines
    assert "cost study's load average (1 min, start, end): 9.25, 11.0" in lines


def test_study_takes_cpu_priority_over_the_files_and_refuses_an_unknown_one(
    tmp_path, capsys, monkeypatch
):
    from sdnperf.studies import recirc_cli, recirc_design

    seen: list = []

    def pilot(args, doc, out, largest):
        seen.append({a.get("cpu_priority") for a in recirc_design.recirc_architectures(doc)})
        return 3  # the pilot's run "stopped": cmd_study returns its status

    monkeypatch.setattr(recirc_cli, "_pilot", pilot)
    argv = ["recirc", "study", "--target-delay", "5ms", "--out", str(tmp_path)]
    assert main([*argv, "--cpu-priority", "realtime"]) == 3
    assert main(argv) == 3
    assert seen == [{"realtime"}, {None}]  # without the flag: quick.toml's own (unset)
    with pytest.raises(SystemExit) as info:
        main([*argv, "--cpu-priority", "fast"])
    assert info.value.code == 2 and "--cpu-priority" in capsys.readouterr().err


def test_ctrl_c_in_a_verifying_study_stops_the_whole_plan(tmp_path, capsys, monkeypatch):
    # the study catches Ctrl-C itself and returns 130: the plan must stop there, exit 130,
    # not report a failed verification and go on to the next target
    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    started: list = []
    monkeypatch.setattr(recirc_cli.design, "verify_study", lambda *a, **kw: {})
    monkeypatch.setattr(recirc_cli.design, "write", lambda study, file, comment: file)
    monkeypatch.setattr(recirc_cli.design, "run_file", lambda *a: started.append(a) or 130)
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert len(started) == 1 and "interrupted" in err and "error: verify" not in err, err


def test_verify_on_two_speeds_says_it_is_no_step_in_n_and_names_the_hold_that_meets_it(
    tmp_path, capsys, monkeypatch
):
    """What the quiet machine did (bench/recirc/README.md, "The step"): each round's fast
    pings lie on one line (1 µs a pass), but from N = 4500 on most pings ran 1.65x slower, so
    the medians jump. The loop stops, says the step is in time, not in N, and carries the
    hold by time, within the tolerance, as the design that meets the target (text and
    JSON); the fields the issue names stay."""
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    calls: list = []

    def slow_share(n):
        return 0.1 if n < 4500 else 0.7

    base = fake_verify(lambda n: n / 1000 * (1.0 if n < 4500 else 1.65), calls)

    def run(args, path, study_name, key, target_ms, passes, k, what):
        row = base(args, path, study_name, key, target_ms, passes, k, what)
        if what != "cost":
            row["speeds"] = {
                "fast_ms": passes / 1000,
                "slow_share_pct": 100 * slow_share(passes),
                "slow_over_fast": 1.65,
                "mean_slow_run": 12.0,
                "pings": 100,
            }
        if k == 0:
            row.update(hold_achieved_median_ci_ms=[5.0, 5.1], hold_spread_ms=0.03)
        return row

    monkeypatch.setattr(recirc_cli, "_verify_run", run)
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main([*argv, "--json", "--rounds", "8", "--delay-only"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["converged"] is False and len(row["rounds"]) < 8
    assert {"target", "topology", "passes", "achieved_ms", "achieved_ci_ms"} <= set(row)
    step = row["step"]
    assert step["in_time"] is True and "no step in N" in step["sentence"]
    assert [s["slow_share_pct"] for s in step["speeds"]] == [10.0, 70.0]
    met = row["meets_target"]
    assert met["design"] == "hold by time" and met["program"] == "recirc_hold"
    assert met["hold_ms"] == 5.0 and met["achieved_ms"] == pytest.approx(5.05)
    assert met["achieved_ci_ms"] == [5.0, 5.1] and met["error_pct"] == 1.0
    main([*argv, "--rounds", "8", "--delay-only"])
    out = capsys.readouterr().out
    assert "That is no step in N" in out, out
    assert (
        "the design that meets the target: the hold by time (recirc_hold.p4, 5 ms), measured "
        "5.050 ms (median, 95 % CI 5.000 .. 5.100), error +1.0 %; the N passes did not" in out
    ), out


def test_verify_that_converges_names_the_n_passes_as_meeting_the_target(
    tmp_path, capsys, monkeypatch
):
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    monkeypatch.setattr(recirc_cli, "_verify_run", fake_verify(lambda n: n / 1000, []))
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify", "--json"]
    assert main([*argv, "--delay-only"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["converged"] and row["meets_target"]["design"] == "N passes"
    assert row["meets_target"]["passes"] == row["passes"] == 5000


def test_verify_where_neither_design_meets_the_target_says_so(tmp_path, capsys, monkeypatch):
    import json

    from sdnperf.studies import recirc_cli

    db = tmp_path / "study.sqlite"
    write_study(db, [(n, 0.1 + 0.001 * n) for n in (0, 1000, 2000, 4000, 8000) for _ in range(2)])
    base = fake_verify(lambda n: 3.0 if n < 4500 else 8.0, [])

    def run(*a):
        row = base(*a)
        if "hold_error_pct" in row:
            row.update(hold_achieved_median_ms=9.0, hold_error_pct=80.0)
        return row

    monkeypatch.setattr(recirc_cli, "_verify_run", run)
    argv = ["recirc", "plan", "--target-delay", "5ms", "--from", str(db), "--verify"]
    assert main([*argv, "--json", "--rounds", "8", "--delay-only"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["meets_target"] is None and row["step"]["in_time"] is False
    main([*argv, "--rounds", "8", "--delay-only"])
    assert "neither design held the target within 10 %" in capsys.readouterr().out
