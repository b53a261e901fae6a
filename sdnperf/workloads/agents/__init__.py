"""Small stdlib-only programs that run *inside* Mininet hosts (started with `host.popen`).

They are files, not imports: the workload runs `python3 <file> ARGS` in the host's network
namespace. Each one prints plain text lines on stdout that a pure parser in the workload
module reads; servers signal readiness by creating the file given with `--ready`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..context import WorkloadError

HERE = Path(__file__).resolve().parent


def agent_argv(name: str, *args: object) -> list[str]:
    """argv that runs agent `name` (a file in this folder) with this interpreter."""
    return [sys.executable, "-u", str(HERE / f"{name}.py"), *(str(a) for a in args)]


def wait_ready(paths: dict[str, Path], procs: dict, what: str, timeout: float) -> None:
    """Block until every server agent created its ready file (it listens/binds)."""
    deadline = time.monotonic() + timeout
    for key, path in paths.items():
        while not path.exists():
            proc = procs[key]
            if proc.popen.poll() is not None:
                raise WorkloadError(
                    f"{what} on {key} exited at start: {proc.errors()[-300:] or proc.returncode}"
                )
            if time.monotonic() > deadline:
                raise WorkloadError(f"{what} on {key} not ready after {timeout:g} s")
            time.sleep(0.01)
