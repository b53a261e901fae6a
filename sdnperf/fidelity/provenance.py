"""What produced a study's numbers, stored with the study and shown in the report.

The study file (text and SHA-256), sdnperf's version and git commit, a hash of every P4
program sdnperf ships and of every file an architecture's configuration names (runtime
files, programs), tool versions and kernel features (from the environment record), the
run order, the host name. Like the environment, it never raises: what cannot be found is
None.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import time
from pathlib import Path

from sdnperf.emulation.ovs import USERSPACE_OTHER_CONFIG
from sdnperf.fidelity.calibration import load_calibration
from sdnperf.p4 import PROGRAM_DIR

PACKAGE_DIR = Path(__file__).resolve().parents[1]
# Environment keys that describe tools and kernel features (copied into the provenance
# so one record says what ran).
TOOL_KEYS = (
    "openvswitch",
    "iperf3",
    "iperf",
    "ping",
    "tc",
    "mininet",
    "os_ken",
    "faucet",
    "python",
)
KERNEL_KEYS = ("kernel", "netem", "netem_detail", "ovs_kernel_module", "datapath")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def git_commit(folder: Path = PACKAGE_DIR) -> dict:
    """{"commit": sha or None, "dirty": bool or None} of the checkout sdnperf runs from."""

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=5
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def named_files(config: object, base_dirs: list[Path]) -> dict[str, str | None]:
    """Every existing file (or the files of a folder) that a string in `config` names,
    relative to one of `base_dirs` or absolute -> its SHA-256. Generic on purpose: a new
    architecture field that names a program or runtime file is covered without a change."""
    found: dict[str, str | None] = {}

    def visit(value) -> None:
        if isinstance(value, dict):
            for v in value.values():
                visit(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v)
        elif isinstance(value, str) and ("/" in value or "." in value) and len(value) < 4096:
            for base in base_dirs:
                path = (base / value) if not Path(value).is_absolute() else Path(value)
                try:
                    if path.is_file():
                        found[str(path)] = sha256_file(path)
                    elif path.is_dir():
                        for f in sorted(p for p in path.rglob("*") if p.is_file())[:500]:
                            found[str(f)] = sha256_file(f)
                    else:
                        continue
                except OSError:
                    continue
                break

    visit(config)
    return found


def collect_provenance(study, plan, environment: dict) -> dict:
    """The provenance record of a study about to run (`study`: a LoadedStudy, `plan`: its
    RunSpecs in execution order)."""
    try:
        version = importlib.metadata.version("sdnperf")
    except importlib.metadata.PackageNotFoundError:
        version = None
    architectures = [a for a in study.raw.get("architecture", []) if isinstance(a, dict)]
    return {
        "recorded": time.time(),
        "study_file": study.path,
        "study_text": study.text,
        "study_sha256": sha256_text(study.text),
        "sdnperf_version": version,
        "git": git_commit(),
        "p4_programs": {p.name: sha256_file(p) for p in sorted(PROGRAM_DIR.glob("*.p4"))},
        "architecture_files": named_files(architectures, [Path(study.base_dir), Path.cwd()]),
        "tools": {k: environment.get(k) for k in TOOL_KEYS},
        "kernel": {k: environment.get(k) for k in KERNEL_KEYS},
        # what OVS architectures set on the userspace datapath (emulation/ovs.py)
        "ovs_userspace_other_config": dict(USERSPACE_OTHER_CONFIG),
        "hostname": platform.node(),
        # what `sdnperf calibrate` last measured of configured links on this host
        "calibration": load_calibration(),
        "run_order": {
            "order": study.config.study.order,
            "seed": study.config.study.seed,
            "keys": [r.key for r in plan],
        },
    }
