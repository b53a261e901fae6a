"""A synthetic study shared by the store and report tests (imported as a module).

Three architectures × two workloads × three repetitions on "campus", with:
  * ping: per flow one "cold" first packet and a steady series, summaries rtt_ms and
    rtt_first_ms; openflow is clearly slower than the bridge baseline;
  * tcp: a 1-s throughput time series per flow, summaries throughput_mbps (higher is
    better; openflow clearly faster here, so both verdicts appear) and bytes;
  * one failed run (openflow|tcp|2) and one CPU-bound run (openflow|ping|1).
"""

from __future__ import annotations

import random
from pathlib import Path

from sdnperf.samples import CpuReport, RunResult, Sample, Summary
from sdnperf.store import Store

ARCHS = {"bridge": 1.0, "ovs": 1.2, "openflow": 3.0}  # RTT scale per architecture
THROUGHPUT = {"bridge": 900.0, "ovs": 905.0, "openflow": 950.0}
FLOWS = ["h1->h28", "h5->h20"]
REPS = 3
FAILED_KEY = "campus|openflow|tcp|2"
CPU_BOUND_KEY = "campus|openflow|ping|1"
CPU_REASON = "whole machine 97% busy for 3 s (2 cores)"


def ping_run(arch: str, rep: int, rnd: random.Random) -> RunResult:
    scale = ARCHS[arch]
    samples, steady, cold = [], [], []
    for flow in FLOWS:
        first = 5.0 * scale + rnd.uniform(0, 0.5)
        cold.append(first)
        samples.append(Sample("ping", "rtt_ms", first, "ms", flow, "cold", 0.0, 1))
        for i in range(10):
            v = 0.1 * scale + rnd.uniform(0, 0.01)
            steady.append(v)
            samples.append(Sample("ping", "rtt_ms", v, "ms", flow, "steady", 0.2 * (i + 1), i + 2))
    key = f"campus|{arch}|ping|{rep}"
    bound = key == CPU_BOUND_KEY
    return RunResult(
        key=key,
        topology="campus",
        architecture=arch,
        workload="ping",
        repetition=rep,
        params={"count": 10},
        status="ok",
        started=1000.0 + rep,
        finished=1010.0 + rep,
        samples=samples,
        summaries=[
            Summary("ping", "rtt_first_ms", sum(cold) / len(cold), "ms", "lower"),
            Summary("ping", "rtt_ms", sum(steady) / len(steady), "ms", "lower"),
        ],
        cpu=CpuReport(
            per_role={"ovs-vswitchd": 10.0 * scale, "controller": 5.0 * scale},
            per_core=[40.0, 45.0],
            peak_total=97.0 if bound else 50.0,
            cpu_bound=bound,
            reason=CPU_REASON if bound else "",
        ),
    )


def tcp_run(arch: str, rep: int, rnd: random.Random) -> RunResult:
    key = f"campus|{arch}|tcp|{rep}"
    if key == FAILED_KEY:
        return RunResult(
            key=key,
            topology="campus",
            architecture=arch,
            workload="tcp",
            repetition=rep,
            params={"duration": 5},
            status="failed",
            error="iperf3: error - unable to connect to server",
            started=2000.0,
            finished=2001.0,
        )
    samples, per_flow = [], []
    for flow in FLOWS:
        series = [THROUGHPUT[arch] / 2 + rnd.uniform(-5, 5) for _ in range(5)]
        per_flow.append(sum(series) / len(series))
        for i, v in enumerate(series):
            samples.append(Sample("tcp", "throughput_mbps", v, "Mbit/s", flow, "", float(i + 1), i))
    total = sum(per_flow)
    return RunResult(
        key=key,
        topology="campus",
        architecture=arch,
        workload="tcp",
        repetition=rep,
        params={"duration": 5},
        status="ok",
        started=2000.0 + rep,
        finished=2006.0 + rep,
        samples=samples,
        summaries=[
            Summary("tcp", "throughput_mbps", total, "Mbit/s", "higher"),
            Summary("tcp", "bytes", total * 1e6 / 8 * 5, "B", "higher"),
        ],
        cpu=CpuReport(
            per_role={"ovs-vswitchd": 60.0, "iperf3": 30.0}, per_core=[70, 60], peak_total=70.0
        ),
    )


def all_results(seed: int = 7) -> list[RunResult]:
    rnd = random.Random(seed)
    out = []
    for rep in range(REPS):
        for arch in ARCHS:
            out.append(ping_run(arch, rep, rnd))
            out.append(tcp_run(arch, rep, rnd))
    return out


def build_study(path: Path) -> tuple[Store, int]:
    """A store at `path` holding the synthetic study; returns (store, study_id)."""
    store = Store(path)
    sid = store.open_study(
        "synthetic",
        "examples/synthetic.toml",
        {
            "study": {"name": "synthetic", "repetitions": REPS, "baseline": "bridge"},
            "topology": {"kind": "campus"},
        },
        {
            "kernel": "6.1.0-test",
            "datapath": "netdev",
            "netem": False,
            "tools": {"iperf3": "3.12", "ovs-vswitchd": "3.1.0"},
        },
    )
    for result in all_results():
        store.record_run(sid, result)
    return store, sid


def test_synthetic_study_has_what_the_other_tests_rely_on(tmp_path):
    store, sid = build_study(tmp_path / "s.db")
    runs = store.runs(sid)
    assert len(runs) == len(ARCHS) * 2 * REPS
    assert [r.key for r in runs if r.status == "failed"] == [FAILED_KEY]
    assert [r.key for r in runs if r.cpu_bound] == [CPU_BOUND_KEY]
    store.close()
