"""The `sdnperf` command: one entry point for studies, reports, topologies and tools."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

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
  sdnperf doctor                   what this machine can and cannot do
  sdnperf clean                    remove whatever a crashed study left behind
  sdnperf ctlbench run -c osken:l2-learning --switches 1,4,16   controller benchmark
  sdnperf ctlbench run --protocol p4runtime -c p4rt --switches 1,4   ... over P4Runtime
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Tools written in Rust take their own arguments: hand them over untouched.
    if argv and argv[0] in RUST_TOOLS:
        return run_rust_tool(argv[0], argv[1:])
    if argv and argv[0] == "ctlbench":  # its own argument parser
        from sdnperf.ctlbench.cli import main as ctlbench_main
        return ctlbench_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sdnperf", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(metavar="COMMAND")

    p = sub.add_parser("run", help="run a study (default: the embedded default study)",
                       description="Run every run of a study, store each as it finishes, then "
                                   "print the comparison table and write the HTML report.")
    p.add_argument("study", nargs="?", help="study TOML file (omit for the default study)")
    p.add_argument("--resume", action="store_true",
                   help="keep finished runs of this study and run only the missing/failed ones")
    p.add_argument("--out", default="results", help="results folder (default: ./results)")
    p.add_argument("--repetitions", type=int, help="override study.repetitions")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the study's blocks on a Ray cluster (its address, ray://HOST:PORT, "
                        "or local:N for N nodes on this machine); docs/scale-out.md")
    p.add_argument("--allow-mixed", action="store_true",
                   help="with --cluster: run even if nodes differ (versions, tools, kernel "
                        "features); nodes that cannot run the study are left out")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check", help="validate a study file without running it")
    p.add_argument("study", nargs="?")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("report", help="table, HTML report and CSV from a stored study",
                       description="Read a study's SQLite store; print the comparison table, "
                                   "write report.html and CSV files next to it.")
    p.add_argument("results", help="results folder of a study (or its study.sqlite)")
    p.add_argument("--baseline", help="architecture to compare against (default: the study's)")
    p.add_argument("--html", help="where to write the HTML report (default: RESULTS/report.html)")
    p.add_argument("--csv", help="folder for CSV export (default: RESULTS/csv)")
    p.set_defaults(func=cmd_report)

    topo = sub.add_parser("topo", help="topology tools")
    topo_sub = topo.add_subparsers(metavar="ACTION")
    p = topo_sub.add_parser("show", help="describe a topology (and draw it as PNG)",
                            description="KIND is a topology kind (campus, tree, ...) or a study "
                                        "file. Parameters as NAME=VALUE, e.g. depth=2 fanout=3.")
    p.add_argument("what", help="topology kind or study TOML file")
    p.add_argument("params", nargs="*", help="NAME=VALUE generator parameters")
    p.add_argument("--png", help="draw the topology into this PNG file")
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_topo_show)

    p = sub.add_parser("doctor", help="what this machine can and cannot do, and why")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("clean", help="remove processes, interfaces and run dirs a crashed "
                                     "study left behind (only what sdnperf created)")
    p.set_defaults(func=cmd_clean)

    sub.add_parser("ctlbench", add_help=False,
                   help="benchmark SDN controllers with emulated switches flooding packet-ins")
    for tool, (_, helptext) in RUST_TOOLS.items():
        sub.add_parser(tool, help=helptext, add_help=False)
    return parser


# -- run -----------------------------------------------------------------------------------
def _load(path) -> "LoadedStudy | None":  # noqa: F821
    from sdnperf.study.loader import StudyError, load_study
    try:
        return load_study(path)
    except StudyError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return None


def cmd_check(args) -> int:
    study = _load(args.study)
    if study is None:
        return EXIT_BAD_INPUT
    from sdnperf.study.plan import plan_runs
    print(f"{study.path}: ok — {study.topology.describe()}; "
          f"{len(plan_runs(study))} runs")
    if os.geteuid() == 0:  # probing the kernel's qdiscs needs root
        from sdnperf.emulation.network import EmulationError, check_link_features
        try:
            check_link_features(study.topology, study.config.architecture)
        except EmulationError as exc:
            print(f"warning: the file is valid, but `sdnperf run` refuses it on this machine: {exc}",
                  file=sys.stderr)
    return EXIT_OK


def cmd_run(args) -> int:
    from rich.console import Console

    console = Console(stderr=True)
    if args.cluster:
        from sdnperf.cluster.cli import check_cluster_args
        problem = check_cluster_args(args)
        if problem:
            from rich.markup import escape
            console.print(f"[red]error:[/] {escape(problem)}")
            return EXIT_BAD_INPUT
    if os.geteuid() != 0 and not (args.cluster and not args.cluster.startswith("local:")):
        console.print("[red]error:[/] sdnperf run needs root (Mininet creates namespaces and links)")
        return EXIT_FAIL
    study = _load(args.study)
    if study is None:
        return EXIT_BAD_INPUT
    if args.repetitions:
        study.config.study.repetitions = args.repetitions
    from sdnperf.fidelity.environment import collect
    from sdnperf.runner import StudyRefused, StudyRunner
    from sdnperf.store.sqlite import Store
    from sdnperf.study.plan import plan_runs

    results_dir = Path(args.out) / study.name
    results_dir.mkdir(parents=True, exist_ok=True)
    db_path = results_dir / "study.sqlite"
    if db_path.exists() and not args.resume:
        # A new study never overwrites an old one: the previous database is kept aside.
        backup = db_path.with_name(f"study-{time.strftime('%Y%m%d-%H%M%S')}.sqlite")
        db_path.rename(backup)
        console.print(f"previous results kept as {backup}")
    total = len(plan_runs(study))
    console.print(f"[bold]{study.name}[/]: {study.topology.describe()}; "
                  f"{len(study.config.architecture)} architectures × {len(study.config.workload)} "
                  f"workloads × {study.config.study.repetitions} repetitions = {total} runs")
    started = time.monotonic()

    def progress(n, count, run):
        elapsed = time.monotonic() - started
        eta = f", ~{elapsed / (n - 1) * (count - n + 1):.0f}s left" if n > 1 else ""
        console.print(f"[{n}/{count}] {run.architecture.name} · {run.workload.name} · "
                      f"rep {run.repetition}  ({elapsed:.0f}s elapsed{eta})")

    def log(msg):
        console.print(f"  [yellow]{msg}[/]")

    store = Store(db_path)
    try:
        if args.cluster:  # the same contract on the nodes of a Ray cluster
            from sdnperf.cluster.driver import ClusterRefused, ClusterRunner
            refusals: tuple = (StudyRefused, ClusterRefused)
            runner = ClusterRunner(study, store, results_dir, resume=args.resume,
                                   address=args.cluster, allow_mixed=args.allow_mixed,
                                   progress=progress, log=log)
        else:
            refusals = (StudyRefused,)
            runner = StudyRunner(study, store, results_dir, resume=args.resume,
                                 progress=progress, log=log)
        try:
            from sdnperf.emulation.capabilities import ovs_kernel_module
            datapath = "kernel" if ovs_kernel_module() else "user (netdev)"
            study_id, results = runner.run(collect(datapath=datapath))
        except refusals as exc:
            console.print(f"[red]error:[/] {exc}")
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            console.print(f"\n[yellow]interrupted[/]: finished runs are stored in {db_path}; "
                          f"continue with: sdnperf run --resume {args.study or ''}".rstrip())
            return EXIT_INTERRUPTED
        failed = [r for r in results if r.status == "failed"]
        _report(store, study_id, results_dir, baseline=None, html=not args.no_report)
        console.print(f"done in {time.monotonic() - started:.0f}s; results: {results_dir}/")
        if failed:
            console.print(f"[red]{len(failed)} run(s) failed[/]: see the report and {results_dir}/logs")
            return EXIT_FAIL
        return EXIT_OK
    finally:
        store.close()


def _report(store, study_id: int, results_dir: Path, baseline, html: bool = True,
            html_path=None, csv_dir=None) -> None:
    from rich.console import Console

    from sdnperf.report.table import comparison, render_table
    rows = comparison(store, study_id, baseline)
    # Piped output (CI logs, files) gets a wide table instead of an 80-column squeeze.
    render_table(rows, Console(width=None if sys.stdout.isatty() else 160))
    from sdnperf.cluster.variance import node_report
    nodes = node_report(store, study_id)  # a study run on a cluster: does the node matter?
    for warning in nodes.warnings() if nodes else []:
        print(f"warning: {warning}")
    written = store.export_csv(study_id, csv_dir or results_dir / "csv")
    print(f"CSV: {', '.join(str(p) for p in written)}")
    if html:
        from sdnperf.report.html import write_report
        out = write_report(store, study_id, html_path or results_dir / "report.html")
        print(f"HTML report: {out}")
    print(f"SQLite: {store.path}")


def cmd_report(args) -> int:
    from sdnperf.store.sqlite import Store
    path = Path(args.results)
    db_path = path if path.suffix == ".sqlite" else path / "study.sqlite"
    if not db_path.exists():
        print(f"error: {db_path}: no study database here", file=sys.stderr)
        return EXIT_BAD_INPUT
    store = Store(db_path)
    try:
        studies = store.studies()
        if not studies:
            print(f"error: {db_path}: holds no study", file=sys.stderr)
            return EXIT_BAD_INPUT
        _report(store, studies[-1].id, db_path.parent, args.baseline, html=True,
                html_path=args.html, csv_dir=args.csv)
    finally:
        store.close()
    return EXIT_OK


# -- topo, doctor, clean -------------------------------------------------------------------
def cmd_topo_show(args) -> int:
    from sdnperf.topo.show import draw_png, render_text
    if args.what.endswith(".toml"):
        study = _load(args.what)
        if study is None:
            return EXIT_BAD_INPUT
        spec = study.topology
    else:
        import pydantic

        from sdnperf.topo.registry import build_topology
        params = {}
        for item in args.params:
            if "=" not in item:
                print(f"error: parameter {item!r} is not NAME=VALUE", file=sys.stderr)
                return EXIT_BAD_INPUT
            name, value = item.split("=", 1)
            params[name] = _literal(value)
        try:
            spec = build_topology(args.what, params, args.seed, Path.cwd())
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                print(f"error: {'.'.join(map(str, err['loc']))}: {err['msg']}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    print(render_text(spec))
    if args.png:
        print(f"drawn: {draw_png(spec, Path(args.png))}")
    return EXIT_OK


def _literal(text: str):
    """NAME=VALUE on the command line: numbers and booleans as such, else the string."""
    import tomllib
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def cmd_doctor(args) -> int:
    from sdnperf.doctor import run_doctor
    return run_doctor()


def cmd_clean(args) -> int:
    if os.geteuid() != 0:
        print("error: sdnperf clean needs root", file=sys.stderr)
        return EXIT_FAIL
    from sdnperf.emulation.cleanup import clean
    report = clean()
    if report.empty():
        print("nothing to clean")
    for what, items in (("processes", report.processes), ("interfaces", report.interfaces),
                        ("run dirs", report.run_dirs)):
        if items:
            print(f"removed {what}: {' '.join(items)}")
    return EXIT_OK


# -- Rust tools ----------------------------------------------------------------------------
RUST_TOOLS = {
    "p4c": ("sdnperf-p4c", "compile a P4_16 (v1model) program to BMv2 JSON + P4Info"),
    "switch": ("sdnperf-switch", "run the sdnperf P4 software switch"),
    "stf": ("sdnperf-switch", "run an STF packet test: sdnperf stf PROGRAM TEST.stf"),
}


def rust_binary(name: str) -> str | None:
    """Our Rust binaries: $SDNPERF_BIN_DIR, the repo's release build, or PATH."""
    candidates = [os.environ.get("SDNPERF_BIN_DIR"),
                  str(Path(__file__).resolve().parents[1] / "rust" / "target" / "release")]
    for folder in filter(None, candidates):
        path = Path(folder) / name
        if path.exists():
            return str(path)
    return shutil.which(name)


def run_rust_tool(tool: str, args: list[str]) -> int:
    binary_name, _ = RUST_TOOLS[tool]
    binary = rust_binary(binary_name)
    if binary is None:
        print(f"error: {binary_name} is not built; run scripts/install.sh", file=sys.stderr)
        return EXIT_FAIL
    argv = [binary, *(["stf"] if tool == "stf" else []), *args]
    os.execv(binary, argv)


if __name__ == "__main__":
    sys.exit(main())
