"""How long a stored study's HTML report takes to draw, and where: the whole report, the
time inside each figure's PNG draw (plots.save_png), optionally a cProfile of it all, and
the figures themselves (taken back out of the report's data URIs) to compare two versions.

    .venv/bin/python bench/report/time_report.py RESULTS/NAME [--repeat N] [--pngs DIR]
        [--profile N] [--html OUT.html]

RESULTS/NAME is a study's results folder (its study.sqlite); nothing else is read, nothing
runs but the report (no network, no root)."""

from __future__ import annotations

import argparse
import base64
import cProfile
import pstats
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a study's results folder (study.sqlite)")
    ap.add_argument("--repeat", type=int, default=1, help="reports to draw (default 1)")
    ap.add_argument("--pngs", type=Path, help="write the last report's figures here")
    ap.add_argument("--profile", type=int, default=0, help="print the N costliest functions")
    ap.add_argument("--html", type=Path, help="where to write the report (default: a temp file)")
    args = ap.parse_args()

    # the report's extensions, as reporting.print_report imports them
    import sdnperf.cluster.variance  # noqa: F401
    import sdnperf.ctlbench.plots  # noqa: F401
    import sdnperf.report.link_plots  # noqa: F401
    import sdnperf.report.panel_plots  # noqa: F401
    import sdnperf.report.recirc_plots  # noqa: F401
    import sdnperf.studies.figure_map  # noqa: F401
    from sdnperf.report import plots
    from sdnperf.report.html import write_report
    from sdnperf.store import Store

    drawn: list[float] = []
    save_png = plots.save_png

    def timed_save(fig, path):
        t = time.perf_counter()
        save_png(fig, path)
        drawn.append(time.perf_counter() - t)

    plots.save_png = timed_save
    sdnperf.ctlbench.plots.save_png = timed_save  # it imported the name
    out = args.html or Path(tempfile.mkdtemp(prefix="time-report-")) / "report.html"
    profiler = cProfile.Profile() if args.profile else None
    walls = []
    with Store(args.results / "study.sqlite") as store:
        (study,) = store.studies()
        for _ in range(args.repeat):
            drawn.clear()
            t = time.perf_counter()
            if profiler:
                profiler.enable()
            write_report(store, study.id, out)
            if profiler:
                profiler.disable()
            walls.append(time.perf_counter() - t)
            print(
                f"report {walls[-1]:.2f} s: {len(drawn)} figures, {sum(drawn):.2f} s of it in "
                f"their PNG draws (median {statistics.median(drawn or [0]):.3f} s, max "
                f"{max(drawn or [0]):.3f} s)"
            )
    if args.repeat > 1:
        print(f"report: median {statistics.median(walls):.2f} s of {len(walls)}")
    if args.pngs:
        args.pngs.mkdir(parents=True, exist_ok=True)
        html = out.read_text()
        for stem, data in re.findall(
            r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', html
        ):
            (args.pngs / f"{stem}.png").write_bytes(base64.b64decode(data))
        print(f"figures: {args.pngs}")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
