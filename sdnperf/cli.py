"""The `sdnperf` command: one entry point for studies, reports, topologies and tools."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sdnperf import tools
from sdnperf.cluster.cli import check_cluster_args
from sdnperf.commands import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    results_store_path,
    usage,
)
from sdnperf.ctlbench.cli import add_ctlbench_command
from sdnperf.reporting import print_report
from sdnperf.samples import format_point
from sdnperf.store.schema import SchemaError
from sdnperf.store.sqlite import Store
from sdnperf.study.locate import format_path
from sdnperf.userinput import InputError, read_text

if TYPE_CHECKING:
    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import CtlbenchStudy

    # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.loader import LoadedStudy

DESCRIPTION = """\
sdnperf: build emulated networks, put forwarding architectures under test
(Linux bridge, Open vSwitch, OpenFlow controllers, P4), run real traffic, and report
means with confidence intervals, significance and plots.

Typical use:
  sdnperf run                      run the embedded default study (campus: bridge vs openflow)
  sdnperf run examples/topo-tree.toml
  sdnperf run --resume STUDY.toml  continue a study that was interrupted
  sdnperf run STUDY.toml --cluster local:2   spread its runs over Ray nodes (docs/scale-out.md)
  sdnperf report results/default   table + HTML report + CSV from a stored study
  sdnperf topo show campus --png campus.png
  sdnperf study list               the literature's studies, built in (study run NAME)
  sdnperf recirc plan --target-delay 5ms --from results/recirc   passes for a 5 ms hold
  sdnperf doctor                   what this machine can and cannot do
  sdnperf clean                    remove whatever a crashed study left behind
  sdnperf ctlbench run -c osken:l2-learning --switches 1,4,16   controller benchmark
  sdnperf ctlbench run --protocol p4runtime -c p4rt --switches 1,4   ... over P4Runtime
