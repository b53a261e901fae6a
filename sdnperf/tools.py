"""Where our Rust binaries are: one search order for every caller (runs, `sdnperf doctor`,
`sdnperf p4c/switch/stf`, ctlbench), so what doctor reports is what a run starts.

For a binary `sdnperf-NAME` the first of these wins:
1. $SDNPERF_NAME_BIN (upper case, `-` -> `_`: SDNPERF_SWITCH_BIN, SDNPERF_SWITCH_GRPC_BIN,
   SDNPERF_P4C_BIN, SDNPERF_PROBE_BIN) pins one binary; it must exist.
2. $SDNPERF_BIN_DIR/sdnperf-NAME pins a folder of them (e.g. an installed set).
3. The newest rust/target*/release/sdnperf-NAME in this checkout (cargo's own target dir,
   or another CARGO_TARGET_DIR beside it).
4. PATH.

BMv2 (simple_switch, simple_switch_grpc, p4c-bm2-ss) is not ours: find_bmv2() is the one way
to find it, for runs (`target = "bmv2"`), `sdnperf doctor`, the tests and bench/, with one
variable, $SDNPERF_BMV2_DIR (see find_bmv2).
"""

from __future__ import annotations

import os
import shutil
import warnings
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


BMV2_ENV = "SDNPERF_BMV2_DIR"
# Deprecated spelling of BMV2_ENV (the reference bundle's folder), still read so that
# `SDNPERF_P4_REFERENCE=/work/shared/p4-reference` in existing worktree set-ups keeps working.
BMV2_ENV_DEPRECATED = "SDNPERF_P4_REFERENCE"
# The reference p4c/BMv2 bundle (a test oracle, never needed by a run): ../shared beside the
# checkout, or beside the folder holding it (a worktree in wt/NAME)
REFERENCE_BUNDLES = (
    REPO.parent / "shared" / "p4-reference",
    REPO.parents[1] / "shared" / "p4-reference",
)


def bmv2_dir(reference: bool = False) -> Path | None:
    """The folder BMv2 is taken from: $SDNPERF_BMV2_DIR, else (`reference`: the tests and
    bench/, never a run) the reference bundle beside the checkout when it is there."""
    pinned = os.environ.get(BMV2_ENV)
    if not pinned and os.environ.get(BMV2_ENV_DEPRECATED):
        warnings.warn(
            f"${BMV2_ENV_DEPRECATED} is deprecated: set ${BMV2_ENV}", DeprecationWarning, 2
        )
        pinned = os.environ[BMV2_ENV_DEPRECATED]
    if pinned:
        return Path(pinned)
    if reference:
        return next((d for d in REFERENCE_BUNDLES if (d / "bin").is_dir()), None)
    return None


def find_bmv2(binary: str, reference: bool = False) -> str | None:
    """BMv2's `binary` (simple_switch, simple_switch_grpc, p4c-bm2-ss), or None:
    1. $SDNPERF_BMV2_DIR pins a folder (its bin/, or the folder itself): only there;
    2. PATH;
    3. with `reference` (tests and bench/, never a run): the reference bundle beside the
       checkout (../shared/p4-reference)."""
    pinned = os.environ.get(BMV2_ENV) or os.environ.get(BMV2_ENV_DEPRECATED)
    folders = []
    if pinned:
        home = bmv2_dir()
        folders = [home / "bin", home] if home else []
    else:
        on_path = shutil.which(binary)
        if on_path:
            return on_path
        home = bmv2_dir(reference)
        folders = [home / "bin"] if home else []
    for folder in folders:
        candidate = folder / binary
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def bmv2_hint(binary: str, reference: bool = False) -> str:
    """Where find_bmv2 looked, for the error or skip reason when it found nothing."""
    if os.environ.get(BMV2_ENV) or os.environ.get(BMV2_ENV_DEPRECATED):
        return f"{binary} is not in ${BMV2_ENV} ({bmv2_dir()}/bin or the folder itself)"
    where = f"{binary} is not on PATH and ${BMV2_ENV} is not set"
    if reference:
        where += f", nor in the reference bundle ({' or '.join(map(str, REFERENCE_BUNDLES))})"
    return where
