"""BMv2 for the bench/switch scripts: where simple_switch(_grpc) and p4c-bm2-ss are, and
l1_fwd.p4 compiled for them (BMv2 refuses our gen.py JSON, so it runs p4c's of the same
program).

The binaries are found by sdnperf.tools.find_bmv2 (reference=True): $SDNPERF_BMV2_DIR (its
bin/ or itself), PATH, then the reference bundle ../shared/p4-reference beside the checkout
(the callers put the checkout on sys.path first)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sdnperf import tools

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
L1_FWD_P4 = HERE / "l1_fwd.p4"


def compile_l1_fwd(out_dir: Path) -> Path:
    """p4c-bm2-ss's JSON of l1_fwd.p4 in out_dir; RuntimeError naming the problem."""
    found = tools.find_bmv2("p4c-bm2-ss", reference=True)
    if found is None:
        raise RuntimeError(tools.bmv2_hint("p4c-bm2-ss", reference=True))
    p4c = Path(found)
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
