"""What the `sdnperf` subcommands share: exit codes, a command's help when its action is
missing, a study's results folder (studies and ctlbench alike). It imports no other sdnperf
module, so every command module can import it (the printed report is reporting.py)."""

from __future__ import annotations

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
