"""Every node checks itself before a study starts; the driver compares what they report.

`node_facts` runs on a node (inside its Ray actor): sdnperf's version and a digest of its
code and binaries, tool versions and kernel features (fidelity.environment.collect), which
doctor capabilities are present, and whether sdnperf's own preflight accepts the study
there. `compare_nodes` (pure) turns the facts of all nodes into refusals, differences
and warnings:
- refused: the node cannot run the study at all (the reason is the local preflight's);
- differences: software that shapes the measurements differs between nodes (sdnperf,
  its binaries, Python, Mininet, OVS, controllers, traffic tools, kernel features): the
  study does not start on such a mixed cluster unless `--allow-mixed`;
- warnings: hardware and kernel differ; blocking keeps each comparison on one node, and the
  report checks whether the node explains variance.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sdnperf import tools

# Facts that must agree on every node (from fidelity.environment.collect plus our own).
MUST_AGREE = (
    "sdnperf",
    "code",
    "binaries",
    "python",
    "ray",
    "mininet",
    "os_ken",
    "faucet",
    "openvswitch",
    "iperf3",
    "iperf",
    "ping",
    "tc",
    "netem",
    "ovs_kernel_module",
    "capabilities",
)
# Facts that may differ (with a warning): the machine itself.
HARDWARE = ("kernel", "distro", "cpu_model", "cpu_cores", "memory_mb")
CODE_SUFFIXES = (".py", ".p4", ".toml", ".json", ".html")


@dataclass
class Verdict:
    refused: dict[str, str] = field(default_factory=dict)  # node -> why it cannot run the study
    differences: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def mixed(self) -> bool:
        return bool(self.refused or self.differences)


def compare_nodes(facts: dict[str, dict]) -> Verdict:
    """Compare nodes' facts. Each fact is judged against the value most nodes have (ties:
    the first node's), so the message names the odd node out."""
    verdict = Verdict()
    for node, f in facts.items():
        if f.get("refusal"):
            verdict.refused[node] = f["refusal"]
    for name in MUST_AGREE + HARDWARE:
        values = {node: f.get(name) for node, f in facts.items()}
        if len({_hashable(v) for v in values.values()}) <= 1:
            continue
        common = _most_common(list(values.values()))
        for node, value in values.items():
            if _hashable(value) != _hashable(common):
                text = f"node {node}: {name} {_describe(name, value, common)}"
                (verdict.differences if name in MUST_AGREE else verdict.warnings).append(text)
    return verdict


def _describe(name: str, value, common) -> str:
    if isinstance(value, dict) and isinstance(common, dict):
        parts = [
            f"{k}: {value.get(k)!r} where the others have {common.get(k)!r}"
            for k in sorted(set(value) | set(common))
            if value.get(k) != common.get(k)
        ]
        return "; ".join(parts)
    return f"is {value!r}, the other nodes have {common!r}"


def _hashable(value):
    return repr(sorted(value.items())) if isinstance(value, dict) else repr(value)


def _most_common(values: list):
    counts = Counter(_hashable(v) for v in values)
    best = max(counts.values())
    return next(v for v in values if counts[_hashable(v)] == best)


# -- on the node ---------------------------------------------------------------------------
def node_facts(study) -> dict:
    """What this node is and whether it can run the study (never raises)."""
    import socket

    from sdnperf.fidelity.environment import collect  # lazy: pulls in psutil, wanted only here

    facts = collect()
    facts["host"] = socket.gethostname()
    facts["boot_id"] = _read("/proc/sys/kernel/random/boot_id")
    facts["code"] = code_digest()
    facts["binaries"] = binaries_digest()
    facts["capabilities"] = capabilities_present()
    try:
        import ray

        facts["ray"] = ray.__version__
    except ImportError:
        facts["ray"] = None
    facts["refusal"] = refusal(study)
    return facts


def refusal(study) -> str | None:
    """sdnperf's own preflight on this node: None when it accepts every run study."""
    # lazy: pulls in networkx, psutil, pydantic, sqlite3, yaml, wanted only here
    from sdnperf.runner import StudyRefused, plan_of, preflight

    studies = list(
        {
            id(s): s for s in (getattr(r, "study", None) for r in plan_of(study)) if s is not None
        }.values()
    ) or [study]
    try:
        for one in studies:
            preflight(one)
    except StudyRefused as exc:
        return str(exc)
    return None


def code_digest() -> str:
    """SHA-256 over sdnperf's own source files: two nodes with the same version number but
    different code would measure different things."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def binaries_digest() -> dict[str, str | None]:
    """SHA-256 of our Rust tools (None: not built on this node)."""
    from sdnperf.arch.p4 import GRPC_DAEMON  # lazy: pulls in networkx, pydantic, wanted only here

    paths = {name: tools.locate(name) for name in ("sdnperf-p4c", "sdnperf-switch", GRPC_DAEMON)}
    out = {}
    for name, path in paths.items():
        out[name] = _file_digest(Path(path)) if path else None
    return out


def capabilities_present() -> dict[str, bool]:
    from sdnperf.doctor import checks  # lazy: pulls in rich, wanted only here

    return {cap.name: cap.ok for cap, _ in checks()}


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None
