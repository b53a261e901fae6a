"""Where a study's time goes, phase by phase per run, without changing sdnperf: wraps the
runner's steps (architecture prepare/network_started/wait_ready/stop, Mininet build/start/
stop, the workload, the pace probe, the report) with timers and writes them as JSON.

    /work/tools/nsrun .venv/bin/python bench/study_phases/profile.py OUT.json -- run --out DIR
    .venv/bin/python bench/study_phases/profile.py --table OUT.json

(Issue 27's "whole study <= 180 s": README.md has the before/after table.)"""

from __future__ import annotations

import collections
import functools
import json
import statistics
import sys
import time

PHASES = [
    "RUN_TOTAL", "prepare", "mn_build", "mn_start", "network_started", "wait_ready",
    "workload", "pace_probe", "control_stats", "before_stop", "net_stop_total", "arch_stop",
]  # fmt: skip


def table(path: str) -> None:
    data = json.load(open(path))
    by_arch: dict[str, list[dict]] = collections.defaultdict(list)
    for row in data["rows"]:
        by_arch[row["arch"]].append(row)
    print(f"total {data['total_s']:.1f} s, report {data['report_s'] or 0:.1f} s")
    print("phase (s/run)".ljust(18) + "".join(a.rjust(10) for a in by_arch))
    for phase in PHASES:
        means = (statistics.mean(r.get(phase, 0.0) for r in rows) for rows in by_arch.values())
        print(phase.ljust(18) + "".join(f"{m:10.2f}" for m in means))


def profile(out_path: str, argv: list[str]) -> int:
    t_start = time.monotonic()
    import mininet.net

    import sdnperf.cli as cli
    import sdnperf.emulation.network as network
    import sdnperf.runner as runner
    import sdnperf.workloads.base as workloads
    from sdnperf.arch import bridge, ovs, p4

    phase: dict[str, float] = collections.defaultdict(float)
    rows: list[dict] = []
    report: dict[str, float] = {}

    active: set[str] = set()

    def timed(owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            if label in active:  # an override calling its parent: counted once
                return original(*args, **kwargs)
            active.add(label)
            t = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                active.discard(label)
                phase[label] += time.monotonic() - t

        setattr(owner, name, wrapper)

    steps = ("prepare", "network_started", "wait_ready", "control_stats")
    classes = [bridge.BridgeArchitecture, ovs.OpenflowArchitecture, p4.P4Architecture]
    try:  # every architecture of a branch that lists them (workload-complexity has 6 kinds)
        import importlib

        from sdnperf.arch import ARCHITECTURE_MODULES

        classes = [
            getattr(importlib.import_module(module), name)
            for module, name in ARCHITECTURE_MODULES.values()
        ]
    except ImportError:
        pass
    for cls in classes:
        for step in steps:
            timed(cls, step, step)
        timed(cls, "before_network_stop", "before_stop")
        timed(cls, "stop", "arch_stop")
    timed(mininet.net.Mininet, "build", "mn_build")
    timed(mininet.net.Mininet, "start", "mn_start")
    try:  # a branch whose networks are ParallelMininet's (it overrides start)
        from sdnperf.emulation.parallel_build import ParallelMininet

        timed(ParallelMininet, "start", "mn_start")
    except ImportError:
        pass
    timed(network.Network, "stop", "net_stop_total")
    timed(workloads, "run_workload", "workload")
    timed(runner, "_probe_switch_pace", "pace_probe")
    planned = runner.run_planned

    def run_planned(study, run, run_dir, results_dir, log):
        phase.clear()
        t = time.monotonic()
        result = planned(study, run, run_dir, results_dir, log)
        phase["RUN_TOTAL"] = time.monotonic() - t
        rows.append({"arch": run.architecture.name, "workload": run.workload.name, **phase})
        return result

    runner.run_planned = run_planned
    print_report = cli.print_report

    def timed_report(*args, **kwargs):
        t = time.monotonic()
        try:
            return print_report(*args, **kwargs)
        finally:
            report["s"] = time.monotonic() - t

    cli.print_report = timed_report
    try:
        return cli.main(argv)
    finally:
        total = time.monotonic() - t_start
        with open(out_path, "w") as f:
            json.dump({"total_s": total, "report_s": report.get("s"), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--table"]:
        table(sys.argv[2])
    else:
        sys.exit(profile(sys.argv[1], sys.argv[3:]))
