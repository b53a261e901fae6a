"""`p4`: P4 switches controlled over P4Runtime by sdnperf's controller.

Each switch runs our P4Runtime switch daemon (`sdnperf-switch-grpc`, rust/p4rt; like
BMv2's `simple_switch_grpc`) bound to 127.0.0.1 on its own gRPC port, with device id = the
switch's number (s3 -> 3) and CPU port 255; `target = "bmv2"` runs `simple_switch_grpc`
instead, when it is on PATH. The switches start without a program: the controller
(sdnperf/controllers/p4rt, started once Mininet has numbered the ports) connects to every
one, becomes primary, pushes the pipeline (`program`, a program shipped in sdnperf/p4/ —
l2l3.p4 by default — compiled by our compiler on first use, or the program named in the
runtime files), writes the program's run-time `params` (sdnperf/p4/catalog.py) and runs its
app:

    l2-learning      reactive MAC learning, floods (loop-free topologies only)
    topo-forwarding  LLDP discovery, shortest paths, entries along the whole path
    proactive        every host's entries on every switch before traffic starts
    runtime-json     the P4 tutorials' sN-runtime.json files from `runtime_dir`
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from sdnperf.arch.base import Architecture, ArchitectureError, wait_until
from sdnperf.controllers import process
from sdnperf.topo.spec import TopoSpec

CPU_PORT = 255
_WARNED: list = []  # the shaping caveat is printed once per process
GRPC_DAEMON = "sdnperf-switch-grpc"
BMV2_DAEMON = "simple_switch_grpc"


UNIX_PATH_MAX = 100  # sun_path holds 108 bytes; keep a margin


def find_grpc_daemon() -> str | None:
    from sdnperf.p4 import P4ProgramError, find_tool
    try:
        return find_tool(GRPC_DAEMON, "SDNPERF_SWITCH_GRPC_BIN")
    except P4ProgramError:
        return None


def _grpc_port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def device_id_for(name: str, fallback: int) -> int:
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else fallback


def switch_class():
    """P4RuntimeSwitch, defined lazily: Mininet imports only where it is installed.

    It is a Mininet Switch of its own (not a P4Switch subclass) so that changes to
    emulation/p4switch.py, which runs the switch without P4Runtime, cannot break it."""
    from mininet.node import Switch

    class P4RuntimeSwitchError(RuntimeError):
        pass

    class P4RuntimeSwitch(Switch):
        """A Mininet switch running a P4Runtime switch daemon on 127.0.0.1:grpc_port.

        Ready when the gRPC port accepts connections; stopped (SIGTERM to its process
        group, then SIGKILL) with the network, and `--die-with-parent` for our daemon."""

        def __init__(self, name, grpc_port: int, device_id: int, target: str = "sdnperf",
                     binary: str | None = None, log_dir: str | None = None,
                     ready_timeout: float = 20.0, extra_args: list[str] | None = None, **params):
            super().__init__(name, **params)
            self.grpc_port, self.device_id, self.target = int(grpc_port), int(device_id), target
            self.binary, self.ready_timeout = binary, ready_timeout
            self.extra_args = list(extra_args or [])
            self.log_dir = Path(log_dir) if log_dir else Path("/tmp")
            self.log_path = self.log_dir / f"p4rt-switch-{name}.log"
            socket_path = self.log_dir / f"p4rt-{name}.ctl"
            if len(str(socket_path)) > UNIX_PATH_MAX:  # a deep run dir: a short path instead
                socket_path = Path("/tmp") / f"sdnperf-{os.getpid()}-{name}-{grpc_port}.ctl"
            self.ctl_socket = str(socket_path)
            self.proc: subprocess.Popen | None = None
            self.before_stop = None  # set by the architecture: stops the controller first

        @classmethod
        def setup(cls):
            pass

        def port_names(self) -> dict[int, str]:
            return {port: intf.name for port, intf in sorted(self.intfs.items())
                    if intf.name != "lo" and not (port == 0 and intf.name.endswith("lo"))}

        def argv(self) -> list[str]:
            ifaces = [x for port, name in self.port_names().items() for x in ("-i", f"{port}@{name}")]
            if self.target == "bmv2":
                return [self.binary or BMV2_DAEMON, "--device-id", str(self.device_id), *ifaces,
                        "--no-p4", *self.extra_args, "--",
                        "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}",
                        "--cpu-port", str(CPU_PORT)]
            return [self.binary or find_grpc_daemon() or GRPC_DAEMON, *ifaces,
                    "--grpc-port", str(self.grpc_port), "--device-id", str(self.device_id),
                    "--cpu-port", str(CPU_PORT), "--ctl-socket", self.ctl_socket,
                    "--die-with-parent", *self.extra_args]

        def start(self, controllers):
            # Only spawn here: Mininet starts switches one after another, and the daemons
            # come up in parallel while the others spawn; wait_listening() waits for them.
            if self.proc is not None:
                return
            for intf in self.intfList():
                if intf.name != "lo":
                    self.cmd(f"ip link set dev {intf.name} up")
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_path, "w")
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()
            self._started_at = time.time()

        def wait_listening(self):
            deadline = self._started_at + self.ready_timeout
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    break
                if _grpc_port_open(self.grpc_port):
                    return
                time.sleep(0.05)
            err = self.log_path.read_text()[-2000:] if self.log_path.exists() else ""
            argv0 = Path(self.argv()[0]).name
            self._kill()
            raise P4RuntimeSwitchError(f"{self.name}: {argv0} did not open gRPC port "
                                       f"{self.grpc_port}: {err.strip()}")

        def ctl(self, *commands: str) -> str:
            """Control commands on our daemon's socket (port_impair, table_dump, ...)."""
            from sdnperf.p4 import find_tool
            r = subprocess.run([find_tool("sdnperf-switch", "SDNPERF_SWITCH_BIN"), "ctl",
                                self.ctl_socket, "-f", "/dev/stdin"],
                               input="\n".join(commands) + "\n", capture_output=True, text=True,
                               timeout=10)
            if r.returncode != 0:
                raise P4RuntimeSwitchError(f"{self.name}: ctl {commands}: {r.stderr.strip()}")
            return r.stdout

        def daemon_pid(self) -> int | None:
            return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

        def _kill(self):
            p = self.proc
            if p is None:
                return
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=1)
                except ProcessLookupError:
                    pass
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=3)
            self.proc = None
            Path(self.ctl_socket).unlink(missing_ok=True)

        def stop(self, deleteIntfs=True):
            if self.before_stop is not None:
                # An open P4Runtime stream holds a daemon's graceful shutdown: the
                # controller goes first (the runner stops the network before the arch).
                self.before_stop()
            self._kill()
            super().stop(deleteIntfs)

        def connected(self):
            return self.proc is not None and self.proc.poll() is None

    return P4RuntimeSwitch


