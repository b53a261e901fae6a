"""BMv2 for the bench/switch scripts: where simple_switch(_grpc) and p4c-bm2-ss are, and
l1_fwd.p4 compiled for them (BMv2 refuses our gen.py JSON, so it runs p4c's of the same
program).

Search order for a binary: $SDNPERF_BMV2_DIR (its bin/ or itself), PATH, then the reference
bundle ../shared/p4-reference next to the repository (or $SDNPERF_P4_REFERENCE)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
L1_FWD_P4 = HERE / "l1_fwd.p4"


def _dirs() -> list[Path]:
    out = []
    if os.environ.get("SDNPERF_BMV2_DIR"):
        d = Path(os.environ["SDNPERF_BMV2_DIR"])
        out += [d / "bin", d]
    out += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    ref = Path(os.environ.get("SDNPERF_P4_REFERENCE", REPO.parent / "shared" / "p4-reference"))
    out.append(ref / "bin")
    return out


def find(binary: str) -> Path | None:
    """simple_switch, simple_switch_grpc or p4c-bm2-ss, or None when none is found."""
    for d in _dirs():
        p = d / binary
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def why_missing(binary: str) -> str:
    return (
        f"no {binary} in $SDNPERF_BMV2_DIR, PATH or ../shared/p4-reference "
        "(set SDNPERF_BMV2_DIR=/path/to/bmv2)"
    )


def compile_l1_fwd(out_dir: Path) -> Path:
    """p4c-bm2-ss's JSON of l1_fwd.p4 in out_dir; RuntimeError naming the problem."""
    p4c = find("p4c-bm2-ss")
    if p4c is None:
        raise RuntimeError(why_missing("p4c-bm2-ss"))
    out = out_dir / "l1_fwd.p4c.json"
    # -I: the bundle's p4include symlink may arrive as a plain file after copying
    include = p4c.parent.parent / "share" / "p4c" / "p4include"
    argv = [str(p4c)] + (["-I", str(include)] if include.is_dir() else [])
    r = subprocess.run(
        argv + ["-o", str(out), str(L1_FWD_P4)], capture_output=True, text=True, timeout=120
    )
    if r.returncode != 0:
        raise RuntimeError(f"{p4c} {L1_FWD_P4}: {r.stderr.strip() or r.stdout.strip()}")
    return out


def argv(
    binary: Path, ports: list[tuple[int, str]], program: Path, thrift_port: int, grpc_addr=None
) -> list[str]:
    """simple_switch(_grpc)'s command line: ports, a Thrift port of its own (default 9090
    would collide with a second switch), no logging; grpc_addr for simple_switch_grpc."""
    out = [str(binary)]
    for num, name in ports:
        out += ["-i", f"{num}@{name}"]
    out += ["--thrift-port", str(thrift_port), str(program)]
    if grpc_addr:
        out += ["--", "--grpc-server-addr", grpc_addr]
    return out