"""


ONLY_HELP = (
    "run a slice of the plan: NAME=VALUE terms joined by ',' (all must hold), "
    "alternatives by '|'; NAME is topology, arch, workload, rep or a swept parameter "
    "path, e.g. 'arch=p4,workload.udp.length=64|1400'"
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    # Tools written in Rust take their own arguments: hand them over untouched (all but a
    # lone --help, which is ours; `sdnperf switch -- --help` asks the tool).
    if argv and argv[0] in RUST_TOOLS and argv[1:] not in (["-h"], ["--help"]):
        passed = argv[2:] if argv[1:2] == ["--"] else argv[1:]
        return run_rust_tool(argv[0], passed)
    if argv[:2] == ["topo", "show"] and len(argv) > 3 and set(argv[3:]) & {"-h", "--help"}:
        from sdnperf.topo.registry import TOPOLOGIES  # lazy: pulls in networkx, wanted only here

        if argv[2] in TOPOLOGIES:  # `topo show tree --help`: the generator's parameters
            # lazy: only this command needs it (`sdnperf` starts small)
            from sdnperf.study.reference import generator_text

            print(f"sdnperf topo show {argv[2]} [NAME=VALUE ...] [--png FILE] [--seed N]\n")
            print(generator_text(argv[2]))
            return EXIT_OK
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `sdnperf ... | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return EXIT_OK
    except (InputError, SchemaError) as exc:  # a file the user gave cannot be used
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # the last resort: an answer in words, never a traceback
        if os.environ.get("SDNPERF_DEBUG"):
            raise
        print(
            f"error: internal error ({type(exc).__name__}: {exc}); rerun with "
            "SDNPERF_DEBUG=1 for the traceback and report it",
            file=sys.stderr,
        )
        return EXIT_FAIL


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("sdnperf")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(
        prog="sdnperf",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"sdnperf {version()}")
    # What command modules below this one need from above, handed down here so they
    # import neither this module nor reporting.py: the whole parser (`study run` runs
    # `run` on each of its files), the report and the study pipeline (`ctlbench run`).
    parser.set_defaults(
        func=usage(parser),
        command_parser=build_parser,
        print_report=print_report,
        run_study=run_study,
    )
    sub = parser.add_subparsers(metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="run a study (default: the embedded default study)",
        description="Run every run of a study, store each as it finishes, then "
        "print the comparison table and write the HTML report.",
    )
    p.add_argument("study", nargs="?", help="study TOML file (omit for the default study)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep finished runs of this study and run only the missing/failed ones",
    )
    p.add_argument("--out", default="results", help="results folder (default: ./results)")
    p.add_argument("--repetitions", type=int, help="override study.repetitions")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.add_argument("--only", metavar="EXPR", help=ONLY_HELP)
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the study's blocks on a Ray cluster (its address, ray://HOST:PORT, "
        "or local:N for N nodes on this machine); docs/scale-out.md",
    )
    p.add_argument(
        "--allow-mixed",
        action="store_true",
        help="with --cluster: run even if nodes differ (versions, tools, kernel "
        "features); nodes that cannot run the study are left out",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "check",
        help="validate a study file without running it",
        description="Validate a study file; print its matrix (runs per "
        "topology, sweep point, architecture, workload) and an "
        "estimated duration (network build times measured by "
        "earlier runs in --out, else an assumed constant).",
    )
    p.add_argument("study", nargs="?", help="study TOML file (omit for the default study)")
    p.add_argument(
        "--out",
        default="results",
        help="results folder whose earlier runs give measured build times",
    )
    p.add_argument("--only", metavar="EXPR", help=ONLY_HELP)
    p.add_argument("--json", action="store_true", help="the verdict as JSON on stdout")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "report",
        help="table, HTML report and CSV from a stored study",
        description="Read a study's SQLite store; print the comparison table, "
        "write report.html and CSV files next to it.",
    )
    p.add_argument("results", help="results folder of a study (or its study.sqlite)")
    p.add_argument("--baseline", help="architecture to compare against (default: the study's)")
    p.add_argument("--html", help="where to write the HTML report (default: RESULTS/report.html)")
    p.add_argument("--csv", help="folder for CSV export (default: RESULTS/csv)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the comparison table as JSON (one object per row) and write nothing",
    )
    p.set_defaults(func=cmd_report)

    topo = sub.add_parser(
        "topo",
        help="topology tools",
        description="Topology tools: `sdnperf topo show KIND|STUDY.toml`.",
    )
    topo.set_defaults(func=usage(topo))
    topo_sub = topo.add_subparsers(metavar="ACTION")
    p = topo_sub.add_parser(
        "show",
        help="describe a topology (and draw it as PNG)",
        description="KIND is a topology kind (campus, tree, ...) or a study "
        "file. Parameters as NAME=VALUE, e.g. depth=2 fanout=3; "
        "`sdnperf topo show KIND --help` lists KIND's parameters.",
    )
    p.add_argument("what", help="topology kind or study TOML file")
    p.add_argument("params", nargs="*", help="NAME=VALUE generator parameters")
    p.add_argument("--png", help="draw the topology into this PNG file")
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_topo_show)

    p = sub.add_parser(
        "doctor",
        help="what this machine can and cannot do, and why",
        description="Check this machine's kernel features, tools and our Rust "
        "binaries, and say what each missing one prevents.",
    )
    p.add_argument("--json", action="store_true", help="the capabilities as JSON on stdout")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "clean",
        help="remove processes, interfaces and run dirs a crashed "
        "study left behind (only what sdnperf created)",
        description="Remove the processes, interfaces and run dirs that a "
        "crashed or killed study left behind; only what sdnperf "
        "created (tagged processes, registered interfaces).",
    )
    p.set_defaults(func=cmd_clean)

    p = sub.add_parser(
        "calibrate",
        help="measure configured vs achieved link rate, delay and loss per architecture",
        description="Per architecture, build a one-switch network whose links have the given "
        "rate, delay and loss, send UDP above the rate and pings across it, and record what "
        "was achieved (receiver goodput, delay and loss per link, and the switch's own port "
        "counters). The record is written to --out (default: this host's calibration file) "
        "and every later study copies it into its provenance. Needs root.",
    )
    p.add_argument(
        "--arch",
        action="append",
        help="architecture kind to calibrate (repeatable; default bridge, openflow, p4)",
    )
    p.add_argument("--rate", type=float, default=10.0, help="link rate, Mbit/s (10)")
    p.add_argument("--delay", type=float, default=2.0, help="link delay, ms (2)")
    p.add_argument("--loss", type=float, default=1.0, help="link loss, %% (1)")
    p.add_argument("--out", type=Path, help="the JSON file to write")
    p.set_defaults(func=cmd_calibrate)

    add_ctlbench_command(sub)
    # lazy: pulls in networkx, numpy, psutil, scipy, wanted only here
    from sdnperf.studies import recirc_cli, study_cli

    recirc_cli.add_parser(sub)
    study_cli.add_parser(sub)
    for tool, (binary, helptext) in RUST_TOOLS.items():
        own = f"{binary} stf" if tool == "stf" else binary
        about = (
            f"Runs our Rust binary {own} with ARGS passed through untouched (the binary "
            f"sdnperf doctor shows: ${tools.env_var(binary)}, $SDNPERF_BIN_DIR, "
            f"rust/target*/release, PATH). `sdnperf {tool} -- --help` shows {own}'s own "
            "options."
        )
        p = sub.add_parser(
            tool,
            help=helptext,
            usage=f"sdnperf {tool} [--] ARGS...",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            description=f"{helptext[0].upper()}{helptext[1:]}.\n\n" + textwrap.fill(about, 88),
        )
        p.set_defaults(func=usage(p))
    return parser


# -- run -----------------------------------------------------------------------------------
def _load(path) -> LoadedStudy | CtlbenchStudy | None:
    """A study file of either kind (a network study, or a controller benchmark: [load] or
    [[controller]] tables and no [topology]); None after printing what is wrong."""
    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import ConfigError, load_ctlbench_study

    # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.loader import StudyError, load_study

    if path and _is_ctlbench_file(path):
        try:
            return load_ctlbench_study(path)
        except ConfigError as exc:
            for line in str(exc).splitlines():
                print(f"error: {line}", file=sys.stderr)
            return None
    try:
        return load_study(path)
    except StudyError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return None


def _selected_plan(study, only: str | None):
    """(plan narrowed by --only, selection, None), or (None, None, [why]) for a bad EXPR,
    a sweep value that does not validate, or an EXPR that selects no run."""
    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import CtlbenchStudy
    from sdnperf.study.loader import StudyError  # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.plan import plan_runs  # lazy: pulls in networkx, psutil, wanted only here

    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.study.select import SelectionError, parse_selection

    if isinstance(study, CtlbenchStudy):
        if only:
            return None, None, ["--only selects runs of network studies, not of a ctlbench file"]
        return study.plan(), None, None
    try:
        plan = plan_runs(study)  # validates every combination of sweep values
    except StudyError as exc:
        return None, None, [str(p) for p in exc.problems]
    if not only:
        return plan, None, None
    try:
        selection = parse_selection(only, [s.param for s in study.config.sweep])
    except SelectionError as exc:
        return None, None, [str(exc)]
    chosen = [r for r in plan if selection.matches(r)]
    if not chosen:
        return None, None, [f"--only {only!r} selects none of the study's {len(plan)} runs"]
    return chosen, selection, None


def _plan(study, only: str | None):
    """The study's plan, narrowed by --only; None (after printing why) for a bad EXPR."""
    plan, selection, problems = _selected_plan(study, only)
    for problem in problems or []:
        print(f"error: {problem}", file=sys.stderr)
    return plan, selection


