"""Small stdlib-only programs that run *inside* Mininet hosts (started with `host.popen`).

They are files, not imports: the workload runs `python3 <file> ARGS` in the host's network
namespace. Each one prints plain text lines on stdout that a pure parser in the workload
module reads; servers signal readiness by creating the file given with `--ready`.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def agent_argv(name: str, *args: object) -> list[str]:
    """argv that runs agent `name` (a file in this folder) with this interpreter."""
    return [sys.executable, "-u", str(HERE / f"{name}.py"), *(str(a) for a in args)]
