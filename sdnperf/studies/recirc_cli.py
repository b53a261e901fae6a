"""`sdnperf recirc plan --target-delay 5ms --from results/DIR`: the passes a recirculation
study says are needed for a target delay.

Reads a study's store (read only): every ok run of a p4 architecture running recirc.p4
gives one point (its recirc_passes, the run's RTT summary); the points of each topology,
workload and target (our switch, BMv2) are fitted apart (recirc_plan.py).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from sdnperf.commands import EXIT_BAD_INPUT, EXIT_OK, usage
from sdnperf.studies.recirc_plan import PlanError, fit_linear, parse_delay_ms, passes_for

METRICS = ("rtt_ms", "rtt_min_ms")


def add_parser(sub) -> None:
    recirc = sub.add_parser("recirc", help="delay control by recirculation (recirc.p4)")
    recirc.set_defaults(func=usage(recirc))
    recirc_sub = recirc.add_subparsers(metavar="ACTION")
    p = recirc_sub.add_parser(
        "plan",
        help="passes needed for a target delay, from a study's fit",
        description="Fit RTT = a + b·N over the runs of a study that ran recirc.p4 with "
        "several recirc_passes (N), and print the N needed for a target delay "
        "with its interval from the 95 % confidence intervals of a and b.",
    )
    p.add_argument(
        "--target-delay",
        required=True,
        help="delay to reach, e.g. 5ms, 250us (the delay recirculation adds; "
        "with --total the whole RTT)",
    )
    p.add_argument(
        "--from",
        dest="results",
        required=True,
        help="results folder of the study (or its study.sqlite)",
    )
    p.add_argument(
        "--metric",
        choices=METRICS,
        default="rtt_ms",
        help="the RTT summary of each run to fit: mean (rtt_ms, default) or minimum",
    )
    p.add_argument(
        "--total",
        action="store_true",
        help="the target is the total RTT (a + b·N), not the added delay (b·N)",
    )
    p.add_argument(
        "--architecture",
        action="append",
        help="only these architectures (repeatable; default: every recirc.p4 one)",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="of the intervals (0.95)")
    p.set_defaults(func=cmd_plan)


def points(runs, summaries, metric: str, architectures=None) -> dict[str, list[tuple[int, float]]]:
    """(recirc_passes, metric value) of every ok recirc.p4 run, by "topology, workload,
    target" (a curve each: our switch and BMv2 are not one line)."""
    value = {(s.run_id, s.metric): s.value for s in summaries}
    out: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for run in runs:
        arch = run.params.get("architecture", {})
        if (
            run.status != "ok"
            or arch.get("kind") != "p4"
            or arch.get("program") != "recirc"
            or (architectures and run.architecture not in architectures)
        ):
            continue
        v = value.get((run.id, metric))
        if v is not None and v == v:  # NaN: no reply came back
            curve = f"{run.topology}, {run.workload}, target {arch.get('target', 'sdnperf')}"
            out[curve].append((int(arch["params"]["recirc_passes"]), v))
    return dict(out)


def cmd_plan(args) -> int:
    from sdnperf.store.sqlite import Store

    try:
        target = parse_delay_ms(args.target_delay)
    except PlanError as exc:
        return _error(f"--target-delay: {exc}")
    path = Path(args.results)
    db_path = path if path.suffix == ".sqlite" else path / "study.sqlite"
    if not db_path.exists():
        return _error(
            f"{db_path}: no study database here (give the results folder of a "
            "study, e.g. results/recirculation)"
        )
    store = Store(db_path)
    try:
        studies = store.studies()
        if not studies:
            return _error(f"{db_path}: holds no study")
        study = studies[-1]
        found = points(
            store.runs(study.id), store.summaries(study.id), args.metric, args.architecture
        )
    finally:
        store.close()
    if not found:
        return _error(
            f"{db_path}: study {study.name!r} has no finished run of a p4 "
            'architecture with program = "recirc" and a ping workload '
            f"({args.metric}); run a study that sweeps its recirc_passes first"
        )
    status = EXIT_OK
    for curve, pts in sorted(found.items()):
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        print(
            f"{study.name}: {curve}: {len(pts)} runs, recirc_passes {sorted(set(xs))}, "
            f"{args.metric}"
        )
        try:
            plan = passes_for(fit_linear(xs, ys, args.confidence), target, added=not args.total)
        except PlanError as exc:
            print(f"error: {curve}: {exc}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        print(f"  {plan.sentence('ms')}")
    return status


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