class P4Architecture(Architecture):
    @classmethod
    def controller_sees_packets(cls, config) -> bool:
        return config.app in ("l2-learning", "topo-forwarding")  # the reactive apps

    @classmethod
    def impairs_links_itself(cls, config) -> bool:
        # our switch impairs its ports in both directions; simple_switch relies on tc
        return config.target == "sdnperf"

    def check(self, spec: TopoSpec) -> None:
        cfg = self.config
        if cfg.app == "l2-learning" and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: app l2-learning floods unknown destinations and "
                f"topology {spec.name!r} has loops (broadcast storm); use app = "
                "\"topo-forwarding\" or \"proactive\"")
        if cfg.app == "runtime-json":
            from sdnperf.controllers.p4rt import runtime_json
            if not cfg.runtime_dir:
                raise ArchitectureError(f"architecture {cfg.name!r}: app = \"runtime-json\" "
                                        "needs runtime_dir (a folder of sN-runtime.json files)")
            try:
                files = runtime_json.files_for(Path(cfg.runtime_dir), spec.switches())
                for path in files.values():
                    runtime_json.load(path)
            except runtime_json.RuntimeFileError as exc:
                raise ArchitectureError(f"architecture {cfg.name!r}: {exc}") from None
        if cfg.target == "bmv2" and not shutil.which(BMV2_DAEMON):
            raise ArchitectureError(
                f"architecture {cfg.name!r}: target = \"bmv2\" needs {BMV2_DAEMON} on PATH "
                "(BMv2 built with P4Runtime support); it is not installed here. Use target = "
                "\"sdnperf\" (our switch) instead")
        if cfg.target == "sdnperf" and spec.needs_netem():
            # without sch_netem only the switch's ports delay/drop: a link with no switch
            # end (a custom Topo's host-host link) would silently keep neither
            from sdnperf.emulation import capabilities
            bare = [f"{x.node1}-{x.node2}" for x in spec.links()
                    if (x.delay_ms or x.loss_pct) and spec.is_host(x.node1) and spec.is_host(x.node2)]
            if bare and not capabilities.netem().ok:
                raise ArchitectureError(
                    f"architecture {cfg.name!r}: link(s) {', '.join(bare[:5])} set delay/loss "
                    "but join two hosts: without sch_netem only a switch port can impair a link")
        if cfg.target == "sdnperf" and find_grpc_daemon() is None:
            raise ArchitectureError(
                f"architecture {cfg.name!r}: {GRPC_DAEMON} (our P4Runtime switch, rust/p4rt) "
                "is not built: `cd rust && cargo build --release -p sdnperf-p4rt`")

    def shaping_caveat(self, spec: TopoSpec) -> str | None:
        """Our switch sends with PACKET_QDISC_BYPASS (rust/switch ports/afpacket.rs), so tc
        qdiscs on its ports (Mininet's htb/netem) do not act on what it transmits."""
        if self.config.target == "sdnperf" and (spec.needs_tc() or spec.needs_netem()):
            return ("our P4 switch sends with PACKET_QDISC_BYPASS, so tc on its own ports is "
                    "skipped; link bandwidth/delay/loss are applied there by the switch's own "
                    "port impairment (port_impair), tc still shapes what hosts send (without "
                    "sch_netem the switch port's ingress delays/drops what hosts send)")
        return None

    def impair_switch_ports(self, net, kernel_netem: bool) -> dict[str, dict[int, str]]:
        """Each switch port gets its link's bw/delay/loss as port impairment, so every
        direction of every link is shaped once, as Mininet's TCLink does with tc (which
        puts the link's netem/htb on both interface ends, each acting on what its end
        sends: one delay per direction). The switch's egress stands for its own end; a
        switch-switch link has a switch at both ends. A host's end is tc in the host
        (htb for bw; netem for delay/loss where the kernel has it); without sch_netem the
        switch port's ingress takes the host end's delay/loss instead (direction=in)."""
        graph, done = self.spec.graph, {}
        names = {sw.name for sw in net.switches}
        for link in net.links:
            for intf, other in ((link.intf1, link.intf2), (link.intf2, link.intf1)):
                node = intf.node
                if node.name not in names or not graph.has_edge(node.name, other.node.name):
                    continue
                attrs = graph.edges[node.name, other.node.name]
                parts = []
                if attrs.get("bw"):
                    parts.append(f"rate={float(attrs['bw']):g}mbit")
                if attrs.get("delay_ms"):
                    parts.append(f"delay={float(attrs['delay_ms']):g}ms")
                if attrs.get("loss_pct"):
                    parts.append(f"loss={float(attrs['loss_pct']):g}%")
                port = node.ports[intf]
                if parts:
                    spec = ",".join(parts)
                    node.ctl(f"port_impair {port} direction=out {spec}{self._seed(node, port, 0)}")
                    done.setdefault(node.name, {})[port] = spec
                host_end = [p for p in parts if not p.startswith("rate=")]
                if other.node.name not in names and not kernel_netem and host_end:
                    spec = ",".join(host_end)
                    node.ctl(f"port_impair {port} direction=in {spec}{self._seed(node, port, 1)}")
                    done.setdefault(node.name, {})[f"{port}-in"] = spec
        return done

    def _seed(self, node, port: int, side: int) -> str:
        """The loss seed of one port side: from the run's seed, distinct per switch, port
        and direction (the switch mixes it), so repetitions differ and reruns repeat."""
        device = getattr(node, "device_id", 0)
        return f",seed={(self.seed * 4_000_037 + device * 1_031 + port * 2 + side) % 2**63}"

    def prepare(self, spec: TopoSpec) -> None:
        from sdnperf.p4 import P4ProgramError, compiled
        self.spec = spec
        self.controller = None
        self.program = None
        try:  # runtime files that name no program of their own get this one too
            self.program = compiled(self.config.program)
        except P4ProgramError as exc:
            raise ArchitectureError(str(exc)) from None
        self.switches = {}  # name -> (device id, grpc port)
        self.caveat = self.shaping_caveat(spec)
        if self.caveat and not _WARNED:
            _WARNED.append(True)
            print(f"note: architecture {self.config.name!r}: {self.caveat}", file=sys.stderr)
        self.run_dir.mkdir(parents=True, exist_ok=True)

    def mininet_options(self) -> dict:
        cls = switch_class()
        target, log_dir = self.config.target, str(self.run_dir)

        def make(name, **kwargs):
            if name not in self.switches:
                dev = device_id_for(name, 1 + len(self.switches))
                self.switches[name] = (dev, process.free_port())
            dev, port = self.switches[name]
            sw = cls(name, grpc_port=port, device_id=dev, target=target, log_dir=log_dir, **kwargs)
            sw.before_stop = self.stop
            return sw

        return {"switch": make, "controller": None}

    def controller_config(self, net) -> dict:
        switches, links, hosts = [], [], []
        for sw in net.switches:
            switches.append({"name": sw.name, "device_id": sw.device_id,
                             "address": f"127.0.0.1:{sw.grpc_port}", "ports": sorted(sw.port_names())})
        names = {sw.name for sw in net.switches}
        for link in net.links:
            a, b = link.intf1, link.intf2
            na, nb = a.node, b.node
            if na.name in names and nb.name in names:
                links.append({"a": na.name, "a_port": na.ports[a], "b": nb.name, "b_port": nb.ports[b]})
            elif na.name in names or nb.name in names:
                (s, si), (h, hi) = ((na, a), (nb, b)) if na.name in names else ((nb, b), (na, a))
                hosts.append({"name": h.name, "mac": hi.MAC(), "switch": s.name, "port": s.ports[si]})
        config = {"app": self.config.app, "switches": switches, "links": links, "hosts": hosts,
                  "election_id": 1}
        if self.program is not None:
            config["p4info"], config["device_config"] = str(self.program.p4info), str(self.program.json)
        if self.config.app == "runtime-json":
            config["runtime_dir"] = str(Path(self.config.runtime_dir).resolve())
        from sdnperf.p4.catalog import program
        config["params"] = program(self.config.program).writes(self.config.params)
        return config

    def network_started(self, net) -> None:
        for sw in net.switches:
            sw.wait_listening()
        self._pids = [sw.daemon_pid() for sw in net.switches if sw.daemon_pid()]
        self.controller = process.p4rt_controller(self.controller_config(net), self.run_dir)
        try:
            self.controller.start()
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def wait_ready(self, net, timeout: float) -> None:
        n = len(net.switches)
        edges = self.spec.switch_graph().number_of_edges()

        def ready() -> bool:
            if not self.controller.alive():
                raise ArchitectureError(f"P4Runtime controller died:\n{self.controller.log_tail()}")
            state = self.controller.state()
            if state is None:
                return False
            if state.get("error"):
                raise ArchitectureError(f"P4Runtime controller: {state['error']}\n"
                                        f"{self.controller.log_tail()}")
            if len(state["switches"]) < n or not state.get("ready"):
                return False
            if self.config.app == "topo-forwarding":
                return state["links"] >= 2 * edges  # each link found in both directions
            return True

        wait_until(ready, timeout, f"{n} P4 switches to get their pipeline from the P4Runtime "
                   "controller (and links to be discovered)", stable_for=0.3)
        if self.caveat:  # the pipeline is in: the switches accept port commands now
            from sdnperf.emulation import capabilities
            self.kernel_netem = not self.spec.needs_netem() or capabilities.netem().ok
            self.impaired = self.impair_switch_ports(net, self.kernel_netem)

    def processes(self) -> dict[str, list[int]]:
        out = {}
        if getattr(self, "_pids", None):
            out["switch"] = list(self._pids)
        if getattr(self, "controller", None) is not None and self.controller.pid:
            out["controller"] = [self.controller.pid]
        return out

    def control_stats(self) -> dict[str, float]:
        if getattr(self, "controller", None) is None:
            return {}
        asked = time.time()
        state = self.controller.state()
        deadline = time.monotonic() + 1.0
        while state and state.get("time", 0) < asked and time.monotonic() < deadline:
            time.sleep(0.05)
            state = self.controller.state()
        if not state:
            return {}
        return {"packet_ins": state["packet_ins"], "flow_mods": state["flow_mods"]}

    def facts(self) -> dict:
        return {"architecture": "p4", "target": self.config.target, "app": self.config.app,
                "controller": "sdnperf-p4rt", "p4runtime": True,
                "program": "runtime files" if self.config.app == "runtime-json" else
                (self.program.source.name if getattr(self, "program", None) else None),
                "params": dict(self.config.params),
                "cpu_port": CPU_PORT, "link_shaping_caveat": getattr(self, "caveat", None),
                "switch_port_impairment": bool(getattr(self, "impaired", None)),
                "host_link_impairment": self.host_link_impairment()}

    def host_link_impairment(self) -> str | None:
        """Who delays/drops the host-to-switch direction of host links (None: nothing to)."""
        if not getattr(self, "impaired", None) or not self.spec.needs_netem():
            return None
        if getattr(self, "kernel_netem", True):
            return "netem in the host"
        return "switch port ingress (no sch_netem)"

    def stop(self) -> None:
        controller = getattr(self, "controller", None)
        if controller is not None:
            controller.stop()
