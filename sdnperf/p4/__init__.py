"""The P4 programs sdnperf ships, compiled by our compiler on first use.

    prog = compiled("l2l3")        # -> CompiledProgram(json=..., p4info=..., source=...)

Only the P4 sources live in the repository; the BMv2 JSON and P4Info text are built into a
cache directory keyed by the source's and the compiler's content hash
($SDNPERF_P4_CACHE, else $XDG_CACHE_HOME/sdnperf/p4, else ~/.cache/sdnperf/p4), so an
edited program or a rebuilt compiler is never served stale output.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sdnperf import tools

PROGRAM_DIR = Path(__file__).parent
CPU_PORT = 255  # the CPU_PORT of l2l3.p4


class P4ProgramError(RuntimeError):
    pass


@dataclass(frozen=True)
class CompiledProgram:
    source: Path
    json: Path
    p4info: Path


def find_compiler() -> str:
    """Our P4 compiler (sdnperf/tools.py finds it); P4ProgramError when it is not built."""
    try:
        return tools.find("sdnperf-p4c")
    except tools.ToolNotFound as exc:
        raise P4ProgramError(str(exc)) from None


def cache_root() -> Path:
    if os.environ.get("SDNPERF_P4_CACHE"):
        return Path(os.environ["SDNPERF_P4_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sdnperf" / "p4"


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()[:16]


_LOCAL_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.M)


def local_includes(source: Path) -> list[Path]:
    """The files `source` includes with #include "..." (relative to the including file),
    recursively, in a stable order: an edited include must change the cache key too."""
    seen: list[Path] = []
    todo = [Path(source).resolve()]
    while todo:
        current = todo.pop(0)
        for name in _LOCAL_INCLUDE.findall(current.read_bytes()):
            path = (current.parent / name.decode()).resolve()
            if path.exists() and path not in seen:
                seen.append(path)
                todo.append(path)
    return seen


def compile_file(source: Path, compiler: str | None = None) -> CompiledProgram:
    """Compile `source` (once per content of source and compiler) into the cache."""
    source = Path(source).resolve()
    if not source.exists():
        raise P4ProgramError(f"P4 program {source} does not exist")
    compiler = compiler or find_compiler()
    out = cache_root() / f"{source.stem}-{_digest(source, *local_includes(source), Path(compiler))}"
    prog = CompiledProgram(source, out / f"{source.stem}.json", out / f"{source.stem}.p4info.txtpb")
    if prog.json.exists() and prog.p4info.exists():
        return prog
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{source.stem}-", dir=out.parent))
    try:
        r = subprocess.run(
            [compiler, str(source), "-o", str(tmp)], capture_output=True, text=True, timeout=120
        )
        if r.returncode != 0:
            raise P4ProgramError(f"compiling {source} failed:\n{(r.stderr or r.stdout).strip()}")
        try:
            tmp.rename(out)  # atomic: concurrent first uses both succeed, one wins
        except OSError:
            if not prog.json.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return prog


def compiled(name: str = "l2l3") -> CompiledProgram:
    """A program shipped in sdnperf/p4/ by name (without .p4), compiled."""
    return compile_file(PROGRAM_DIR / f"{name}.p4")
