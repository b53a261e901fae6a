"""One run on a node, exactly as `StudyRunner` does it on one machine (runner.run_planned):
a fresh run dir, execute_run, a failed run's logs kept, the run dir removed."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from sdnperf.emulation import cleanup


def run_here(study, run, results_dir: Path, log: Callable[[str], None]):
    """Execute one planned run on this machine (in whatever namespace we are in)."""
    # lazy: pulls in networkx, psutil, pydantic, sqlite3, yaml, wanted only here
    from sdnperf.runner import quiet_mininet, run_planned

    quiet_mininet()
    run_dir = cleanup.run_root() / cleanup.ensure_tag() / f"run{run.index:04d}"
    return run_planned(study, run, run_dir, Path(results_dir), log)
