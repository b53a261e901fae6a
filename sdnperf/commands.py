"""What the `sdnperf` subcommands share: exit codes, a study's results folder and the
report printed and written from its store (studies and ctlbench alike)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
# shown by `sdnperf --help` and documented in README.md (tests/unit/test_malformed_inputs.py)
EXIT_CODES = """\
exit codes:
  0    success
  1    a run or a step failed (failed runs are stored with their reason), a tool or a
       permission is missing, or an internal error (said in words; SDNPERF_DEBUG=1
       shows its traceback)
  2    the input is wrong: a study/ctlbench file, a name, an option or a stored study
       (every mistake is printed as `error: FILE:LINE: FIELD: what is wrong`), or
       `run` refuses a study this machine or topology cannot run (nothing started)
  130  interrupted (Ctrl-C); finished runs are stored
"""


def usage(parser):
    """A command given without its action: print that command's help."""

    def show(args) -> int:
        parser.print_help()
        return EXIT_BAD_INPUT

    return show


def results_store_path(results_dir: Path, resume: bool, say: Callable[[str], None] = print) -> Path:
    """Create `results_dir` and return its study.sqlite. A new study never overwrites an
    old one: without `resume`, the previous database is kept aside under a dated name."""
    results_dir.mkdir(parents=True, exist_ok=True)
    db_path = results_dir / "study.sqlite"
    if db_path.exists() and not resume:
        backup = db_path.with_name(f"study-{time.strftime('%Y%m%d-%H%M%S')}.sqlite")
        db_path.rename(backup)
        say(f"previous results kept as {backup}")
    return db_path


def print_report(
    store,
    study_id: int,
    results_dir: Path,
    baseline=None,
    html: bool = True,
    html_path=None,
    csv_dir=None,
) -> None:
    """The comparison table on stdout; CSV files, and the HTML report unless html=False."""
    from rich.console import Console

    from sdnperf.report.table import comparison, render_table
    from sdnperf.studies import figure_map

    found = figure_map.map_for_store(store, study_id)  # a built-in study: the paper first
    if found is not None:
        study, fmap, part = found
        *items, count = figure_map.lines(study, fmap)
        cmp = figure_map.comparison_lines(store, study_id, fmap, part)
        print("\n".join([*items, *cmp, count]))
        print()
    rows = comparison(store, study_id, baseline)
    # Piped output (CI logs, files) gets a wide table instead of an 80-column squeeze.
    render_table(rows, Console(width=None if sys.stdout.isatty() else 160))
    from sdnperf.report.sweeps import fit_lines, sweep_metrics

    for line in fit_lines(sweep_metrics(store, study_id, baseline)):
        print(line)
    from sdnperf.cluster.variance import node_report

    nodes = node_report(store, study_id)  # a study run on a cluster: does the node matter?
    for warning in nodes.warnings() if nodes else []:
        print(f"warning: {warning}")
    from sdnperf.studies.answers import answer_for

    answer = answer_for(store, study_id)  # a built-in study's question and computed answer
    if answer is not None:
        print(f"\n{answer.question}")
        for sentence in answer.sentences:
            print(f"  - {sentence}")
        print()
    written = store.export_csv(study_id, csv_dir or results_dir / "csv")
    print(f"CSV: {', '.join(str(p) for p in written)}")
    if html:
        # report extensions register themselves when imported (report/ names none)
        import sdnperf.cluster.variance  # noqa: F401  (the "Nodes" section)
        import sdnperf.ctlbench.plots  # noqa: F401  (ctlbench's figures)
        import sdnperf.links.plots  # noqa: F401  (links that changed: schedule figures)
        import sdnperf.report.panel_plots  # noqa: F401  (panels per topology / architecture)
        import sdnperf.report.recirc_plots  # noqa: F401  (seed 003's axes: N, link rate, transmissions)
        import sdnperf.studies.figure_map  # noqa: F401  (the figure map, the report's opening)
        from sdnperf.report.html import write_report

        out = write_report(store, study_id, html_path or results_dir / "report.html")
        print(f"HTML report: {out}")
    print(f"SQLite: {store.path}")
