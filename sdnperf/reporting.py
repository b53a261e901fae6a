"""The report of a results store, printed and written (studies and ctlbench alike): the
comparison table, sweep fits, CSV files and the HTML report, with every subsystem's part
(a built-in study's figure map and answer, a cluster's per-node check, ctlbench's and
changing links' figures). It names those subsystems, so it sits above them, just under
cli.py; a command module below it (ctlbench/cli.py) is handed `print_report` by cli.py
(`args.print_report`) instead of importing it."""

from __future__ import annotations

import sys
from pathlib import Path

from sdnperf.cluster.variance import node_report
from sdnperf.studies.answers import answer_for


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
    # Imported when a report is made, not when the CLI starts: plotting pulls in matplotlib.
    from rich.console import Console

    # lazy: pulls in numpy, rich, scipy, sqlite3, wanted only here
    from sdnperf.report.table import comparison, render_table
    from sdnperf.studies import figure_map  # lazy: pulls in pydantic, wanted only here

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
    # lazy: pulls in numpy, scipy, sqlite3, wanted only here
    from sdnperf.report.sweeps import fit_lines, sweep_metrics

    for line in fit_lines(sweep_metrics(store, study_id, baseline)):
        print(line)

    nodes = node_report(store, study_id)  # a study run on a cluster: does the node matter?
    for warning in nodes.warnings() if nodes else []:
        print(f"warning: {warning}")

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
        import sdnperf.report.link_plots  # noqa: F401  (links that changed: schedule figures)
        import sdnperf.report.panel_plots  # noqa: F401  (panels per topology / architecture)
        import sdnperf.report.recirc_plots  # noqa: F401  (seed 003's axes: N, link rate, transmissions)
        import sdnperf.studies.figure_map  # noqa: F401  (the figure map, the report's opening)

        # lazy: pulls in matplotlib, numpy, psutil, rich, scipy, sqlite3, wanted only here
        from sdnperf.report.html import write_report

        out = write_report(store, study_id, html_path or results_dir / "report.html")
        print(f"HTML report: {out}")
    print(f"SQLite: {store.path}")
