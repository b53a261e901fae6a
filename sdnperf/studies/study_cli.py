"""`sdnperf study list|show|run`: the built-in studies (sdnperf/studies/builtin/).

    sdnperf study list                       name, question, measured quick-scale wall time
    sdnperf study show recirculation > my.toml   the study file, to copy and edit
    sdnperf study run recirculation --scale quick --out results
    sdnperf study figures workload-complexity  the seed paper's tables and figures, ours beside

`study run` hands each file of the scale to `sdnperf run` (or `sdnperf ctlbench run`), so
the runs, store and report are those of any study; with --record a complete, successful run
stores its wall time in the package's durations.json, which `study list` shows.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sdnperf.commands import EXIT_BAD_INPUT, EXIT_FAIL, EXIT_OK, usage
from sdnperf.studies import builtin
from sdnperf.studies.builtin import durations


def add_parser(sub) -> None:
    study = sub.add_parser(
        "study",
        help="the built-in studies (the literature's methods)",
        description="Built-in studies: the methods of the papers sdnperf "
        "grew from, one command each. `study show` prints a "
        "study file to copy and edit.",
    )
    study.set_defaults(func=usage(study))
    actions = study.add_subparsers(metavar="ACTION")
    p = actions.add_parser(
        "list",
        help="name, question and measured quick-scale wall time",
        description="List the built-in studies with their question and the "
        "wall time of their quick scale measured on this machine "
        '("not measured" until a `study run --record`).',
    )
    p.add_argument("--json", action="store_true", help="the list as JSON on stdout")
    p.set_defaults(func=cmd_list)
    p = actions.add_parser(
        "show",
        help="print a built-in study's file (or its page)",
        description="Print the study file of a scale; it runs as is with "
        "`sdnperf run` (ctlbench studies: `sdnperf ctlbench "
        "run`). Redirect it to a file to copy and edit.",
    )
    _name_and_scale(p)
    p.add_argument("--part", help="which file of a study with several (e.g. openflow-rate)")
    p.add_argument("--page", action="store_true", help="print the study's page (README) instead")
    p.set_defaults(func=cmd_show)
    p = actions.add_parser(
        "run",
        help="run a built-in study",
        description="Run a built-in study at a scale: smoke (seconds-long, "
        "for tests), quick (at most 5 minutes on 2 cores) or "
        "paper (the literature's durations and repetitions).",
    )
    _name_and_scale(p)
    p.add_argument("--out", default="results", help="results folder (default: ./results)")
    p.add_argument("--resume", action="store_true", help="keep finished runs, run the rest")
    p.add_argument("--only", metavar="EXPR", help="a slice of the plan, as `sdnperf run --only`")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.add_argument(
        "--record",
        action="store_true",
        help="store the wall time of this run in the package's durations.json "
        "(only a complete run: no --only/--resume, not interrupted)",
    )
    p.set_defaults(func=cmd_run)
    p = actions.add_parser(
        "figures",
        help="the seed paper's tables and figures and the report's that reproduce them",
        description="List every result table and figure of the study's seed paper (number "
        "and caption) with the figure or table of our report that reproduces it, or why "
        "it cannot be, and the numbers the paper publishes; ends with `reproduced A of B`. "
        "With --results, our numbers from a finished run are set beside the paper's.",
    )
    p.add_argument("name", help=f"a built-in study: {', '.join(builtin.STUDIES)}")
    p.add_argument(
        "--results",
        metavar="SQLITE",
        help="a results store (results/study.sqlite) of this study: ours beside the paper's",
    )
    p.set_defaults(func=cmd_figures)


def _name_and_scale(p) -> None:
    p.add_argument("name", help=f"a built-in study: {', '.join(builtin.STUDIES)}")
    p.add_argument(
        "--scale",
        choices=builtin.SCALES,
        default="quick",
        help="smoke (seconds), quick (≤ 5 min, default) or paper (hours)",
    )


def cmd_list(args) -> int:
    measured = durations.load()
    if args.json:
        import json

        listed = []
        for s in builtin.available():
            quick = measured.get(s.name, {}).get("quick")
            listed.append(
                {
                    "name": s.name,
                    "question": s.question,
                    "seed_paper": s.seed,
                    "scales": [sc for sc in builtin.SCALES if s.files(sc)],
                    "quick_seconds": quick.seconds if quick else None,
                }
            )
        print(json.dumps(listed, indent=2))
        return EXIT_OK
    for s in builtin.available():
        quick = measured.get(s.name, {}).get("quick")
        print(
            f"{s.name}\n  question: {s.question}\n  seed paper: {s.seed}; scales: "
            f"{', '.join(sc for sc in builtin.SCALES if s.files(sc))}\n"
            f"  quick scale: {quick.text() if quick else 'not measured on this machine'}"
        )
    return EXIT_OK


def _study(name: str):
    try:
        return builtin.find(name)
    except builtin.UnknownStudy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def cmd_figures(args) -> int:
    from sdnperf.studies import figure_map  # lazy: pulls in pydantic, wanted only here

    s = _study(args.name)
    if s is None:
        return EXIT_BAD_INPUT
    try:
        fmap = figure_map.load(s)
    except figure_map.FigureMapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    *items, count = figure_map.lines(s, fmap)
    print("\n".join(items))
    if args.results:
        from sdnperf.store import Store  # lazy: pulls in sqlite3, wanted only here

        path = Path(args.results)
        if not path.is_file():
            print(f"error: --results {path}: no such file", file=sys.stderr)
            return EXIT_BAD_INPUT
        with Store(path) as store:
            for study in store.studies():
                found = figure_map.map_for_store(store, study.id)
                if found is not None and found[0].name == s.name:
                    part = found[2]
                    print("\n".join(figure_map.comparison_lines(store, study.id, fmap, part)))
    print(count)
    return EXIT_OK


def cmd_show(args) -> int:
    s = _study(args.name)
    if s is None:
        return EXIT_BAD_INPUT
    if args.page:
        print(s.page.read_text(), end="")
        return EXIT_OK
    files = dict(zip(s.parts(args.scale), s.files(args.scale)))
    if not files:
        print(f"error: {s.name} has no {args.scale} scale", file=sys.stderr)
        return EXIT_BAD_INPUT
    part = args.part if args.part is not None else next(iter(files))
    if part not in files:
        print(
            f"error: {s.name} ({args.scale}) has parts {', '.join(files)}; not {part!r}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if len(files) > 1 and args.part is None:
        print(
            f"# ({s.name} has {len(files)} files at this scale: --part "
            f"{' | '.join(files)}; this is {part})",
            file=sys.stderr,
        )
    print(files[part].read_text(), end="")
    return EXIT_OK


class Narrowed:
    """A selection (`--only`, or every run) minus the runs this machine cannot do."""

    def __init__(self, selection, keep, why: str):
        self.selection, self.keep, self.why = selection, keep, why

    def matches(self, run) -> bool:
        return (self.selection is None or self.selection.matches(run)) and self.keep(run)

    def __str__(self) -> str:
        return ", ".join(x for x in (str(self.selection or ""), self.why) if x)


def machine_rule():
    """keep(run) and why: the runs this machine can do. An architecture its own check
    refuses here (a missing daemon, a kernel feature) is left out with that reason, not the
    whole study."""
    # lazy: pulls in networkx, pydantic, wanted only here
    from sdnperf.arch import ArchitectureError, check_architecture

    refused: dict[tuple[str, str], str] = {}  # (architecture, topology) -> reason, "" if fine

    def keep(run) -> bool:
        key = (run.architecture.name, run.topology)
        if key not in refused:
            try:
                check_architecture(run.architecture, run.study.topology)
                refused[key] = ""
            except ArchitectureError as exc:
                refused[key] = str(exc)
        return not refused[key]

    def why() -> str:
        return "; ".join(sorted({r for r in refused.values() if r}))

    return keep, why


def cmd_run(args) -> int:
    s = _study(args.name)
    if s is None:
        return EXIT_BAD_INPUT
    files = s.files(args.scale)
    if not files:
        print(f"error: {s.name} has no {args.scale} scale", file=sys.stderr)
        return EXIT_BAD_INPUT
    if s.tool == "ctlbench" and args.only:
        print(
            f"error: --only selects runs of `sdnperf run` studies; {s.name} runs "
            "`sdnperf ctlbench run` files (edit a copy from `study show` instead)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    started = time.monotonic()
    status = EXIT_OK
    for path in files:
        print(f"== {s.name} ({args.scale}): {path.name}", flush=True)
        status = max(status, _run_file(s, path, args))
        if status not in (EXIT_OK, EXIT_FAIL):  # bad input or Ctrl-C: stop here
            return status
    seconds = time.monotonic() - started
    print(f"{s.name} ({args.scale}): {seconds:.0f} s wall time")
    if s.then:
        print(s.then.format(scale=args.scale, out=args.out))
    if args.record:
        if status not in (EXIT_OK, EXIT_FAIL) or args.only or args.resume:
            print(
                "not recorded: --record keeps only a complete run (no --only/--resume, "
                "not interrupted)",
                file=sys.stderr,
            )
        else:
            try:
                m = durations.record(
                    s.name,
                    args.scale,
                    seconds,
                    f"sdnperf study run {s.name} --scale {args.scale}",
                    all_ok=status == EXIT_OK,
                )
            except OSError as exc:  # an installed package may be read-only
                print(f"not recorded: {durations.FILE}: {exc.strerror}", file=sys.stderr)
            else:
                print(f"recorded in {durations.FILE}: {m.text()}")
    return status


def _run_file(s, path: Path, args) -> int:
    """Run one study file through the same parser as `sdnperf run` / `sdnperf ctlbench run`
    (so every option those commands have gets its default): `args.command_parser`, the
    top-level parser that cli.py hands every command."""
    flags = [*(["--resume"] if args.resume else []), *(["--no-report"] if args.no_report else [])]
    if s.tool == "ctlbench":
        import tomllib

        name = tomllib.loads(path.read_text())["study"]["name"]
        ns = args.command_parser().parse_args(
            ["ctlbench", "run", str(path), "--results", str(Path(args.out) / name), *flags]
        )
        return ns.func(ns)
    keep, why = machine_rule()
    ns = args.command_parser().parse_args(
        [
            "run",
            str(path),
            "--out",
            str(args.out),
            *flags,
            *(["--only", args.only] if args.only else []),
        ]
    )
    ns.narrow = lambda plan, selection: narrow(plan, selection, keep, why)
    return ns.func(ns)


def narrow(plan, selection, keep, why):
    """The plan without the runs `keep` refuses, and a selection that says so (unchanged
    when nothing is dropped). `why()`: the reasons, once `keep` has seen the plan."""
    kept = [r for r in plan if keep(r)]
    if len(kept) == len(plan):
        return plan, selection
    reasons = why()
    print(f"note: {len(plan) - len(kept)} run(s) left out on this machine: {reasons}", flush=True)
    return kept, Narrowed(selection, keep, "runs this machine cannot do left out")
