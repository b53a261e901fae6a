"""`sdnperf recirc study` and `sdnperf recirc plan`: how many recirculation passes hold a
packet back by a target delay, answered by measurement.

    sdnperf recirc study --target-delay 5ms --scale quick --out results
        a pilot (cost per pass of each switch), then a study whose N values reach past the
        target on every topology (recirc_design.py, recirc_plan.bracket_passes)
    sdnperf recirc plan --target-delay 5ms --from results/recirculation [--verify] [--json]
        reads N per topology, switch and link rate between the measured N that enclose the
        target (else refused), and with --verify runs a closed loop: the planned N, the
        hold-by-time program and N = 0, then N corrected from the delays measured until
        within --tolerance (at most --rounds), every round reported; then the TCP/UDP cost

Stores are read only; each verification is a study of its own beside the one planned from.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from sdnperf.commands import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, usage
from sdnperf.p4.catalog import MAX_RECIRC_PASSES
from sdnperf.studies import recirc_design as design
from sdnperf.studies.answers.recirculation import cost_sentences, verified
from sdnperf.studies.recirc_plan import (
    PILOT_MAX_PASSES,
    Interpolation,
    Plan,
    PlanError,
    Speeds,
    bracket_passes,
    check_reachable,
    cost_per_pass,
    fit_linear,
    interpolate_passes,
    next_passes,
    parse_delay_ms,
    passes_for,
    pilot_next_passes,
    step_between,
)
from sdnperf.study.loader import StudyError

# the RTT summary of each run that is fitted: the median of its steady pings (default: a
# busy machine's scheduling outliers move a run's mean by many ms), the mean, the minimum
METRICS = ("rtt_median_ms", "rtt_ms", "rtt_min_ms")
STATISTIC = {"rtt_median_ms": "median", "rtt_ms": "mean", "rtt_min_ms": "min"}
INTERPOLATED = {"rtt_median_ms": "median", "rtt_ms": "mean"}  # over each N's pings
DESIGN_FILE = "recirc-design.json"  # what `recirc study` planned, beside its store
CPU_PRIORITIES = ("normal", "high", "realtime")  # a p4 architecture's cpu_priority


def add_parser(sub) -> None:
    recirc = sub.add_parser("recirc", help="delay control by recirculation (recirc.p4)")
    recirc.set_defaults(func=usage(recirc))
    recirc_sub = recirc.add_subparsers(metavar="ACTION")
    s = recirc_sub.add_parser(
        "study",
        help="pilot, then a study whose N values bracket the target delays",
        description="Run the built-in recirculation study's pilot (a few pings at a few N "
        "on each switch and topology: the delay one pass adds; then, per switch and "
        "topology, N doubled until the added delay measured passes the largest target, at "
        "most --pilot-max-passes), then the study proper at N values, 0 and geometric, that "
        "reach from below the smallest target to the N the pilot measured past the largest, "
        "on every topology, so `recirc plan` interpolates.",
    )
    s.add_argument(
        "--target-delay",
        action="append",
        required=True,
        help="delay to bracket (repeatable), e.g. 5ms, 250us: the delay recirculation adds",
    )
    s.add_argument("--scale", choices=("smoke", "quick", "paper"), default="quick")
    s.add_argument(
        "--file",
        help="a study file to design from instead of the built-in one of --scale (its "
        "topologies, recirc.p4 architectures and workloads; its recirc_passes sweeps are "
        "replaced)",
    )
    s.add_argument(
        "--ratio",
        type=float,
        default=2.0,
        help="each N this many times the one before (default 2; larger: fewer runs for "
        "targets far apart)",
    )
    s.add_argument(
        "--pilot-max-passes",
        type=int,
        default=PILOT_MAX_PASSES,
        help="the pilot doubles N per switch and topology until the added delay passes "
        f"the largest target; it refuses past this N (default {PILOT_MAX_PASSES})",
    )
    s.add_argument(
        "--cpu-priority",
        choices=CPU_PRIORITIES,
        default=None,
        help="scheduling of the switch processes in the pilot and the study (the p4 "
        "architecture's cpu_priority, over the study file's): normal, high (nice -10) or "
        "realtime (SCHED_RR priority 1, bounded by the kernel's real-time throttle); "
        "default: the study file's. Each run records it in its facts; `recirc plan "
        "--verify` then runs the same unless its own --cpu-priority says otherwise",
    )
    s.add_argument("--out", default="results", help="results root (default: results)")
    s.set_defaults(func=cmd_study)

    p = recirc_sub.add_parser(
        "plan",
        help="passes needed for a target delay, from a study's fit",
        description="Fit RTT = a + b·N over the runs of a study that ran recirc.p4 with "
        "several recirc_passes (N), and print the N needed for a target delay "
        "with its interval from the 95 % confidence intervals of a and b. "
        "A target outside the N measured is refused (an extrapolation) unless "
        "--extrapolate; --verify runs the planned N and reports the delay achieved.",
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
        default="rtt_median_ms",
        help="the RTT summary of each run to fit: median of its steady pings "
        "(rtt_median_ms, default), mean (rtt_ms) or minimum (rtt_min_ms); --verify "
        "reports its error with the same statistic",
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
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="answer even when the N found lies beyond the N measured",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="run the planned N (and the hold-by-time program, and N = 0) on the same "
        "topology and switch, with the scale's TCP and UDP workloads, and report the "
        "delay achieved (mean, min, p99 with CIs), its error and its cost",
    )
    p.add_argument(
        "--scale",
        choices=("smoke", "quick", "paper"),
        help="workloads of the verifying runs (default: the scale `recirc study` used, else quick)",
    )
    p.add_argument(
        "--file",
        help="a study file whose workloads (ping, TCP, UDP) the verifying runs take, "
        "e.g. a copy of the scale's file with the thesis's UDP rate (default: --scale's)",
    )
    p.add_argument(
        "--delay-only",
        action="store_true",
        help="verify with ping only (no TCP/UDP runs: no cost figures)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="--verify's closed loop: at most this many verifying runs of N, each N after "
        "the first corrected from the delays the earlier ones achieved (secant steps); "
        "1: verify the planned N only (default 4)",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=10.0,
        help="--verify stops correcting N once the delay achieved is within this many "
        "percent of the target (default 10)",
    )
    p.add_argument(
        "--cpu-priority",
        choices=CPU_PRIORITIES,
        default=None,
        help="scheduling of the switch processes in the verifying runs (the p4 "
        "architecture's cpu_priority): normal, high (nice -10) or realtime (SCHED_RR "
        "priority 1, bounded by the kernel's real-time throttle); default: the study "
        "file's (normal). The answer names a setting other than normal",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per curve")
    p.set_defaults(func=cmd_plan)


# -- reading a store --


def _curve_key(run) -> tuple[str, str, str, str]:
    """(topology, workload, target, other swept conditions, e.g. the link rate)."""
    arch = run.params.get("architecture", {})
    others = ",".join(
        f"{p.rsplit('.', 1)[-1]}={v}"
        for p, v in sorted(run.point.items())
        if not p.endswith(design.PASSES) and not p.startswith("workload.")
    )
    return run.topology, run.workload, arch.get("target", "sdnperf"), others


def _label(key) -> str:
    topology, workload, target, others = key
    return f"{topology}, {workload}, target {target}" + (f", {others}" if others else "")


def run_values(store, study_id: int) -> dict[tuple[int, str], float]:
    """(run id, metric) -> value: the stored summaries and each run's rtt_median_ms (the
    median of its steady ping RTTs)."""
    value = {(s.run_id, s.metric): s.value for s in store.summaries(study_id)}
    rtts = defaultdict(list)
    for s in store.samples(study_id=study_id, metric="rtt_ms", phase="steady"):
        if s.value == s.value:
            rtts[s.run_id].append(s.value)
    for run_id, v in rtts.items():
        value[run_id, "rtt_median_ms"] = statistics.median(v)
    return value


def ping_delays(store, study_id: int, runs, architectures=None) -> dict[tuple, dict[int, list]]:
    """Every steady ping RTT of the ok recirc.p4 runs, by curve and N (repetitions pooled)."""
    keep = {
        r.id: r
        for r in runs
        if r.status == "ok"
        and r.params.get("architecture", {}).get("program") == "recirc"
        and not (architectures and r.architecture not in architectures)
    }
    out: dict[tuple, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for s in store.samples(study_id=study_id, metric="rtt_ms", phase="steady"):
        r = keep.get(s.run_id)
        if r is not None and s.value == s.value:
            n = int(r.params["architecture"]["params"][design.PASSES])
            out[_curve_key(r)][n].append(s.value)
    return out


def points(runs, value, metric: str, architectures=None) -> dict[tuple, list[tuple[int, float]]]:
    """(recirc_passes, metric value) of every ok recirc.p4 run, by curve (_curve_key: our
    switch and BMv2, each topology and link rate, are lines of their own). `value`:
    run_values()."""
    out: dict[tuple, list[tuple[int, float]]] = defaultdict(list)
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
            out[_curve_key(run)].append((int(arch["params"][design.PASSES]), v))
    return dict(out)


def _open(path: Path):
    """(store, study row) of a results folder or .sqlite; PlanError saying what is missing."""
    from sdnperf.store.sqlite import Store  # lazy: pulls in sqlite3, wanted only here

    db_path = path if path.suffix == ".sqlite" else path / "study.sqlite"
    if not db_path.exists():
        raise PlanError(
            f"{db_path}: no study database here (give the results folder of a "
            "study, e.g. results/recirculation)"
        )
    store = Store(db_path)
    studies = store.studies()
    if not studies:
        store.close()
        raise PlanError(f"{db_path}: holds no study")
    return store, studies[-1]


# -- recirc study --


def cmd_study(args) -> int:

    try:
        targets = [parse_delay_ms(t) for t in args.target_delay]
    except PlanError as exc:
        return _error(f"--target-delay: {exc}")
    try:
        doc = (
            design.load_template_file(Path(args.file))
            if args.file
            else design.load_template(args.scale)
        )
    except (OSError, ValueError, StudyError) as exc:
        return _error(f"{args.file or args.scale}: {exc}")
    doc = design.with_cpu_priority(doc, args.cpu_priority)
    out = Path(args.out)
    name = doc["study"]["name"]
    try:
        found = _pilot(args, doc, out, max(targets))
    except PlanError as exc:
        return _error(str(exc))
    if isinstance(found, int):
        return found  # the pilot's run stopped (its exit status)
    if not found:
        return _error("the pilot finished no run: nothing to design from")
    archs = {design.target_of(a): a["name"] for a in design.recirc_architectures(doc)}
    # the cost per pass of each curve at its last (largest) N; the N it passed the target at
    measured: dict[str, dict[str, float]] = defaultdict(dict)
    reach: dict[str, int] = defaultdict(int)
    for (target, topology), tried in found.items():
        n, added = tried[-1]
        measured[archs[target]][topology] = added / n
        reach[archs[target]] = max(reach[archs[target]], n)
        print(f"pilot: {topology}, target {target}: N = {n} added {added:.3g} ms (past the target)")
    try:
        values = {
            n: bracket_passes(c, targets, above=1.0, ratio=args.ratio, reach=reach[n])
            for n, c in measured.items()
        }
        longest = max(len(v) for v in values.values())
        values = {
            n: bracket_passes(
                c, targets, above=1.0, ratio=args.ratio, length=longest, reach=reach[n]
            )
            for n, c in measured.items()
        }
    except PlanError as exc:
        return _error(str(exc))
    for n, v in values.items():
        print(f"design: {n}: N = {v}")
    main = design.bracket_study(doc, values, {n: max(c.values()) for n, c in measured.items()})
    main_path = design.write(
        main,
        out / f"{name}.toml",
        "written by `sdnperf recirc study` from the pilot's cost per pass: N values that "
        "reach past the target delays " + ", ".join(args.target_delay),
    )
    print(f"== study: {main_path}", flush=True)
    status = design.run_file(main_path, out, args.command_parser)
    (out / name / DESIGN_FILE).write_text(
        json.dumps(
            {
                "scale": args.scale,
                "template": doc,
                "targets_ms": targets,
                "cost_per_pass_ms": measured,
                "passes": values,
                # every pilot round by switch and topology: [N, added delay ms], the last
                # one past the largest target
                "pilot": {f"{t} {topo}": tried for (t, topo), tried in found.items()},
                "pilot_max_passes": args.pilot_max_passes,
                "cpu_priority_override": args.cpu_priority,  # None: the file's own
            },
            indent=1,
        )
    )
    print(
        f"next: sdnperf recirc plan --target-delay {args.target_delay[0]} --from {out / name} --verify"
    )
    return status


def _pilot_round(args, study: dict, path: Path, out: Path) -> dict | int:
    """Run one pilot study; its added delays by curve ((target, topology) -> [(N, added ms)],
    N = 0's median RTT subtracted), or the run's exit status when it stopped."""
    print(f"== pilot: {path}", flush=True)
    status = design.run_file(path, out, args.command_parser)
    if status not in (EXIT_OK, EXIT_FAIL):
        return status
    store, row = _open(out / study["study"]["name"])
    try:
        found = points(store.runs(row.id), run_values(store, row.id), "rtt_median_ms")
    finally:
        store.close()
    added: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for (topology, _, target, _others), pts in sorted(found.items()):
        base = [d for n, d in pts if n == 0]
        if not base:
            continue  # N = 0 brought no ping back: nothing to subtract
        b = statistics.median(base)
        added[target, topology] = sorted((n, d - b) for n, d in pts if n > 0)
    return added


def _pilot(args, doc: dict, out: Path, largest: float) -> dict | int:
    """The pilot, a loop that cannot under-shoot: first PILOT_PASSES on every switch and
    topology (the cost per pass), then, per switch and topology, N doubled (or raised to
    what the last cost per pass says the largest target needs) until the added delay
    measured passes the largest target; bounded by --pilot-max-passes, past which it
    refuses (PlanError naming the bound). (target, topology) -> [(N, added ms)] per round."""
    name = doc["study"]["name"]
    first = design.pilot_study(doc)
    path = design.write(
        first,
        out / f"{name}-pilot.toml",
        "the pilot of `sdnperf recirc study`: the delay one pass adds on each switch",
    )
    got = _pilot_round(args, first, path, out)
    if isinstance(got, int):
        return got
    tried = dict(got)
    for (target, topology), pts in tried.items():
        try:
            cost = cost_per_pass([0] + [n for n, _ in pts], [0.0] + [d for _, d in pts])
        except PlanError as exc:
            raise PlanError(f"pilot, {topology}, target {target}: {exc}") from None
        print(f"pilot: {topology}, target {target}: {cost * 1000:.3g} µs per pass")
    archs = {design.target_of(a): a["name"] for a in design.recirc_architectures(doc)}
    for k in range(2, 64):
        wanted: dict[str, dict[str, int]] = defaultdict(dict)  # topology -> arch -> N
        for (target, topology), pts in tried.items():
            try:
                n = pilot_next_passes(pts, largest, args.pilot_max_passes)
            except PlanError as exc:
                raise PlanError(f"pilot, {topology}, target {target}: {exc}") from None
            if n is not None:
                wanted[topology][archs[target]] = n
        if not wanted:
            return tried
        for topology, by_arch in sorted(wanted.items()):
            # pings spaced past the longest hold this round may give (N x its last cost)
            hold = max(
                n * tried[t, topology][-1][1] / tried[t, topology][-1][0]
                for t, a in archs.items()
                for m, n in by_arch.items()
                if m == a and tried[t, topology][-1][0] > 0
            )
            study = design.pilot_study(
                doc,
                values={a: [0, n] for a, n in by_arch.items()},
                topology=topology,
                hold_ms=hold,
                name=f"{name}-pilot-r{k}-{topology}",
            )
            path = design.write(
                study,
                out / f"{study['study']['name']}.toml",
                f"round {k} of the pilot of `sdnperf recirc study`: N doubled until the "
                f"added delay passes {largest:g} ms",
            )
            got = _pilot_round(args, study, path, out)
            if isinstance(got, int):
                return got
            for target, a in archs.items():
                if a in by_arch and (target, topology) not in got:
                    raise PlanError(
                        f"pilot round {k}, {topology}, target {target}: no delay measured at "
                        f"N = {by_arch[a]} (no ping came back at N = 0 or N)"
                    )
            for key, pts in got.items():
                tried[key] = tried.get(key, []) + pts
                print(f"pilot round {k}: {key[1]}, target {key[0]}: N, added ms = {pts}")
    raise PlanError("the pilot did not finish in 63 rounds")


# -- recirc plan --


def cmd_plan(args) -> int:
    try:
        target = parse_delay_ms(args.target_delay)
    except PlanError as exc:
        return _error(f"--target-delay: {exc}")
    path = Path(args.results)
    try:
        store, study = _open(path)
    except PlanError as exc:
        return _error(str(exc))
    try:
        runs = store.runs(study.id)
        found = points(runs, run_values(store, study.id), args.metric, args.architecture)
        delays = ping_delays(store, study.id, runs, args.architecture)
    finally:
        store.close()
    if args.rounds < 1 or not args.tolerance > 0:
        return _error("--rounds must be at least 1 and --tolerance positive")
    if args.file:
        try:
            design.load_template_file(Path(args.file))
        except (OSError, ValueError, StudyError) as exc:
            return _error(f"--file {args.file}: {exc}")
    if not found:
        return _error(
            f"{path}: study {study.name!r} has no finished run of a p4 "
            'architecture with program = "recirc" and a ping workload '
            f"({args.metric}); run a study that sweeps its recirc_passes first"
        )

    status = EXIT_OK
    results = []
    for key, pts in sorted(found.items()):
        topology, workload, target_name, others = key
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        row: dict = {
            "target": target_name,
            "topology": topology,
            "workload": workload,
            "conditions": others,
            "metric": args.metric,
            "target_ms": target,
            "runs": len(pts),
            "measured_passes": sorted(set(xs)),
            "passes": None,
            "achieved_ms": None,
            "achieved_ci_ms": None,
        }
        results.append(row)
        if not args.json:
            print(
                f"{study.name}: {_label(key)}: {len(pts)} runs, recirc_passes {sorted(set(xs))}, {args.metric}"
            )
        # the thesis's line RTT = a + b·N over every N: the cost per pass, and the answer
        # itself only with --extrapolate (or --metric rtt_min_ms); else N is interpolated
        # between the two measured N that enclose the target
        interpolate = not args.extrapolate and args.metric in INTERPOLATED
        try:
            fitted = passes_for(fit_linear(xs, ys, args.confidence), target, added=not args.total)
            row.update(
                cost_per_pass_us=float(fitted.fit.b) * 1000,
                cost_per_pass_ci_us=[float(v) * 1000 for v in fitted.fit.b_ci],
                r2=float(fitted.fit.r2),
            )
            if not args.json:
                print(f"  line over every N: {fitted.sentence('ms')}")
        except PlanError as exc:
            fitted = None
            if not interpolate:
                row["refused"] = str(exc)
                print(f"error: {_label(key)}: {exc}", file=sys.stderr)
                status = EXIT_BAD_INPUT
                continue
        plan: Interpolation | Plan
        try:
            if interpolate:
                plan = interpolate_passes(
                    delays.get(key, {}),
                    target,
                    added=not args.total,
                    statistic=INTERPOLATED[args.metric],
                    confidence=args.confidence,
                )
                row.update(
                    method="interpolation",
                    passes=plan.passes,
                    passes_estimate=plan.estimate,
                    passes_interval=list(plan.interval),
                    between=list(plan.between),
                    bracketed=True,
                )
                if not args.json:
                    print(f"  answer: {plan.sentence('ms')}")
            else:
                assert fitted is not None
                check_reachable(fitted, MAX_RECIRC_PASSES, args.extrapolate)
                plan = fitted
                row.update(
                    method="line",
                    passes=plan.passes,
                    passes_estimate=float(plan.estimate),
                    passes_interval=list(plan.interval),
                    bracketed=bool(plan.bracketed),
                )
                if not args.json:
                    print(
                        f"  answer (the line): N = {plan.passes}"
                        + ("" if plan.bracketed else " — EXTRAPOLATED")
                    )
        except PlanError as exc:
            row["refused"] = str(exc)
            print(f"error: {_label(key)}: {exc}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        if args.verify:
            try:
                row.update(_closed_loop(args, path, study.name, key, plan))
            except (PlanError, design.DesignError) as exc:
                row["verify_error"] = str(exc)
                print(f"error: verify {_label(key)}: {exc}", file=sys.stderr)
                status = EXIT_FAIL
                continue
            if not args.json:
                for line in _verify_lines(row):
                    print(f"  {line}")
    if args.json:
        print(json.dumps(results, indent=1))
    return status


def _template_of(path: Path, given: str | None, file: str | None = None) -> dict:
    """The study file the verifying runs take their workloads from: --file, --scale's, else
    the one `recirc study` designed from (kept in its DESIGN_FILE), else quick's."""
    if file:
        return design.load_template_file(Path(file))
    made = (path if path.suffix != ".sqlite" else path.parent) / DESIGN_FILE
    if not given and made.exists():
        return json.loads(made.read_text())["template"]
    return design.load_template(given or "quick")


def _closed_loop(args, path: Path, study_name: str, key, plan) -> dict:
    """--verify: run the planned N (and, in the first round, the hold by time) beside N = 0,
    ping only; while the delay achieved misses the target by more than --tolerance, run
    the N the measured (N, delay) pairs give (recirc_plan.next_passes), at most --rounds
    times; then the TCP/UDP cost at the final N (unless --delay-only). The answer is the
    round that came closest, every round reported; `converged` says if it was close enough."""

    stat = STATISTIC[args.metric]
    suffix = "" if stat == "mean" else f"_{stat}"
    passes = plan.passes
    rounds: list[dict] = []
    hold: dict = {}
    step = None
    for k in range(args.rounds):
        got = _verify_run(args, path, study_name, key, plan.target, passes, k, "ping")
        if k == 0:
            hold = {f: v for f, v in got.items() if f.startswith("hold_")}
        load = _load_average()
        rounds.append(
            {
                "round": k + 1,
                "passes": passes,
                # the cost is the cost study's (below); a round keeps its delays
                **{f: v for f, v in got.items() if not f.startswith(("hold_", "cost"))},
                "load_average": load,
            }
        )
        if not args.json:
            print(f"  {_round_line(rounds[-1], suffix)}", flush=True)
        if got.get(f"achieved{suffix}_ms") is None:
            break  # no ping came back: nothing to correct from
        if abs(got["error_pct"]) <= args.tolerance:
            break
        origin = 0.0 if not args.total else got[f"achieved{suffix}_ms"] - got["_added"]
        tried = [
            (r["passes"], r[f"achieved{suffix}_ms"])
            for r in rounds
            if r.get(f"achieved{suffix}_ms") is not None
        ]
        # the target on a step of the curve: a further secant step would only wander
        # between the two N, so stop and say so (and whether the step is in N or in time)
        speeds = {
            r["passes"]: Speeds.from_dict(r["speeds"])
            for r in rounds
            if r.get("speeds") is not None
        }
        step = step_between(tried, plan.target, args.tolerance, origin=origin, speeds=speeds)
        if step is not None:
            break  # _verify_lines says so, with the pair
        if k + 1 == args.rounds:
            break
        passes = next_passes(tried, plan.target, MAX_RECIRC_PASSES, origin=origin)
    measured = [r for r in rounds if r.get("error_pct") is not None]
    if not measured:
        raise PlanError(f"the verifying runs of N = {passes} brought no ping back")
    best = min(measured, key=lambda r: abs(r["error_pct"]))
    out = {f: v for f, v in best.items() if f not in ("round", "load_average", "_added")}
    out.update(
        hold,
        planned_passes=plan.passes,
        rounds=[{f: v for f, v in r.items() if f != "_added"} for r in rounds],
        converged=abs(best["error_pct"]) <= args.tolerance,
        tolerance_pct=args.tolerance,
    )
    if step is not None:
        out["step"] = {
            "between": list(step.between),
            "delays_ms": list(step.delays),
            "errors_pct": list(step.errors_pct()),
            "expected_rise_ms": step.expected_rise,
            "adjacent": step.adjacent,
            "in_time": step.in_time,
            "speeds": [s.as_dict() if s is not None else None for s in step.speeds],
            "sentence": step.sentence("ms"),
        }
    out["meets_target"] = meets_target(out, plan.target, stat)
    template = _template_of(path, args.scale, args.file)
    if args.delay_only or not any(w.get("kind") != "ping" for w in template.get("workload", [])):
        # --delay-only, or a study file with no TCP/UDP workload
        out.update(cost={}, cost_vs_base={}, cost_figures={}, cost_compared={})
        return out
    # the load average (1 min) as the cost study starts and ends: its figures and N = 0's
    # beside them (`cost_vs_base`) were measured under it
    before = _load_average()
    got = _verify_run(args, path, study_name, key, plan.target, best["passes"], -1, "cost")
    out["cost"] = got["cost"]
    for f in ("cost_vs_base", "cost_figures", "cost_compared"):  # n, CI, the test vs N = 0
        out[f] = got.get(f, {})
    out["cost_study"] = got["verify_study"]
    out["cost_load_average"] = [before, _load_average()]
    return out


def meets_target(row: dict, target_ms: float, stat: str) -> dict | None:
    """The verified design that met the target within the tolerance: the N passes when the
    closed loop converged, else the hold by time (its first-round measurement) when that
    came within the tolerance; None when neither did. What a user who asks for the
    target should run, with what it achieved."""
    suffix = "" if stat == "mean" else f"_{stat}"
    tolerance = row["tolerance_pct"]
    for prefix, design_name, setting in (
        ("", "N passes", {"program": "recirc", "passes": row.get("passes")}),
        ("hold_", "hold by time", {"program": "recirc_hold", "hold_ms": target_ms}),
    ):
        err = row.get(f"{prefix}error_pct")
        if err is None or abs(err) > tolerance:
            continue
        return {
            "design": design_name,
            **setting,
            "achieved_ms": row.get(f"{prefix}achieved{suffix}_ms"),
            "achieved_ci_ms": row.get(f"{prefix}achieved{suffix}_ci_ms"),
            "error_statistic": stat,
            "error_pct": err,
            "spread_ms": row.get(f"{prefix}spread_ms"),
        }
    return None


def _load_average() -> float | None:
    import os

    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _round_line(r: dict, suffix: str) -> str:
    if r.get(f"achieved{suffix}_ms") is None:
        return f"round {r['round']}: N = {r['passes']}: no delay measured"
    lo, hi = r[f"achieved{suffix}_ci_ms"]
    return (
        f"round {r['round']}: N = {r['passes']}: {r[f'achieved{suffix}_ms']:.3f} ms "
        f"(95 % CI {lo:.3f} .. {hi:.3f}), error {r['error_pct']:+.1f} %, load average "
        f"{r['load_average']}"
    )


def _verify_run(
    args, path: Path, study_name: str, key, target_ms: float, passes: int, k: int, what: str
) -> dict:
    """Run one verifying study of one curve (round k, 0 first; -1: the cost study) and read
    what it achieved."""
    topology, _, target_name, others = key
    folder = path if path.suffix != ".sqlite" else path.parent
    doc = _template_of(path, args.scale, args.file)
    bw = dict(kv.split("=", 1) for kv in others.split(",") if kv).get("bw")
    link_bw = None if bw in (None, "unlimited") else float(bw) if "." in bw else int(bw)
    tag = re.sub(r"[^A-Za-z0-9]+", "-", f"{target_ms:g}ms-{target_name}-{topology}-{others}")
    name = f"{study_name}-verify-{tag.strip('-')}" + (
        "-cost" if k < 0 else f"-r{k + 1}" if k else ""
    )
    v = design.verify_study(
        doc,
        name,
        topology,
        target_name,
        passes,
        target_ms,
        link_bw,
        hold=k <= 0,
        workloads=what,
        cpu_priority=getattr(args, "cpu_priority", None),
    )
    out = folder.parent
    file = design.write(
        v,
        out / f"{name}.toml",
        f"written by `sdnperf recirc plan --verify`: N = {passes} for {target_ms:g} ms "
        + ("(its TCP/UDP cost)" if k < 0 else f"(round {k + 1})"),
    )
    if not args.json:
        print(f"  verify: {file}", flush=True)
    import contextlib

    # --json: stdout carries the JSON only; the run's progress goes to stderr
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        status = design.run_file(file, out, args.command_parser)
    if status == EXIT_INTERRUPTED:
        # Ctrl-C stops the whole plan, not just this verifying study (the study caught it)
        raise KeyboardInterrupt
    if status not in (EXIT_OK, EXIT_FAIL):
        raise PlanError(f"the verifying study stopped (exit {status})")
    store, study = _open(out / name)
    try:
        got = verified(
            store,
            study.id,
            target_ms,
            added=not args.total,
            confidence=args.confidence,
            statistic=STATISTIC[args.metric],
        )
        if args.total and what != "cost":
            stat = STATISTIC[args.metric]
            added = verified(store, study.id, target_ms, True, args.confidence, stat)
            got["_added"] = added[f"achieved{'' if stat == 'mean' else '_' + stat}_ms"]
        return got
    finally:
        store.close()


def _verify_lines(row: dict) -> list[str]:
    lines = []
    if "rounds" in row:
        k = len(row["rounds"])
        lines.append(
            (
                f"closed loop: N = {row['passes']} (planned {row['planned_passes']}), within "
                f"{row['tolerance_pct']:g} % of the target after {k} round{'s' if k > 1 else ''}"
            )
            if row["converged"]
            else (
                f"closed loop: not within {row['tolerance_pct']:g} % of the target after {k} "
                f"round{'s' if k > 1 else ''}; the closest, N = {row['passes']}, missed by "
                f"{row['error_pct']:+.1f} %"
            )
        )
        if row.get("step"):
            lines.append(f"closed loop stopped: {row['step']['sentence']}")
        met = row.get("meets_target")
        if met is None:
            lines.append(
                f"neither design held the target within {row['tolerance_pct']:g} % "
                "(N passes nor the hold by time)"
            )
        elif met["design"] != "N passes":
            ci = met["achieved_ci_ms"]
            ci_text = f", 95 % CI {ci[0]:.3f} .. {ci[1]:.3f}" if ci else ""
            lines.append(
                f"the design that meets the target: the hold by time (recirc_hold.p4, "
                f"{met['hold_ms']:g} ms), measured {met['achieved_ms']:.3f} ms "
                f"({met['error_statistic']}{ci_text}), error {met['error_pct']:+.1f} %; "
                "the N passes did not"
            )
    if row.get("cpu_priority") not in (None, "normal"):
        lines.append(
            f"switch cpu_priority {row['cpu_priority']} (threads: "
            + ", ".join(f"{n} {k}" for k, n in row.get("switch_scheduling", {}).items())
            + ")"
        )
    for prefix, what in (("", f"N = {row['passes']}"), ("hold_", "hold by time")):
        if row.get(f"{prefix}achieved_ms") is None:
            continue
        dlo, dhi = row[f"{prefix}achieved_median_ci_ms"]
        lines.append(
            f"{what}: median {row[f'{prefix}achieved_median_ms']:.3f} ms (95 % CI {dlo:.3f} .. "
            f"{dhi:.3f}); error vs target ({row['error_statistic']}): "
            f"{row[f'{prefix}error_pct']:+.1f} %"
        )
        lo, hi = row[f"{prefix}achieved_ci_ms"]
        mlo, mhi = row[f"{prefix}achieved_min_ci_ms"]
        plo, phi = row[f"{prefix}achieved_p99_ci_ms"]
        runs = row.get(f"{prefix}ping_runs")  # (a row stored before it was kept: none)
        lines.append(
            # each statistic is the one at N minus the same one at N = 0 (achieved())
            f"{what}, measured (each minus N = 0's) mean {row[f'{prefix}achieved_ms']:.3f} ms "
            f"(95 % CI {lo:.3f} .. "
            f"{hi:.3f}; target {row['target_ms']:g} ms); "
            f"min {row[f'{prefix}achieved_min_ms']:.3f} (95 % CI {mlo:.3f} .. {mhi:.3f}), "
            f"p99 {row[f'{prefix}achieved_p99_ms']:.3f} (95 % CI {plo:.3f} .. {phi:.3f}); "
            f"spread (SD) {row[f'{prefix}spread_ms']:.3f} ms; n = {row[f'{prefix}pings']} pings"
            + (f" in {runs} run{'s' if runs != 1 else ''}" if runs else "")
        )
    lines += cost_sentences(row, row["passes"])
    if row.get("cost_load_average"):
        lines.append(
            "cost study's load average (1 min, start, end): %s, %s"
            % tuple(row["cost_load_average"])
        )
    return lines


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
