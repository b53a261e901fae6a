"""One run on a node, exactly as `StudyRunner` does it on one machine: a fresh run dir,
execute_run, the logs of a failed run kept next to the results, the run dir removed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

from sdnperf.emulation import cleanup


def run_here(study, run, results_dir: Path, log: Callable[[str], None]):
    """Execute one planned run on this machine (in whatever namespace we are in)."""
    from sdnperf.runner import StudyRunner, _folder, execute_run, quiet_mininet

    quiet_mininet()
    run_dir = cleanup.run_root() / cleanup.ensure_tag() / f"run{run.index:04d}"
    results_dir = Path(results_dir)
    try:
        result = execute_run(
            getattr(run, "study", None) or study,
            run,
            run_dir,
            log,
            results_dir=results_dir / "runs" / _folder(run.key),
        )
        if hasattr(result, "point"):  # plans with sweeps: the run's point and position
            result.point, result.position = dict(getattr(run, "point", ())), run.index
        if result.status == "failed":
            # The runner's own copy of a failed run's logs (store and resume are unused).
            StudyRunner(study, None, results_dir, resume=False)._keep_logs(run, run_dir)
        return result
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
