"""Shared by the bench/p4c scripts: where the reference tools are, running a command with a
time limit, compiling with p4c-bm2-ss."""

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60


def reference_dir() -> Path | None:
    """../shared/p4-reference next to the repository, or $SDNPERF_P4_REFERENCE."""
    d = Path(os.environ.get("SDNPERF_P4_REFERENCE", REPO.parent / "shared" / "p4-reference"))
    return d if (d / "bin" / "p4c-bm2-ss").exists() else None


def run(cmd: list, cwd=None) -> tuple[int, str]:
    """(exit status, stdout + stderr); 124 when it ran longer than TIMEOUT_S."""
    try:
        r = subprocess.run(
            [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S
        )
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {TIMEOUT_S} s"


def p4c_bm2_ss(ref: Path, p4: Path, out_json: Path) -> tuple[int, str]:
    # -I: the bundle's p4include symlink may arrive as a plain file after copying;
    # absolute paths: it runs in the program's folder (for its #includes)
    p4, out_json = p4.resolve(), out_json.resolve()
    return run(
        [ref / "bin" / "p4c-bm2-ss", "-I", ref / "share" / "p4c" / "p4include", "-o", out_json, p4],
        cwd=p4.parent,
    )
