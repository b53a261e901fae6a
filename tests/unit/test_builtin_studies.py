"""Built-in studies: every shipped file is a valid study, `study list/show` read the package
(durations measured, never guessed), and each study's answer is computed from a synthetic
store written through the store's own API."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from sdnperf.arch.config import P4Config
from sdnperf.cli import main
from sdnperf.samples import CpuReport, RunResult, Sample, Summary
from sdnperf.store.sqlite import Store
from sdnperf.studies import builtin
from sdnperf.studies.answers import answer_for, builtin_of
from sdnperf.studies.builtin import durations


# -- the shipped files ---------------------------------------------------------------------
@pytest.mark.parametrize("study", builtin.available(), ids=lambda s: s.name)
def test_every_scale_is_a_valid_study_with_a_page(study):
    from sdnperf.ctlbench.config import load as load_ctlbench
    from sdnperf.study.loader import load_study
    from sdnperf.study.plan import plan_runs

    page = study.page.read_text()
    for heading in ("**Question.**", "**Method**", "**Metrics.**", "**Reading the report.**"):
        assert heading in page, f"{study.page}: no {heading}"
    for scale in builtin.SCALES:
        files = study.files(scale)
        assert files, f"{study.name} has no {scale} scale"
        for path in files:
            if study.tool == "ctlbench":
                cfg = load_ctlbench(path)
                assert builtin_of(cfg.study.name) == study.name
            else:
                loaded = load_study(path)
                # the scale's first file is the study; a further part may be NAME-part
                # (answers/__init__.py's builtin_of maps it to the study's answer)
                assert builtin_of(loaded.name) == study.name
                assert path != files[0] or loaded.name == study.name
                assert plan_runs(loaded)


def test_smoke_scale_is_small():
    """The e2e tests run every smoke file: at most 2 sweep points and 1 repetition."""
    from sdnperf.study.loader import load_study

    for study in builtin.available():
        for path in study.files("smoke"):
            if study.tool == "ctlbench":
                import tomllib

                data = tomllib.loads(path.read_text())
                assert data["study"]["repetitions"] == 1
                assert len(data["load"]["switches"]) * len(data["load"]["rate"]) <= 2
                continue
            cfg = load_study(path).config
            assert cfg.study.repetitions == 1
            for sweep in cfg.sweep:
                assert len(sweep.values) <= 2, f"{path}: {sweep.param}"


# -- study list / show ---------------------------------------------------------------------
def test_list_says_not_measured_without_a_measurement(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(durations, "FILE", tmp_path / "durations.json")
    assert main(["study", "list"]) == 0
    out = capsys.readouterr().out
    for study in builtin.available():
        assert study.name in out and study.question in out
    assert out.count("quick scale: not measured on this machine") == len(builtin.available())


def test_list_shows_the_measured_duration_from_the_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "durations.json"
    monkeypatch.setattr(durations, "FILE", path)
    durations.record("recirculation", "quick", 187.4, "sdnperf study run recirculation", path=path)
    stored = json.loads(path.read_text())["recirculation"]["quick"]
    assert stored["seconds"] == 187.4 and stored["command"].startswith("sdnperf study run")
    assert main(["study", "list"]) == 0
    out = capsys.readouterr().out
    block = "\n".join(out.split("recirculation\n", 1)[1].splitlines()[:3])
    assert re.search(r"quick scale: 3 min 07 s \(measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on ", block)
    assert out.count("not measured") == len(builtin.available()) - 1


def test_show_prints_the_file_that_runs_and_the_page(capsys):
    assert main(["study", "show", "recirculation", "--scale", "paper"]) == 0
    assert capsys.readouterr().out == builtin.find("recirculation").files("paper")[0].read_text()
    assert main(["study", "show", "recirculation", "--page"]) == 0
    assert capsys.readouterr().out.startswith("# recirculation")
    assert main(["study", "show", "controller-capacity", "--part", "p4runtime-rate"]) == 0
    assert 'protocol = "p4runtime"' in capsys.readouterr().out


def test_unknown_study_and_part_are_clear_errors(capsys):
    assert main(["study", "show", "nope"]) == 2
    assert "no built-in study 'nope'; built-in studies: recirculation" in capsys.readouterr().err
    assert main(["study", "run", "nope"]) == 2
    assert main(["study", "run", "controller-capacity", "--only", "arch=x"]) == 2
    assert "--only selects runs of `sdnperf run` studies" in capsys.readouterr().err
    assert main(["study", "show", "controller-capacity", "--part", "x"]) == 2
    assert "has parts openflow-rate, openflow-switches" in capsys.readouterr().err


def test_help_exits_0(capsys):
    for argv in (["study", "--help"], ["study", "run", "--help"], ["study", "list", "--help"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0


# -- answers on synthetic stores -----------------------------------------------------------
def _run(
    store,
    sid,
    i,
    arch,
    workload,
    summaries,
    topology="one-switch",
    samples=(),
    cpu=None,
    point=None,
    params=None,
    status="ok",
):
    store.record_run(
        sid,
        RunResult(
            key=f"{topology}|{arch}|{workload}|{i}",
            topology=topology,
            architecture=arch,
            workload=workload,
            repetition=1,
            params=params or {},
            status=status,
            summaries=[Summary(workload, m, v, u, b) for m, v, u, b in summaries],
            samples=list(samples),
            cpu=cpu or CpuReport(),
            point=point or {},
        ),
    )


def test_recirculation_answer_from_its_fit(tmp_path):
    """RTT = 0.1 ms + 20 µs·N: the answer says 20 µs per pass and N ≈ 250 for 5 ms; TCP
    halves between N = 15 and N = 31; CPU is reported per N."""
    rng = np.random.default_rng(3)
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("recirculation", None, {}, {})
        i = 0
        for n in (0, 1, 3, 7, 15, 31, 63):
            arch = P4Config(kind="p4", name="p4", program="recirc", params={"recirc_passes": n})
            params = {"architecture": arch.model_dump()}
            point = {"architecture.p4.params.recirc_passes": n}
            for _rep in range(3):
                rtts = [0.1 + 0.02 * n + abs(rng.normal(0, 0.001)) for _ in range(50)]
                samples = [
                    Sample("ping", "rtt_ms", v, "ms", "h1->h2", "steady", k * 0.01, k)
                    for k, v in enumerate(rtts)
                ]
                _run(
                    store,
                    sid,
                    i,
                    "p4",
                    "ping",
                    [
                        ("rtt_ms", sum(rtts) / 50, "ms", "lower"),
                        ("rtt_min_ms", min(rtts), "ms", "lower"),
                    ],
                    samples=samples,
                    point=point,
                    params=params,
                    cpu=CpuReport(per_role={"switch": 10 + n}),
                )
                _run(
                    store,
                    sid,
                    i + 1,
                    "p4",
                    "tcp",
                    [("throughput_mbps", 1000 / (1 + n / 20), "Mbit/s", "higher")],
                    point=point,
                    params=params,
                )
                i += 2
        answer = answer_for(store, sid)
    assert answer.study == "recirculation" and answer.question.startswith("How much delay")
    text = "\n".join(answer.sentences)
    slope = float(re.search(r"adds ([\d.]+) µs of median RTT", text).group(1))
    assert 19 < slope < 21
    n = int(re.search(r"a 5 ms hold needs N ≥ (\d+)", text).group(1))
    assert 235 <= n <= 255
    assert "TCP throughput halves by N = 31" in text  # 1000 / (1 + 31/20) < 500 < at 15
    # the largest N against the smallest, each with n and CI (tests/unit/test_recirc_answers_noise.py)
    assert re.search(
        r"switch CPU during ping \(% of one core\) N = 0: 10 % \(95 % CI 10 \.\. 10, n = 3\); "
        r"N = 63: 73 % \(.*n = 3\): \+630\.0 % \(worse",
        text,
    )
    assert re.search(r"p99 RTT [\d.]+ ms at N = 0, 1.3\d* ms at N = 63", text)


def test_recirculation_answer_with_two_runs_gives_a_slope_without_a_ci(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("recirculation", None, {}, {})
        for i, n in enumerate((0, 10)):
            arch = P4Config(kind="p4", name="p4", program="recirc", params={"recirc_passes": n})
            samples = [Sample("ping", "rtt_ms", 0.1 + 0.01 * n, "ms", "h1->h2", "steady")]
            _run(
                store,
                sid,
                i,
                "p4",
                "ping",
                [("rtt_min_ms", 0.1 + 0.01 * n, "ms", "lower")],
                samples=samples,
                params={"architecture": arch.model_dump()},
            )
        text = " ".join(answer_for(store, sid).sentences)
    assert "10 µs per pass (two runs: no confidence interval)" in text


def test_campus_answer_ranks_the_architectures(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("architectures-campus", None, {}, {})
        i = 0
        for arch, first, steady, tcp, jitter in (
            ("bridge", 0.5, 0.1, 900, 0.02),
            ("openflow", 40.0, 0.2, 800, 0.05),
            ("p4", 20.0, 0.15, 950, 0.03),
        ):
            for rep in range(3):
                _run(
                    store,
                    sid,
                    i,
                    arch,
                    "ping",
                    [
                        ("rtt_first_ms", first + rep * 0.01, "ms", "lower"),
                        ("rtt_ms", steady, "ms", "lower"),
                    ],
                )
                _run(
                    store,
                    sid,
                    i + 1,
                    arch,
                    "tcp",
                    [("throughput_mbps", tcp + rep, "Mbit/s", "higher")],
                )
                _run(
                    store,
                    sid,
                    i + 2,
                    arch,
                    "udp",
                    [("jitter_ms", jitter, "ms", "lower"), ("loss_pct", 0.0, "%", "lower")],
                )
                i += 3
        text = "\n".join(answer_for(store, sid).sentences)
    assert re.search(
        r"First packet RTT \(lowest first\): bridge 0.51 ms \(95 % CI .*n = 3\); then "
        r"p4 20 ms.*; then openflow 40 ms ",
        text,
    )
    # per run's own first / steady RTT, each with its CI and n
    assert re.search(
        r"First packet RTT against the steady RTT of the same run: bridge 5\.1 × \(95 % CI "
        r"[\d.]+ \.\. [\d.]+, n = 3\), openflow 200 × \(.*n = 3\), p4 133 × \(.*n = 3\)\.",
        text,
    )
    assert re.search(
        r"TCP throughput \(best first\): p4 951 Mbit/s .*; then bridge .*; then openflow", text
    )
    assert re.search(
        r"UDP jitter \(best first\): bridge 0.02 ms .*; then p4 .*; then openflow", text
    )
    # every run measured 0 % loss: nothing to rank
    assert re.search(r"UDP loss \(best first\): bridge 0 % \(.*\) ≈ openflow 0 % \(.*\) ≈ p4", text)


def test_topologies_answer_compares_with_openflow_per_topology(tmp_path):
    """One sentence per topology; the mixed workload's members are stored as "mix/<member>"."""
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("topologies-traffic", None, {}, {})
        i = 0
        for topo in ("grid", "multi-path"):
            for arch, syn, rtt in (("openflow", 2.0, 0.4), ("p4", 1.0, 0.5)):
                for rep in range(2):
                    store.record_run(
                        sid,
                        RunResult(
                            key=f"{topo}|{arch}|mix|{rep}",
                            topology=topo,
                            architecture=arch,
                            workload="mix",
                            repetition=rep,
                            params={},
                            status="ok",
                            summaries=[
                                Summary("mix/syn", "connect_ms", syn, "ms"),
                                Summary("mix/voip", "mos", 4.0, "MOS", "higher"),
                            ],
                        ),
                    )
                    _run(
                        store, sid, i, arch, "ping", [("rtt_ms", rtt, "ms", "lower")], topology=topo
                    )
                    i += 1
        text = answer_for(store, sid).sentences
    # two repetitions that measured the same value each: a difference without noise
    sentence = (
        "ping RTT [ms] openflow 0.4 (95 % CI 0.4 .. 0.4, n = 2), p4 0.5 (95 % CI 0.5 .. 0.5, "
        "n = 2): +25.0 % (worse; 95 % CI +25 .. +25 %; no spread in either group); mixed: SYN "
        "delay [ms] openflow 2 (95 % CI 2 .. 2, n = 2), p4 1 (95 % CI 1 .. 1, n = 2): -50.0 % "
        "(better; 95 % CI -50 .. -50 %; no spread in either group); mixed: VoIP MOS [MOS] "
        "openflow 4 (95 % CI 4 .. 4, n = 2), p4 4 (95 % CI 4 .. 4, n = 2): indistinguishable "
        "(Δ ±0 %, 95 % CI +0 .. +0 %, no spread in either group; no difference to detect)."
    )
    assert text == [f"grid: {sentence}", f"multi-path: {sentence}"]


