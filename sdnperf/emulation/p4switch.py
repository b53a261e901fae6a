"""Our P4 software switch as a Mininet switch node: the one node class for P4 switches.

Loaded with a program (`sdnperf-switch run`, rust/switch):

    net = Mininet(topo=..., switch=partial(P4Switch, json_path="prog.json"), controller=None)

or empty, programmed by a P4Runtime controller on 127.0.0.1:grpc_port (`sdnperf-switch-grpc`,
rust/p4rt; the `p4` architecture, which also runs BMv2's `simple_switch_grpc` with
target="bmv2"):

    partial(P4Switch, grpc_port=50001, device_id=1, log_dir=run_dir)

Each switch process binds the node's interfaces as ports `-i N@IFACE` (N = Mininet port
number), listens for runtime control on a private Unix socket (`P4Switch.ctl(...)`), and
is started/stopped with the network. Optional per-port impairment (delay, jitter, loss,
rate) runs inside the switch, for kernels without sch_netem.

P4Runtime switches of our own may instead share one process (`SharedSwitchProcess`,
`sdnperf-switch-grpc --switch SPEC ...`): one data-plane thread serves all of them, each
keeping its own gRPC port, device id, pipeline and ctl socket.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import time
from pathlib import Path

from mininet.node import Switch

from sdnperf import tools
from sdnperf.processes import signal_process_group, stop_process_group

SWITCH = "sdnperf-switch"  # runs programs; its `ctl` talks to every switch of ours
UNIX_PATH_MAX = 100  # sun_path holds 108 bytes; keep a margin


class P4SwitchError(RuntimeError):
    pass


def grpc_port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def member_spec(device_id: int, grpc_port: int, ctl_socket: str, ports: dict[int, str]) -> str:
    """One switch's `--switch` value for a shared sdnperf-switch-grpc process."""
    for what, value in (("ctl socket", ctl_socket), *((f"port {n}", i) for n, i in ports.items())):
        if ";" in value or "," in value:
            raise P4SwitchError(f"device {device_id}: {what} {value!r} contains ';' or ','")
    listed = ",".join(f"{n}@{name}" for n, name in sorted(ports.items()))
    return f"device={device_id};grpc=127.0.0.1:{grpc_port};ctl={ctl_socket};ports={listed}"


