"""Where our Rust binaries are: one search order for every caller (runs, `sdnperf doctor`,
`sdnperf p4c/switch/stf`, ctlbench), so what doctor reports is what a run starts.

For a binary `sdnperf-NAME` the first of these wins:
1. $SDNPERF_NAME_BIN (upper case, `-` -> `_`: SDNPERF_SWITCH_BIN, SDNPERF_SWITCH_GRPC_BIN,
   SDNPERF_P4C_BIN, SDNPERF_PROBE_BIN) pins one binary; it must exist.
2. $SDNPERF_BIN_DIR/sdnperf-NAME pins a folder of them (e.g. an installed set).
3. The newest rust/target*/release/sdnperf-NAME in this checkout (cargo's own target dir,
   or another CARGO_TARGET_DIR beside it).
4. PATH.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# binary -> cargo package that builds it, for the hint when it is missing
PACKAGES = {
    "sdnperf-p4c": "sdnperf-p4c",
    "sdnperf-switch": "sdnperf-switch",
    "sdnperf-switch-grpc": "sdnperf-p4rt",
    "sdnperf-p4rt-bench": "sdnperf-p4rt",
    "sdnperf-probe": "sdnperf-probe",
}


class ToolNotFound(RuntimeError):
    """One of our Rust binaries is not built (or a variable points at nothing)."""


def env_var(binary: str) -> str:
    """The variable that pins `binary`: sdnperf-switch-grpc -> SDNPERF_SWITCH_GRPC_BIN."""
    return "SDNPERF_" + binary.removeprefix("sdnperf-").upper().replace("-", "_") + "_BIN"


def build_hint(binary: str) -> str:
    package = PACKAGES.get(binary, binary)
    return (
        f"build it with `cd rust && cargo build --release -p {package}` (scripts/install.sh "
        f"builds all), or set {env_var(binary)} to its path"
    )


def find(binary: str) -> str:
    """The path of `binary` (see the module's search order); ToolNotFound if missing."""
    pinned = os.environ.get(env_var(binary))
    if pinned:
        if not Path(pinned).is_file():
            raise ToolNotFound(f"{env_var(binary)}={pinned}: no such file")
        return pinned
    if os.environ.get("SDNPERF_BIN_DIR"):
        in_dir = Path(os.environ["SDNPERF_BIN_DIR"]) / binary
        if in_dir.is_file():
            return str(in_dir)
    built = [p for p in REPO.glob(f"rust/target*/release/{binary}") if p.is_file()]
    if built:
        return str(max(built, key=lambda p: p.stat().st_mtime))
    on_path = shutil.which(binary)
    if on_path:
        return on_path
    raise ToolNotFound(f"{binary} not found: {build_hint(binary)}")


def locate(binary: str) -> str | None:
    """find(), or None when it is not there."""
    try:
        return find(binary)
    except ToolNotFound:
        return None