def test_capacity_answer_finds_the_full_rate_and_the_most_answered(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("controller-capacity-openflow-rate", None, {}, {})
        for i, (offered, answered) in enumerate(((500, 500), (2000, 1995), (8000, 3000))):
            _run(
                store,
                sid,
                i,
                "osken-l2-learning",
                "ctlbench",
                [
                    ("ctl_offered_pps", offered, "1/s", "higher"),
                    ("ctl_answered_pps", answered, "1/s", "higher"),
                    ("ctl_rtt_p50_ms", 0.2 * (i + 1) ** 3, "ms", "lower"),
                    ("ctl_rtt_p99_ms", 1.0 * (i + 1) ** 3, "ms", "lower"),
                    ("ctl_controller_cpu_pct", 30 * (i + 1), "%", "lower"),
                ],
                params={"switches": 1, "rate_per_switch": offered, "protocol": "openflow13"},
            )
        _run(
            store,
            sid,
            9,
            "echo (probe ceiling)",
            "ctlbench",
            [("ctl_answered_pps", 90000, "1/s", "higher")],
            params={"ceiling": True, "switches": 1},
        )
        text = "\n".join(answer_for(store, sid).sentences)
    assert answer_for.__module__  # the stored name "…-openflow-rate" maps to the study
    assert (
        "osken-l2-learning (openflow13): answered ≥ 99 % of packet-ins up to 2,000/s offered; "
        "the most it answered was 3000 packet-ins/s (n = 1) (1 switch(es) × 8000/s, 38 % of "
        "offered)"
    ) in text
    assert "With n = 1 per load these are single measurements: run at least 3" in text
    assert "median reaction time 0.2 ms at 500/s offered, 5.4 ms (p99 27 ms) at 8,000/s" in text
    assert "controller CPU 90 % of one core there" in text
    assert "echo" not in text


def test_capacity_answer_gives_the_stage_breakdown(tmp_path):
    from sdnperf.ctlbench.convert import controller_stages, stage_summaries

    state = {
        "stages": {
            "packets": 500,
            "mean_us": {"receive": 10.0, "decode": 5.0, "app": 20.0, "encode": 2.0, "send": 13.0},
        }
    }
    assert controller_stages({"stages": {"packets": 0}}) is None and controller_stages(None) is None
    summaries = stage_summaries("rate-1000pps", controller_stages(state))
    assert [(s.metric, s.value, s.unit) for s in summaries][2] == ("ctl_stage_app_us", 20.0, "µs")
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("controller-capacity-p4runtime-rate", None, {}, {})
        _run(
            store,
            sid,
            0,
            "p4rt-l2-learning",
            "rate-1000pps",
            [
                ("ctl_offered_pps", 1000, "1/s", "higher"),
                ("ctl_answered_pps", 1000, "1/s", "higher"),
                *[(s.metric, s.value, s.unit, "lower") for s in summaries],
            ],
            params={"switches": 1, "rate_per_switch": 1000, "protocol": "p4runtime"},
        )
        text = answer_for(store, sid).sentences
    assert text[1] == (
        "p4rt-l2-learning: stage breakdown at 1,000/s offered (mean per packet-in): "
        "receive 10 µs, decode 5 µs, app 20 µs, encode 2 µs, send 13 µs; 50 µs in "
        "all, at most 20,000 packet-ins/s on one core; the largest stage is app (40 %)"
    )


def test_complexity_answer_ranks_chains_and_prices_the_pipeline(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("workload-complexity", None, {}, {})
        i = 0
        for arch, rtt, tcp in (
            ("kernel-l2", 0.05, 900),
            ("p4-l2", 0.10, 800),
            ("p4-pipeline8", 0.15, 600),
        ):
            for size in (18, 1472):
                _run(
                    store,
                    sid,
                    i,
                    arch,
                    "ping",
                    [("rtt_ms", rtt + size / 1e4, "ms", "lower")],
                    point={"workload.ping.size": size},
                )
                _run(
                    store,
                    sid,
                    i + 1,
                    arch,
                    "udp",
                    [("jitter_ms", rtt / 10, "ms", "lower")],
                    point={"workload.udp.length": size},
                )
                i += 2
            for window, scale in (("5K", 0.1), ("10M", 1.0)):
                _run(
                    store,
                    sid,
                    i,
                    arch,
                    "tcp",
                    [("throughput_mbps", tcp * scale, "Mbit/s", "higher")],
                    point={"workload.tcp.window": window},
                )
                i += 1
        text = answer_for(store, sid).sentences
    # one run per chain and size: nothing is ranked, and the answer says how many would do
    assert text[0] == (
        "ping RTT with 64-byte frames (best first): kernel-l2 0.0518 ms (n = 1) ≈ "
        "p4-l2 0.102 ms (n = 1) ≈ p4-pipeline8 0.152 ms (n = 1)."
    )
    assert text[1].startswith("ping RTT with 1518-byte frames (best first): kernel-l2 0.197 ms")
    assert (
        "TCP throughput with a 5K window (best first): kernel-l2 90 Mbit/s (n = 1) ≈ p4-l2 80"
        in text[4]
    )
    assert "TCP throughput with a 10M window (best first): kernel-l2 900 Mbit/s" in text[5]
    assert text[6] == (
        "Against P4 L2 bridging (largest frame / window): p4-pipeline8 RTT indistinguishable "
        "at n = 1 (Δ +20.2 %, no spread to test; needs at least 3 repetitions each); "
        "p4-pipeline8 TCP indistinguishable at n = 1 (Δ -25.0 %, no spread to test; needs at "
        "least 3 repetitions each)."
    )  # 0.2972 / 0.2472
    assert text[-1] == (
        "With n = 1 per architecture nothing here can be ranked: run at least 3 repetitions "
        "(study.repetitions)."
    )


def test_complexity_answer_prices_each_platforms_chains_against_its_own_l2(tmp_path):
    """OVS and kernel chains are compared with their own platform's L2 bridging, and the
    live-video stream's one-way delay is ranked by frame size like ping and UDP."""
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("workload-complexity", None, {}, {})
        owd = {"kernel-l2": 0.02, "kernel-ipv4": 0.03, "ovs-l2": 0.04, "ovs-pipeline8": 0.05}
        for i, (arch, size) in enumerate((a, s) for a in owd for s in (64, 1472)):
            metric = [("owd_ms", owd[arch] * (1 + size / 1472), "ms", "lower")]
            _run(store, sid, i, arch, "owd", metric, point={"workload.owd.packet_size": size})
        text = answer_for(store, sid).sentences
    assert text[0] == (
        "UDP one-way delay with 110-byte frames (best first): kernel-l2 0.0209 ms (n = 1) ≈ "
        "kernel-ipv4 0.0313 ms (n = 1) ≈ ovs-l2 0.0417 ms (n = 1) ≈ ovs-pipeline8 0.0522 ms "
        "(n = 1)."
    )
    assert text[2].startswith(
        "Against OVS L2 bridging (largest frame / window): ovs-pipeline8 one-way delay "
        "indistinguishable at n = 1 (Δ +25.0 %"
    )
    assert text[3].startswith(
        "Against kernel L2 bridging (largest frame / window): kernel-ipv4 one-way delay "
        "indistinguishable at n = 1 (Δ +50.0 %"
    )


def test_other_studies_have_no_answer(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("my-study", None, {}, {})
        assert answer_for(store, sid) is None


def test_report_opens_with_the_question_and_the_answer(tmp_path, capsys):
    from sdnperf.reporting import print_report

    with Store(tmp_path / "s.sqlite") as store:
        sid = store.open_study("architectures-campus", None, {}, {})
        for i, arch in enumerate(("bridge", "p4")):
            _run(store, sid, i, arch, "ping", [("rtt_first_ms", 1.0 + i, "ms", "lower")])
        print_report(store, sid, tmp_path, html=True)
    out = capsys.readouterr().out
    question = builtin.find("architectures-campus").question
    assert (
        f"\n{question}\n  - First packet RTT (lowest first): bridge 1 ms (n = 1) ≈ p4 2 ms" in out
    )
    html = (tmp_path / "report.html").read_text()
    assert html.index("<h2>Question</h2>") < html.index("<h2>Comparison</h2>")
    assert (
        "<li>First packet RTT (lowest first): bridge 1 ms (n = 1) ≈ p4 2 ms (n = 1).</li>" in html
    )


def test_study_run_leaves_out_what_this_machine_cannot_run(monkeypatch, capsys):
    """BMv2 runs go where simple_switch_grpc is found, on every topology of the study (each
    BMv2 switch gets its own Thrift port); the rest of the plan is kept, with the reason
    printed."""
    from sdnperf import tools
    from sdnperf.studies.study_cli import machine_rule, narrow
    from sdnperf.study.loader import load_study
    from sdnperf.study.plan import plan_runs

    monkeypatch.setattr(tools, "locate", lambda name: f"/bin/{name}")  # our switch "built"
    monkeypatch.setattr(tools, "find_bmv2", lambda name, reference=False: f"/bin/{name}")
    plan = plan_runs(load_study(builtin.find("recirculation").files("quick")[0]))
    bmv2 = [r for r in plan if r.architecture.target == "bmv2"]
    assert bmv2 and len(bmv2) < len(plan)

    monkeypatch.setattr(tools, "find_bmv2", lambda name, reference=False: None)
    keep, why = machine_rule()
    kept, selection = narrow(plan, None, keep, why)
    assert [r for r in kept if r.architecture.target == "bmv2"] == []
    assert len(kept) == len(plan) - len(bmv2) and not selection.matches(bmv2[0])
    assert "needs simple_switch_grpc on PATH" in capsys.readouterr().out

    monkeypatch.setattr(tools, "find_bmv2", lambda name, reference=False: f"/bin/{name}")
    keep, why = machine_rule()
    kept, _ = narrow(plan, None, keep, why)
    assert {r.topology for r in kept if r.architecture.target == "bmv2"} == {
        "one-switch",
        "chain-of-two",
    }
    assert len(kept) == len(plan)


def test_study_run_recirculation_says_how_the_measured_answer_is_got(monkeypatch, capsys, tmp_path):
    """`study run recirculation` runs the thesis's sweep of small N; it then names the
    commands that measure the N of a target delay (pilot, bracketing study, closed loop)."""
    from sdnperf.studies import study_cli

    monkeypatch.setattr(study_cli, "_run_file", lambda s, path, args: 0)
    out = tmp_path / "res"
    assert main(["study", "run", "recirculation", "--scale", "smoke", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"sdnperf recirc study --target-delay 5ms --scale smoke --out {out}" in text
    assert f"sdnperf recirc plan --target-delay 5ms --from {out}/recirculation --verify" in text
    main(["study", "run", "architectures-campus", "--scale", "smoke", "--out", str(out)])
    assert "recirc study" not in capsys.readouterr().out