class SharedSwitchProcess:
    """One `sdnperf-switch-grpc` process serving several P4Switch nodes. Switches join it
    when Mininet starts them; the process starts when the first one is waited for (every
    switch of the network has joined by then) and stops with the first one stopped (the
    network is going down)."""

    def __init__(self, binary: str, log_dir: str, extra_args: list[str] | None = None):
        self.binary = binary
        self.log_dir = Path(log_dir)
        self.log_path = self.log_dir / "p4-switches-shared.log"
        self.extra_args = list(extra_args or [])
        self.members: list[P4Switch] = []
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0

    def join(self, sw: P4Switch) -> None:
        if self.proc is not None:
            raise P4SwitchError(f"{sw.name}: the shared switch process is already running")
        self.members.append(sw)

    def argv(self) -> list[str]:
        cpu = {sw.cpu_port for sw in self.members}
        if len(cpu) != 1:
            raise P4SwitchError(f"switches of one shared process need one CPU port, not {cpu}")
        argv = [self.binary, "--cpu-port", str(cpu.pop()), "--die-with-parent", *self.extra_args]
        for sw in self.members:
            if sw.device_id is None or sw.grpc_port is None:  # P4Switch() refuses this already
                raise P4SwitchError(f"{sw.name}: a shared switch needs a device id and gRPC port")
            spec = member_spec(sw.device_id, sw.grpc_port, sw.ctl_socket, sw.port_names())
            argv += ["--switch", spec]
        return argv

    def ensure_started(self) -> subprocess.Popen:
        if self.proc is None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self.started_at = time.time()
            with open(self.log_path, "w") as log:
                self.proc = subprocess.Popen(
                    self.argv(),
                    stdout=log,
                    stderr=log,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        return self.proc

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL after 3 s (idempotent)."""
        p = self.proc
        if p is None or p.poll() is not None:
            return
        stop_process_group(p)


class P4Switch(Switch):
    """A Mininet switch running one P4 switch process.

    With json_path (a BMv2 JSON program, or .p4 compiled by the switch when built with
    `p4`): `sdnperf-switch run`, ready when it prints READY (start() waits for it).
      commands: control commands applied before the switch reports ready (table_add ...).
      impair: {port_number: "delay=5ms,jitter=1ms,loss=1%,rate=100mbit"}.
      vnet: carry TSO/GSO offloads through (PACKET_VNET_HDR); False needs offloads off.
    With grpc_port instead: the P4Runtime switch daemon `binary` with no program, device
    id `device_id` and CPU port `cpu_port` (target "sdnperf": sdnperf-switch-grpc; "bmv2":
    simple_switch_grpc, whose command line differs). With `shared` (a SharedSwitchProcess,
    target "sdnperf" only) the switch is one of that process's switches instead.
    start() only spawns it: Mininet starts switches one after another and the daemons come
    up in parallel; wait_listening() waits until its gRPC port accepts connections.
    """

    def __init__(
        self,
        name,
        json_path: str | None = None,
        commands: list[str] | None = None,
        impair: dict[int, str] | None = None,
        vnet: bool = True,
        cpu_port: int | None = None,
        grpc_port: int | None = None,
        device_id: int | None = None,
        target: str = "sdnperf",
        extra_args: list[str] | None = None,
        ready_timeout: float | None = None,
        binary: str | None = None,
        log_dir: str | None = None,
        thrift_port: int | None = None,
        shared: SharedSwitchProcess | None = None,
        **params,
    ):
        super().__init__(name, **params)
        if (json_path is None) == (grpc_port is None):
            raise P4SwitchError(
                f"{name}: P4Switch needs json_path (a program) or grpc_port (P4Runtime), not both"
            )
        if grpc_port is not None and (binary is None or cpu_port is None or device_id is None):
            raise P4SwitchError(f"{name}: a P4Runtime switch needs binary, device_id, cpu_port")
        if grpc_port is not None and target == "bmv2" and thrift_port is None:
            raise P4SwitchError(f"{name}: BMv2 needs its own thrift_port (9090 is everyone's)")
        if shared is not None and (grpc_port is None or target != "sdnperf"):
            raise P4SwitchError(f"{name}: only our P4Runtime switches share a process")
        self.shared = shared
        self.json_path = None if json_path is None else str(json_path)
        self.commands = list(commands or [])
        self.impair = dict(impair or {})
        self.vnet = vnet
        self.cpu_port = cpu_port
        self.grpc_port = None if grpc_port is None else int(grpc_port)
        self.device_id = None if device_id is None else int(device_id)
        self.target = target
        self.extra_args = list(extra_args or [])
        self.ready_timeout = ready_timeout or (10.0 if grpc_port is None else 20.0)
        self.binary = binary
        self.proc: subprocess.Popen | None = None
        self._started_at = 0.0
        if log_dir:
            self.log_dir = Path(log_dir)
            stem = f"p4-switch-{name}"
            socket_path = self.log_dir / f"{stem}.ctl"
        else:
            self.log_dir = Path("/tmp")
            stem = f"sdnperf-p4-{name}-{os.getpid()}"
            socket_path = self.log_dir / f"{stem}.sock"
        if len(str(socket_path)) > UNIX_PATH_MAX:  # a deep run dir: a short path instead
            socket_path = Path("/tmp") / f"sdnperf-{os.getpid()}-{name}.ctl"
        self.ctl_socket = str(socket_path)
        # BMv2 only: its Thrift runtime port and notifications
        # socket (a short path like the control socket's)
        self.thrift_port = thrift_port
        notifications = self.log_dir / f"{stem}-notifications.ipc"
        if len(str(notifications)) > UNIX_PATH_MAX:
            notifications = Path("/tmp") / f"sdnperf-{os.getpid()}-{name}-notifications.ipc"
        self.notifications_path = str(notifications)
        self.log_path = shared.log_path if shared else self.log_dir / f"{stem}.log"
        self.cmd_file = self.log_dir / f"{stem}.commands"

    @classmethod
    def setup(cls):
        pass

    def port_names(self) -> dict[int, str]:
        return {
            port: intf.name
            for port, intf in sorted(self.intfs.items())
            if intf.name != "lo" and not (port == 0 and intf.name.endswith("lo"))
        }

    def _binary(self, found: str | None) -> str:
        """The binary to start: the one given, else `found`; an error naming the switch."""
        binary = self.binary or found
        if binary is None:
            raise RuntimeError(
                f"{self.name}: no {self.target} switch binary (`sdnperf doctor` shows where "
                "sdnperf looks for it)"
            )
        return binary

    def argv(self) -> list[str]:
        ifaces = [x for port, name in self.port_names().items() for x in ("-i", f"{port}@{name}")]
        if self.grpc_port is None:
            if self.json_path is None:  # only P4Runtime loads a program later
                raise RuntimeError(f"{self.name}: a switch without a gRPC port needs json_path")
            argv = [
                self.binary or tools.find(SWITCH),
                "run",
                "--json",
                self.json_path,
                "--ctl-socket",
                self.ctl_socket,
                "--die-with-parent",
                *ifaces,
            ]
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
        if self.target == "bmv2":
            # Per switch, as p4-utils does: BMv2's Thrift server and its nanomsg
            # notifications socket otherwise take fixed defaults (port 9090,
            # ipc:///tmp/bmv2-<device-id>-notifications.ipc), so a second switch fails.
            return [
                self._binary(None),
                "--device-id",
                str(self.device_id),
                *ifaces,
                "--thrift-port",
                str(self.thrift_port),
                "--notifications-addr",
                f"ipc://{self.notifications_path}",
                "--no-p4",
                *self.extra_args,
                "--",
                "--grpc-server-addr",
                f"127.0.0.1:{self.grpc_port}",
                "--cpu-port",
                str(self.cpu_port),
            ]
        return [
            self._binary(None),
            *ifaces,
            "--grpc-port",
            str(self.grpc_port),
            "--device-id",
            str(self.device_id),
            "--cpu-port",
            str(self.cpu_port),
            "--ctl-socket",
            self.ctl_socket,
            "--die-with-parent",
            *self.extra_args,
        ]

    def start(self, controllers):
        if self.proc is not None:
            return
        ups = [f"ip link set dev {i.name} up" for i in self.intfList() if i.name != "lo"]
        if ups:  # one shell round trip for all ports
            self.cmd("; ".join(ups))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._started_at = time.time()
        if self.shared is not None:  # the process starts when a switch is waited for
            self.shared.join(self)
            return
        with open(self.log_path, "w") as log:
            # A program switch says READY on stdout; a P4Runtime one logs everything.
            stdout = subprocess.PIPE if self.grpc_port is None else log
            self.proc = subprocess.Popen(
                self.argv(),
                stdout=stdout,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self._started_at = time.time()
        if self.grpc_port is None:
            self._wait_ready_line()

    def _wait_ready_line(self) -> None:
        proc = self.proc
        if proc is None or proc.stdout is None:  # start() spawned it with stdout=PIPE
            raise P4SwitchError(f"{self.name}: no switch process to wait for")
        deadline = self._started_at + self.ready_timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                break
            r, _, _ = select.select([proc.stdout], [], [], 0.1)
            if r and proc.stdout.readline().strip() == b"READY":
                return
        self._fail("did not become ready")

    def wait_listening(self) -> None:
        """Block until a P4Runtime switch's gRPC port accepts connections."""
        port = self.grpc_port
        if port is None:
            raise P4SwitchError(f"{self.name}: a program switch has no gRPC port to wait for")
        started = self._started_at
        if self.shared is not None:
            self.proc = self.shared.ensure_started()
            started = max(started, self.shared.started_at)
        deadline = started + self.ready_timeout
        while time.time() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                break
            if grpc_port_open(port):
                return
            time.sleep(0.05)
        self._fail(f"did not open gRPC port {port}")

    def _fail(self, what: str):
        err = self.log_path.read_text()[-2000:] if self.log_path.exists() else ""
        argv0 = Path(self.argv()[0]).name
        self._kill()
        raise P4SwitchError(f"{self.name}: {argv0} {what}: {err.strip()}")

    def ctl(self, *commands: str) -> str:
        """Runs control commands on our switch's socket (simple_switch_CLI-like:
        table_add, port_impair, table_dump, ...); returns their output."""
        # a P4Runtime switch's `binary` is its daemon; `sdnperf-switch ctl` talks to both
        ctl_binary = self.binary if self.grpc_port is None and self.binary else tools.find(SWITCH)
        r = subprocess.run(
            [ctl_binary, "ctl", self.ctl_socket, "-f", "/dev/stdin"],
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=10,
        )
        if r.returncode != 0:
            raise P4SwitchError(f"{self.name}: ctl {commands}: {r.stderr.strip()}")
        return r.stdout

    def _kill(self):
        """SIGTERM to the switch's process group, SIGKILL after 3 s (a shared process: all
        of its switches stop with the first one)."""
        p = self.proc
        if self.shared is not None:
            self.shared.stop()
            p = None
        if p is None:
            self.proc = None
            Path(self.ctl_socket).unlink(missing_ok=True)
            return
        if p.poll() is None:
            stop_process_group(p)
        if p.stdout:
            p.stdout.close()
        self.proc = None
        for f in (self.ctl_socket, self.cmd_file, self.notifications_path):
            Path(f).unlink(missing_ok=True)

    def stop(self, deleteIntfs=True):
        self._kill()
        super().stop(deleteIntfs)

    def signal_stop(self) -> None:
        """SIGTERM to the switch's process group, without waiting for it to exit."""
        p = self.shared.proc if self.shared is not None else self.proc
        if p is not None:
            signal_process_group(p)

    @classmethod
    def batchShutdown(cls, switches) -> list:
        """Mininet's stop calls this before stopping the switches one after another: every
        switch process is told to stop at once, so their exits (each closing its ports'
        sockets in the kernel) overlap instead of adding up. Returns no switch: each one's
        stop() still waits for its own process and removes its files."""
        for sw in switches:
            sw.signal_stop()
        return []

    @property
    def switch_pid(self) -> int | None:
        """The switch process (for CPU sampling), None when not running.
        (Mininet's own `pid` is the node's shell.)"""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def connected(self):
        return self.proc is not None and self.proc.poll() is None
