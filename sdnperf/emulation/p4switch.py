"""Our P4 software switch (`sdnperf-switch`, rust/switch) as a Mininet switch node.

    net = Mininet(topo=..., switch=partial(P4Switch, json_path="prog.json"), controller=None)

Each switch process binds the node's interfaces as ports `-i N@IFACE` (N = Mininet port
number), listens for runtime control on a private Unix socket (`P4Switch.ctl(...)`), and
is started/stopped with the network. Optional per-port impairment (delay, jitter, loss,
rate) runs inside the switch, for kernels without sch_netem.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

from mininet.node import Switch

REPO = Path(__file__).resolve().parents[2]


class P4SwitchError(RuntimeError):
    pass


def find_binary() -> str:
    """SDNPERF_SWITCH_BIN, then PATH, then the workspace's release builds."""
    env = os.environ.get("SDNPERF_SWITCH_BIN")
    if env:
        return env
    found = shutil.which("sdnperf-switch")
    if found:
        return found
    cands = [REPO / "rust" / d / "release" / "sdnperf-switch" for d in ("target", "target-switch")]
    cands = [c for c in cands if c.exists()]
    if cands:  # the most recently built one
        return str(max(cands, key=lambda c: c.stat().st_mtime))
    raise P4SwitchError("sdnperf-switch not found: build it with `cd rust && cargo build --release` "
                        "or set SDNPERF_SWITCH_BIN")


class P4Switch(Switch):
    """A Mininet switch running `sdnperf-switch run`.

    json_path: BMv2 JSON program (or .p4, compiled by the switch when built with `p4`).
    commands: control commands applied before the switch reports ready (table_add ...).
    impair: {port_number: "delay=5ms,jitter=1ms,loss=1%,rate=100mbit"}.
    vnet: carry TSO/GSO offloads through (PACKET_VNET_HDR); False needs offloads off.
    """

    def __init__(self, name, json_path: str | None = None, commands: list[str] | None = None,
                 impair: dict[int, str] | None = None, vnet: bool = True, cpu_port: int | None = None,
                 ready_timeout: float = 10.0, binary: str | None = None, log_dir: str | None = None,
                 **params):
        super().__init__(name, **params)
        if json_path is None:
            raise P4SwitchError(f"{name}: P4Switch needs json_path")
        self.json_path = str(json_path)
        self.commands = list(commands or [])
        self.impair = dict(impair or {})
        self.vnet = vnet
        self.cpu_port = cpu_port
        self.ready_timeout = ready_timeout
        self.binary = binary
        self.log_dir = Path(log_dir) if log_dir else Path("/tmp")
        self.proc: subprocess.Popen | None = None
        self.ctl_socket = f"/tmp/sdnperf-p4-{name}-{os.getpid()}.sock"
        self.log_path = self.log_dir / f"sdnperf-p4-{name}-{os.getpid()}.log"
        self.cmd_file = self.log_dir / f"sdnperf-p4-{name}-{os.getpid()}.commands"

    @classmethod
    def setup(cls):
        pass

    def argv(self) -> list[str]:
        argv = [self.binary or find_binary(), "run", "--json", self.json_path,
                "--ctl-socket", self.ctl_socket, "--die-with-parent"]
        for port, intf in sorted(self.intfs.items()):
            if intf.name == "lo" or port == 0 and intf.name.endswith("lo"):
                continue
            argv += ["-i", f"{port}@{intf.name}"]
        for port, spec in sorted(self.impair.items()):
            argv += ["--impair", f"{port}:{spec}"]
        if not self.vnet:
            argv.append("--no-vnet")
        if self.cpu_port is not None:
            argv += ["--cpu-port", str(self.cpu_port)]
        if self.commands:
            self.cmd_file.write_text("\n".join(self.commands) + "\n")
            argv += ["--commands", str(self.cmd_file)]
        return argv

    def start(self, controllers):
        if self.proc is not None:
            return
        for intf in self.intfList():
            if intf.name != "lo":
                self.cmd(f"ip link set dev {intf.name} up")
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=log,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.time() + self.ready_timeout
        line = b""
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            r, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if r:
                line = self.proc.stdout.readline()
                if line.strip() == b"READY":
                    return
        err = self.log_path.read_text()[-2000:] if self.log_path.exists() else ""
        self._kill()
        raise P4SwitchError(f"{self.name}: sdnperf-switch did not become ready: {err.strip()}")

    def ctl(self, *commands: str) -> str:
        """Runs control commands (simple_switch_CLI-like); returns their output."""
        r = subprocess.run([self.binary or find_binary(), "ctl", self.ctl_socket, "-f", "/dev/stdin"],
                           input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=10)
        if r.returncode != 0:
            raise P4SwitchError(f"{self.name}: ctl {commands}: {r.stderr.strip()}")
        return r.stdout

    def _kill(self):
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=3)
        if p.stdout:
            p.stdout.close()
        self.proc = None
        for f in (self.ctl_socket, self.cmd_file):
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass

    def stop(self, deleteIntfs=True):
        self._kill()
        super().stop(deleteIntfs)

    @property
    def switch_pid(self) -> int | None:
        """The sdnperf-switch process (for CPU sampling), None when not running.
        (Mininet's own `pid` is the node's shell.)"""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def connected(self):
        return self.proc is not None and self.proc.poll() is None