def matrix_text(study, plan) -> str:
    """'2 topologies × 3 points × 2 architectures × 1 workload × 2 repetitions = 24 runs'."""
    import math

    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import CtlbenchStudy

    # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.sweep import groups, sweeps_of
    from sdnperf.topo.spec import count_of  # lazy: pulls in networkx, wanted only here

    if isinstance(study, CtlbenchStudy):
        return study.matrix_text(plan)
    cfg = study.config
    points = math.prod(len(g[0].values) for g in groups(sweeps_of(study)))
    parts = [
        count_of(len(study.topologies), "topology").replace("topologys", "topologies"),
        count_of(points, "sweep point") if cfg.sweep else "",
        count_of(len(cfg.architecture), "architecture"),
        count_of(len(cfg.workload), "workload"),
        count_of(cfg.study.repetitions, "repetition"),
    ]
    return " × ".join(p for p in parts if p) + f" → {count_of(len(plan), 'run')}"


def cmd_check(args) -> int:
    """Validate a study (or ctlbench) file as `run` would before starting anything: the
    schema, the topologies, the plan and --only, then what `run`'s preflight refuses
    (architecture against topology and machine, binaries, kernel features)."""
    verdict: dict = {"file": args.study or "<default study>", "ok": False, "errors": []}

    def fail(messages: list[str]) -> int:
        verdict["errors"] += messages
        if args.json:
            print(json.dumps(verdict, indent=2))
        else:
            for message in messages:
                print(f"error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT

    if args.study and _is_ctlbench_file(args.study):
        return _check_ctlbench(args.study, args.json, fail)
    # lazy: pulls in networkx, psutil, wanted only here
    from sdnperf.study.loader import StudyError, load_study

    try:
        study = load_study(args.study)
    except StudyError as exc:
        return fail([str(p) for p in exc.problems])
    plan, selection, problem = _selected_plan(study, args.only)
    if plan is None:
        return fail(problem)
    # lazy: pulls in networkx, psutil, yaml, wanted only here
    from sdnperf.runner import preflight_problems, run_studies

    refusals: list[str] = []
    root = os.geteuid() == 0  # probing the kernel (qdiscs, bridges) needs root, as run does
    for variant in run_studies(plan) or [study]:
        names = {r.architecture.name for r in plan if r.study is variant} or None
        for refusal in preflight_problems(variant, names, kernel=root):
            if refusal not in refusals:
                refusals.append(refusal)
    if refusals:
        return fail([f"{study.path}: `sdnperf run` refuses it here: {r}" for r in refusals])
    # lazy: pulls in networkx, wanted only here
    from sdnperf.study.estimate import build_times, estimate

    measured = {}
    db_path = Path(args.out) / study.name / "study.sqlite"
    if db_path.is_file():
        with Store(db_path) as store:  # SchemaError (not a study database): exit 2 in main
            measured = build_times(r for s in store.studies() for r in store.runs(s.id))
    duration = estimate(plan, measured)
    verdict.update(
        ok=True,
        study=study.name,
        topologies={label: t.describe() for label, t in study.topologies.items()},
        runs=len(plan),
        matrix=matrix_text(study, plan),
        only=str(selection) if selection else None,
        estimated_seconds=round(duration.seconds),
        kernel_probed=root,
    )
    if args.json:
        print(json.dumps(verdict, indent=2))
        return EXIT_OK
    for _label, topology in study.topologies.items():
        print(f"{study.path}: ok — {topology.describe()}")
    print(
        f"matrix: {matrix_text(study, plan)}"
        + (f" (--only {selection})" if selection else "")
        + f", order {study.config.study.order}"
    )
    print(f"estimated duration: {duration.text()}")
    if not root:
        print("note: not root, so kernel features (netem, VLAN filtering) were not probed")
    return EXIT_OK


def _is_ctlbench_file(path: str) -> bool:
    """A ctlbench file has [load] or [[controller]] tables and no [topology]."""
    import tomllib

    try:
        raw = tomllib.loads(read_text(path))
    except (InputError, tomllib.TOMLDecodeError):
        return False  # the study loader says what is wrong with it
    return "topology" not in raw and ("load" in raw or "controller" in raw)


def _check_ctlbench(path: str, as_json: bool, fail) -> int:
    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import ConfigError, load_ctlbench_study

    try:
        study = load_ctlbench_study(path)
    except ConfigError as exc:
        return fail(str(exc).splitlines())
    cfg, runs = study.config, len(study.plan())
    if as_json:
        print(
            json.dumps(
                {"file": path, "ok": True, "errors": [], "ctlbench": cfg.study.name, "runs": runs},
                indent=2,
            )
        )
        return EXIT_OK
    controllers = ", ".join(c.label for c in cfg.controller)
    print(
        f"{path}: ok — ctlbench {cfg.study.name!r} ({cfg.load.protocol}, {cfg.load.mode} mode): "
        f"{controllers}; {runs} runs; run it with `sdnperf run {path}`"
    )
    return EXIT_OK


def cmd_run(args) -> int:
    study = _load(args.study)
    if study is None:
        return EXIT_BAD_INPUT
    if args.repetitions:
        study.config.study.repetitions = args.repetitions
    return run_study(study, args, Path(args.out) / study.name)


def run_study(study, args, results_dir: Path) -> int:
    """Run a loaded study of either kind, to the end or until Ctrl-C, into `results_dir`:
    plan, preflight, provenance, this machine or `--cluster`, `--resume`, the report.
    `sdnperf ctlbench run` comes here too (handed this function as `args.run_study`)."""
    from rich.console import Console
    from rich.markup import escape

    # lazy: pulls in psutil, yaml, wanted only here
    from sdnperf.ctlbench.study import CtlbenchStudy

    console = Console(stderr=True)
    if args.cluster:
        problem = check_cluster_args(args)
        if problem:
            console.print(f"[red]error:[/] {escape(problem)}")
            return EXIT_BAD_INPUT
    # a controller benchmark builds no network: root only to isolate runs of local:N nodes
    network = not isinstance(study, CtlbenchStudy)
    remote = args.cluster and not args.cluster.startswith("local:")
    if os.geteuid() != 0 and not remote and (network or args.cluster):
        console.print(
            "[red]error:[/] sdnperf run needs root (Mininet creates namespaces and links)"
        )
        return EXIT_FAIL

    from sdnperf.fidelity.environment import collect  # lazy: pulls in psutil, wanted only here

    # lazy: pulls in psutil, wanted only here
    from sdnperf.fidelity.provenance import collect_provenance

    # lazy: pulls in networkx, psutil, yaml, wanted only here
    from sdnperf.runner import StudyRefused, StudyRunner

    plan, selection = _plan(study, args.only)
    if plan is None:
        return EXIT_BAD_INPUT
    if network and getattr(args, "narrow", None):  # `study run`: runs it cannot do here
        plan, selection = args.narrow(plan, selection)

    if not args.cluster:  # refuse before the results folder exists (the runner asks again)
        # lazy: pulls in networkx, psutil, yaml, wanted only here
        from sdnperf.runner import preflight_problems, run_studies

        refused: list[str] = []
        for variant in run_studies(plan) or [study]:
            names = {r.architecture.name for r in plan if r.study is variant} or None
            refused += [r for r in preflight_problems(variant, names) if r not in refused]
        if refused:
            for refusal in refused:
                print(f"error: {refusal}", file=sys.stderr)  # whole lines, never wrapped
            return EXIT_BAD_INPUT
    db_path = results_store_path(results_dir, args.resume, console.print)
    console.print(
        f"[bold]{escape(study.name)}[/]: "
        + escape(
            "; ".join(
                [*(t.describe() for t in study.topologies.values()), matrix_text(study, plan)]
            )
        )
        + (f" (--only {escape(str(selection))})" if selection else "")
    )
    started = time.monotonic()

    def progress(n, count, run):
        elapsed = time.monotonic() - started
        eta = f", ~{elapsed / (n - 1) * (count - n + 1):.0f}s left" if n > 1 else ""
        where = " · ".join(
            [
                *([run.topology] if len(study.topologies) > 1 else []),
                run.architecture.name,
                run.workload.name,
                *([format_point(run.point)] if run.point else []),
            ]
        )
        console.print(
            f"[{n}/{count}] {escape(where)} · rep {run.repetition}  ({elapsed:.0f}s elapsed{eta})"
        )

    def log(msg):
        console.print(f"  [yellow]{escape(msg)}[/]")

    store = Store(db_path)
    try:
        # lazy: only this command needs it (`sdnperf` starts small)
        from sdnperf.emulation.capabilities import ovs_kernel_module

        datapath = ("kernel" if ovs_kernel_module() else "user (netdev)") if network else None
        environment = collect(datapath=datapath)
        provenance = collect_provenance(study, plan, environment)
        if args.cluster:  # the same contract on the nodes of a Ray cluster
            # lazy: pulls in networkx, psutil, yaml, wanted only here
            from sdnperf.cluster.driver import ClusterRefused, ClusterRunner

            refusals: tuple = (StudyRefused, ClusterRefused)
            runner: ClusterRunner | StudyRunner = ClusterRunner(
                study,
                store,
                results_dir,
                resume=args.resume,
                address=args.cluster,
                allow_mixed=args.allow_mixed,
                progress=progress,
                log=log,
                only=selection,
                provenance=provenance,
            )
        else:
            refusals = (StudyRefused,)
            runner = StudyRunner(
                study,
                store,
                results_dir,
                resume=args.resume,
                progress=progress,
                log=log,
                only=selection,
                provenance=provenance,
            )
        try:
            study_id, results = runner.run(environment)
        except refusals as exc:
            console.print(f"[red]error:[/] {exc}")
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            console.print(
                f"\n[yellow]interrupted[/]: finished runs are stored in {db_path}; "
                f"continue with: sdnperf run --resume {study.path if study.path[0] != '<' else ''}".rstrip()
            )
            return EXIT_INTERRUPTED
        failed = [r for r in results if r.status == "failed"]
        print_report(store, study_id, results_dir, html=not args.no_report)
        console.print(f"done in {time.monotonic() - started:.0f}s; results: {results_dir}/")
        if failed:
            console.print(
                f"[red]{len(failed)} run(s) failed[/]: see the report and {results_dir}/logs"
            )
            return EXIT_FAIL
        return EXIT_OK
    finally:
        store.close()


def cmd_report(args) -> int:

    path = Path(args.results)
    db_path = path if path.suffix == ".sqlite" else path / "study.sqlite"
    if not db_path.is_file():
        print(f"error: {db_path}: no study database here", file=sys.stderr)
        return EXIT_BAD_INPUT
    store = Store(db_path)  # SchemaError (not a study database): exit 2 in main
    try:
        studies = store.studies()
        if not studies:
            print(f"error: {db_path}: holds no study", file=sys.stderr)
            return EXIT_BAD_INPUT
        study_id = studies[-1].id
        archs = sorted({r.architecture for r in store.runs(study_id)})
        if args.baseline is not None and args.baseline not in archs:
            print(
                f"error: --baseline {args.baseline!r}: no run of this study used it; "
                f"architectures: {', '.join(archs) or '(none: the study has no runs)'}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        if args.json:
            # lazy: pulls in numpy, rich, scipy, wanted only here
            from sdnperf.report.table import comparison

            rows = comparison(store, study_id, args.baseline)
            print(json.dumps([row.record() for row in rows], indent=2))
            return EXIT_OK
        print_report(
            store,
            study_id,
            db_path.parent,
            args.baseline,
            html=True,
            html_path=args.html,
            csv_dir=args.csv,
        )
    finally:
        store.close()
    return EXIT_OK


# -- topo, doctor, clean -------------------------------------------------------------------
def cmd_topo_show(args) -> int:
    from sdnperf.topo.show import draw_png, render_text  # lazy: pulls in networkx, wanted only here

    if args.what.endswith(".toml"):
        study = _load(args.what)
        if study is None:
            return EXIT_BAD_INPUT
        specs = list(study.topologies.values())
    else:
        import pydantic

        # lazy: pulls in networkx, wanted only here
        from sdnperf.topo.registry import build_topology

        params = {}
        for item in args.params:
            if "=" not in item:
                print(f"error: parameter {item!r} is not NAME=VALUE", file=sys.stderr)
                return EXIT_BAD_INPUT
            name, value = item.split("=", 1)
            params[name] = _literal(value)
        try:
            specs = [build_topology(args.what, params, args.seed, Path.cwd())]
        except pydantic.ValidationError as exc:
            # lazy: only this command needs it (`sdnperf` starts small)
            from sdnperf.study.messages import explain
            from sdnperf.topo.registry import generator  # lazy: pulls in networkx, wanted only here

            for path, message in explain(exc, generator(args.what).params_model):
                print(f"error: {format_path(path) or args.what}: {message}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    for spec in specs:  # a study file may hold several [[topology]] entries
        print(render_text(spec))
        if args.png:
            png = Path(args.png)
            if len(specs) > 1:  # one drawing each: NAME-<topology>.png
                png = png.with_name(f"{png.stem}-{spec.name}{png.suffix}")
            print(f"drawn: {draw_png(spec, png)}")
    return EXIT_OK


def _literal(text: str):
    """NAME=VALUE on the command line: numbers and booleans as such, else the string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def cmd_calibrate(args) -> int:
    import json
    import tempfile

    # lazy: pulls in networkx, psutil, yaml, wanted only here
    from sdnperf.calibrate import calibrate
    from sdnperf.fidelity import calibration  # lazy: pulls in psutil, wanted only here

    if os.geteuid() != 0:
        print("error: sdnperf calibrate needs root (it builds Mininet networks)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.rate <= 0 or args.delay < 0 or not 0 <= args.loss < 100:
        print("error: --rate must be > 0, --delay >= 0, 0 <= --loss < 100", file=sys.stderr)
        return EXIT_BAD_INPUT
    archs = args.arch or list(calibration.DEFAULT_ARCHITECTURES)
    with tempfile.TemporaryDirectory(prefix="sdnperf-calibrate-") as work:
        record = calibrate(archs, args.rate, args.delay, args.loss, Path(work))
    out = args.out or calibration.calibration_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    for line in calibration.render(record):
        print(line)
    print(f"written to {out} (copied into the provenance of every later study)")
    return EXIT_OK


def cmd_doctor(args) -> int:
    from sdnperf.doctor import run_doctor  # lazy: pulls in rich, wanted only here

    return run_doctor(as_json=args.json)


def cmd_clean(args) -> int:
    if os.geteuid() != 0:
        print("error: sdnperf clean needs root", file=sys.stderr)
        return EXIT_FAIL
    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.emulation.cleanup import clean

    report = clean()
    if report.empty():
        print("nothing to clean")
    for what, items in (
        ("processes", report.processes),
        ("interfaces", report.interfaces),
        ("run dirs", report.run_dirs),
    ):
        if items:
            print(f"removed {what}: {' '.join(items)}")
    return EXIT_OK


# -- Rust tools ----------------------------------------------------------------------------
RUST_TOOLS = {
    "p4c": ("sdnperf-p4c", "compile a P4_16 (v1model) program to BMv2 JSON + P4Info"),
    "switch": ("sdnperf-switch", "run the sdnperf P4 software switch"),
    "stf": ("sdnperf-switch", "run an STF packet test: sdnperf stf PROGRAM TEST.stf"),
}


def run_rust_tool(tool: str, args: list[str]) -> int:

    binary_name, _ = RUST_TOOLS[tool]
    try:
        binary = tools.find(binary_name)
    except tools.ToolNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    argv = [binary, *(["stf"] if tool == "stf" else []), *args]
    os.execv(binary, argv)


if __name__ == "__main__":
    sys.exit(main())
