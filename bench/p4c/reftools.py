"""Shared by the bench/p4c scripts: where the reference tools are, running a command with a
time limit, compiling with p4c-bm2-ss."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # sdnperf from this checkout, as the other bench scripts take it
from sdnperf import tools

TIMEOUT_S = 60


def reference_dir() -> Path | None:
    """The folder holding bin/p4c-bm2-ss (and bin/simple_switch, share/p4c/p4include), as
    sdnperf.tools.find_bmv2 finds it: $SDNPERF_BMV2_DIR, PATH, ../shared/p4-reference."""
    found = tools.find_bmv2("p4c-bm2-ss", reference=True)
    return Path(found).parent.parent if found else None


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
