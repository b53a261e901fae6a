"""Know what sdnperf created, so `sdnperf clean` removes exactly that after a crash.

Three marks, each surviving a `kill -9` of the study process:
- every process sdnperf starts inherits SDNPERF_TAG in its environment (Mininet host
  shells, whose death removes their namespaces; OVS daemons; controllers; iperf ...);
- a registry file per network, written *before* the network is built, lists the
  interfaces and Linux bridges it will create in the root namespace (and one per private
  OVS with the userspace datapath: its `ovs-netdev` device);
- each run's directory (OVS database, logs) lives under RUN_ROOT.
Nothing named by `mn -c`-style guessing is touched: a user's own Mininet or OVS survives.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

TAG_ENV = "SDNPERF_TAG"
RUN_ROOT = Path(os.environ.get("SDNPERF_RUN_ROOT", "/run/sdnperf"))


def ensure_tag() -> str:
    """Tag this process (and so every child) for `clean`; returns the tag."""
    tag = os.environ.get(TAG_ENV)
    if not tag:
        tag = f"sdnperf-{os.getpid()}-{int(time.time())}"
        os.environ[TAG_ENV] = tag
    return tag


def run_root() -> Path:
    RUN_ROOT.mkdir(parents=True, exist_ok=True)
    return RUN_ROOT


@dataclass
class Registry:
    """What one network will create in the root namespace; a JSON file in its run dir."""

    path: Path
    interfaces: list[str] = field(default_factory=list)
    bridges: list[str] = field(default_factory=list)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "owner_pid": os.getpid(),
                    "tag": os.environ.get(TAG_ENV),
                    "interfaces": self.interfaces,
                    "bridges": self.bridges,
                }
            )
        )
        os.replace(tmp, self.path)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


def planned_names(mininet_topo) -> tuple[list[str], list[str]]:
    """Root-namespace interfaces and bridges a Mininet Topo will create (NODE-ethPORT).

    Only switch ends live in the root namespace; host ends die with their namespace."""
    switches = set(mininet_topo.switches())
    interfaces = []
    for a, b, info in mininet_topo.links(withInfo=True):
        interfaces += [
            f"{node}-eth{info[port]}"
            for node, port in ((a, "port1"), (b, "port2"))
            if node in switches
        ]
    return interfaces, sorted(switches)


# -- clean ---------------------------------------------------------------------------------
@dataclass
class CleanReport:
    processes: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    run_dirs: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.processes or self.interfaces or self.run_dirs)


def tagged_processes(exclude: set[int] | None = None) -> dict[int, str]:
    """PID -> command name of every process carrying an sdnperf tag."""
    exclude = exclude or set()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{TAG_ENV}=".encode() in environ:
            try:
                found[int(entry.name)] = (entry / "comm").read_text().strip()
            except OSError:
                pass
    return found


def _own_lineage() -> set[int]:
    """This process and its ancestors: `clean` run from a tagged shell must not kill itself."""
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _link_exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def orphaned_taps(names: list[str]) -> list[str]:
    """The persistent TAP devices among `names` that no process holds open: what a killed
    ovs-vswitchd with the userspace datapath leaves of its bridges (its run dir, which
    would name them to `clean`, may be gone). Nothing can send or receive on one, so it is
    no one's running network. A holder shows in /proc/PID/fdinfo as `iff: NAME` (of any
    namespace: a same-named TAP held elsewhere counts as held, the safe side)."""
    taps = [n for n in names if Path(f"/sys/class/net/{n}/tun_flags").exists()]
    if not taps:
        return []
    held = set()
    for info in Path("/proc").glob("[0-9]*/fdinfo/*"):
        try:
            text = info.read_text()
        except OSError:
            continue  # the process or the fd went away
        for line in text.splitlines():
            if line.startswith("iff:"):
                held.add(line.split(":", 1)[1].strip())
    return [n for n in taps if n not in held]


def clean(tag: str | None = None) -> CleanReport:
    """Remove every process, interface and run dir sdnperf left behind (all tags, or one)."""
    report = CleanReport()
    keep = _own_lineage()
    victims = {}
    for pid, comm in tagged_processes(keep).items():
        pid_tag = _tag_of(pid)
        if tag is not None and pid_tag != tag:
            continue
        owner = _tag_owner(pid_tag)
        if owner and owner not in keep and _pid_alive(owner):
            continue  # its study is still running: not a leftover
        victims[pid] = comm
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in list(victims):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in victims):
            time.sleep(0.05)
    report.processes = [f"{comm}({pid})" for pid, comm in sorted(victims.items())]
    if not RUN_ROOT.exists():
        return report
    for registry_file in sorted(RUN_ROOT.glob("**/registry.json")):
        try:
            data = json.loads(registry_file.read_text())
        except (OSError, ValueError):
            continue
        if tag is not None and data.get("tag") != tag:
            continue
        if _pid_alive(data.get("owner_pid")) and data.get("owner_pid") not in keep:
            continue  # a study still running: not a leftover
        for name in data.get("bridges", []) + data.get("interfaces", []):
            if _link_exists(name):
                subprocess.run(["ip", "link", "del", name], capture_output=True)
                report.interfaces.append(name)
        registry_file.unlink(missing_ok=True)
    for run_dir in sorted(p for p in RUN_ROOT.iterdir() if p.is_dir()):
        owner = _tag_owner(run_dir.name)
        if tag is not None and run_dir.name != tag:
            continue
        if owner and _pid_alive(owner) and owner not in keep:
            continue
        shutil.rmtree(run_dir, ignore_errors=True)
        report.run_dirs.append(str(run_dir))
    return report


def _tag_of(pid: int) -> str | None:
    try:
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if item.startswith(f"{TAG_ENV}=".encode()):
                return item.split(b"=", 1)[1].decode()
    except OSError:
        pass
    return None


def _pid_alive(pid) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _tag_owner(tag: str | None) -> int | None:
    """Tags (and run dirs) are named sdnperf-PID-TIME after the study process."""
    parts = (tag or "").split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None
