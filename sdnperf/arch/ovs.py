"""`ovs-standalone` and `openflow`: Open vSwitch, alone or under an OpenFlow controller.

Both run our private OVS daemons (emulation/ovs.py) with the kernel datapath where the
openvswitch module exists and the userspace netdev datapath elsewhere; which one was used
is recorded with every run.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from pathlib import Path

from mininet.node import OVSSwitch, RemoteController
from mininet.util import errRun

from sdnperf.arch import ovs_flows
from sdnperf.arch.base import (
    Architecture,
    ArchitectureError,
    attached_hosts,
    check_controller,
    controller_log,
    spanning_tree_wanted,
    wait_until,
)
from sdnperf.controllers import external, faucet_config, process
from sdnperf.emulation.batched_links import collected_configs
from sdnperf.emulation.ovs import OvsDaemons
from sdnperf.topo.spec import TopoSpec


class StartedController(RemoteController):
    """A controller sdnperf already started and saw listening.

    Mininet's own check telnets to the port and decodes the OpenFlow HELLO it gets back
    as UTF-8, which fails at random; our ControllerProcess has checked the port already."""

    def __init__(self, name, started=lambda: None, **kwargs):
        self.started = started  # blocks until the controller listens (or raises)
        super().__init__(name, **kwargs)

    def checkListening(self):
        pass

    def start(self):
        # Mininet starts controllers before any switch: the switches' first connection
        # attempt then finds it listening (a refused one backs off for a second or more)
        self.started()

    def stop(self, *args, **kwargs):
        # RemoteController.stop does nothing, which leaves this node's shell (`bash ...
        # mininet:c0`) running after every run: end it like any other node's.
        self.terminate()


def batched_ovs_switch(**defaults) -> type:
    """An OVSSwitch class with these keyword defaults that Mininet starts in one batch.

    Mininet starts switches in one ovs-vsctl call (and re-applies the links' tc settings,
    which adding a port to OVS may reset, once) only when the switch class itself has
    `batchStartup`; a functools.partial has not, so each switch ran its own ovs-vsctl,
    waiting for ovs-vswitchd to reconfigure every time, and tc was re-applied twice (8 s
    of a 10-switch network's start on a loaded 2-core machine). The bridges, ports,
    controllers and tc settings are the same either way."""

    class BatchedOVSSwitch(OVSSwitch):
        def __init__(self, name, **params):
            super().__init__(name, **{**defaults, **params})

        @classmethod
        def batchStartup(cls, switches, run=errRun):
            # Mininet's batch start, its tc re-applied per switch in one script, all
            # switches at once (it was one round trip per port, 46 in turn on a campus)
            with collected_configs():
                return super().batchStartup(switches, run)

    return BatchedOVSSwitch


class _OvsArchitecture(Architecture):
    fail_mode = "standalone"

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        datapath = None if config.datapath == "auto" else config.datapath
        self.ovs = OvsDaemons(self.run_dir / "ovs", datapath=datapath)

    def prepare(self) -> None:
        self.ovs.start()

    def _switch_class(self, **extra):
        return batched_ovs_switch(datapath=self.ovs.datapath, failMode=self.fail_mode, **extra)

    def processes(self) -> dict[str, list[int]]:
        pid = self.ovs.pids().get("ovs-vswitchd")
        return {"switch": [pid]} if pid else {}

    def check_alive(self) -> None:
        missing = {"ovsdb-server", "ovs-vswitchd"} - set(self.ovs.pids())
        if missing:
            raise ArchitectureError(
                f"{', '.join(sorted(missing))} died during the run; see {self.ovs.run_dir}"
            )

    def facts(self) -> dict:
        return {
            "architecture": self.config.kind,
            "ovs_datapath": self.ovs.datapath,
            "ovs_other_config": dict(self.ovs.other_config),
        }

    def stop(self) -> None:
        self.ovs.stop()


class OvsStandaloneArchitecture(_OvsArchitecture):
    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        return {"rstp": spanning_tree_wanted(config.stp, spec)}

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        self.rstp: bool = needs["rstp"]

    def mininet_options(self) -> dict:
        return {"switch": self._switch_class(), "controller": None}

    def wait_ready(self, net, timeout: float) -> None:
        if not self.rstp:
            return
        for sw in net.switches:
            self.ovs.vsctl("set", "Bridge", sw.name, "rstp_enable=true")
        wait_until(
            lambda: self._rstp_settled(net),
            timeout,
            "OVS rapid spanning tree to converge",
            interval=0.3,
            stable_for=1.5,
        )

    def _rstp_settled(self, net) -> bool:
        for sw in net.switches:
            for intf in sw.intfList():
                if intf.name == "lo":
                    continue
                status = self.ovs.vsctl("get", "Port", intf.name, "rstp_status", check=False)
                state = re.search(r'rstp_port_state="?(\w+)', status)
                if not state or state.group(1) not in ("Forwarding", "Discarding"):
                    return False
                if (
                    state.group(1) == "Discarding"
                    and "Alternate" not in status
                    and "Backup" not in status
                ):
                    return False
        return True

    def facts(self) -> dict:
        return {**super().facts(), "rstp": self.rstp}


class OvsFlowsArchitecture(_OvsArchitecture):
    """OVS switches (fail_mode=secure, no controller) with static OpenFlow 1.3 flows
    equivalent to a workload-complexity P4 program, installed with ovs-ofctl once the
    network is built (they name its port numbers and the hosts' MACs)."""

    fail_mode = "secure"

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        if len(spec.switches()) != 1:
            raise ArchitectureError(
                f"architecture {config.name!r}: the {config.program!r} flows are built for one "
                f"switch with the hosts on its ports; topology {spec.name!r} has "
                f"{len(spec.switches())} switches"
            )
        return {}

    def mininet_options(self) -> dict:
        return {"switch": self._switch_class(protocols=ovs_flows.PROTOCOLS), "controller": None}

    def ofctl(self, *args: str, stdin: str | None = None) -> str:
        """ovs-ofctl on our OVS (OpenFlow 1.3); ArchitectureError with its words on failure."""
        proc = subprocess.run(
            ["ovs-ofctl", "-O", ovs_flows.PROTOCOLS, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**os.environ, **self.ovs.env()},
        )
        if proc.returncode != 0:
            raise ArchitectureError(
                f"ovs-ofctl {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc.stdout

    def network_started(self, net) -> None:
        hosts = attached_hosts(net)
        for sw in net.switches:
            flows = ovs_flows.flows_for(
                self.config.program, [h for h in hosts if h["switch"] == sw.name]
            )
            (self.run_dir / f"{sw.name}-flows.txt").write_text("\n".join(flows.flows) + "\n")
            self.ofctl("add-groups", sw.name, "-", stdin="\n".join(flows.groups) + "\n")
            self.ofctl("add-flows", sw.name, "-", stdin="\n".join(flows.flows) + "\n")

    def dump_flows(self, switch: str) -> str:
        return self.ofctl("dump-flows", switch)

    def facts(self) -> dict:
        return {
            **super().facts(),
            "program": self.config.program,
            "openflow": ovs_flows.PROTOCOLS,
            "controller": None,
        }


class OpenflowArchitecture(_OvsArchitecture):
    """OVS switches (fail_mode=secure) under one OpenFlow controller on loopback: ours
    (os-ken apps, faucet, ovs-testcontroller), the study's (`command`, an os-ken app file,
    POX: started per run like ours) or one already running (`remote`: nothing started,
    its CPU not measured)."""

    fail_mode = "secure"

    @classmethod
    def controller_sees_packets(cls, config) -> bool:
        return True

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        cfg = config
        floods = cfg.controller == "ovs-testcontroller" or (
            cfg.controller == "osken" and cfg.app == "l2-learning"
        )
        if floods and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: {cfg.controller} {cfg.app if cfg.controller == 'osken' else ''}"
                f" floods unknown destinations and topology {spec.name!r} has loops (broadcast "
                'storm); use controller = "osken" with app = "topo-forwarding"'
            )
        if cfg.controller == "faucet" and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: faucet needs a stacking configuration on topologies "
                f"with loops, which sdnperf does not generate yet; topology {spec.name!r} has loops"
            )
        if cfg.own_osken_app() and not Path(cfg.app).is_file():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: os-ken app file {cfg.app} does not exist"
            )
        if cfg.controller == "pox" and process.pox_home() is None:
            raise ArchitectureError(
                f'architecture {cfg.name!r}: controller = "pox" needs a '
                f"POX checkout: {process.POX_HINT}"
            )
        return {}

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        kind = config.controller
        self.controller: process.ControllerProcess | None = None  # None: a remote controller
        self.address = ("127.0.0.1", 0)  # where the switches connect
        if kind == "osken":
            self.controller = process.osken(config.app, self.run_dir)
            self.controller.env["SDNPERF_IDLE_TIMEOUT"] = str(config.idle_timeout)
        elif kind == "ovs-testcontroller":
            self.controller = process.ovs_testcontroller(self.run_dir)
        elif kind == "faucet":
            self.controller = process.faucet(self.run_dir / "faucet.yaml", self.run_dir)
        elif kind == "pox":
            self.controller = process.pox(config.app.split(), self.run_dir)
        elif kind == "command":
            port = process.free_port()
            self.controller = external.command_controller(
                config.command,
                {
                    "port": port,
                    "host": "127.0.0.1",
                    "address": f"127.0.0.1:{port}",
                    "run_dir": self.run_dir,
                    "study_dir": config._study_dir,
                    "topology_json": self.run_dir / external.TOPOLOGY_FILE,
                },
                self.run_dir,
                port,
            )
        if self.controller is not None:
            if self.controller.port is None:  # every OpenFlow controller listens
                raise ArchitectureError(f"{kind} controller: no OpenFlow port to connect to")
            self.address = ("127.0.0.1", self.controller.port)
        else:
            host, _, port = config.address.rpartition(":")
            self.address = (host, int(port))

    def _starts_late(self) -> bool:
        # Faucet's config names port numbers and a command may read {topology_json}: both
        # exist only once Mininet has built the net (switches retry every second meanwhile).
        return self.config.controller in ("faucet", "command")

    def prepare(self) -> None:
        super().prepare()
        if self.controller is None:
            host, port = self.address
            if not process.port_open(port, host):
                raise ArchitectureError(f"remote controller {host}:{port}: nothing listens there")
        elif not self._starts_late():
            # it starts (an os-ken is a second of Python imports) while Mininet builds
            # the network; the controller node waits for it before any switch starts
            self._spawn_controller()

    def _spawn_controller(self) -> None:
        try:
            self._started_controller().spawn()
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def _controller_started(self) -> None:
        """Wait until a controller spawned by prepare() listens (no-op for the others)."""
        if self.controller is None or self._starts_late():
            return
        try:
            self.controller.wait_started()
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def _started_controller(self) -> process.ControllerProcess:
        """Our controller (a remote one is not ours to start or configure)."""
        if self.controller is None:
            raise ArchitectureError(
                f"controller {self.config.controller!r}: not started by sdnperf"
            )
        return self.controller

    def _start_controller(self) -> None:
        try:
            self._started_controller().start()
        except process.ControllerError as exc:
            raise ArchitectureError(str(exc)) from None

    def network_started(self, net) -> None:
        if self.config.controller == "faucet":
            faucet_config.write(net.switches, self._started_controller().env["FAUCET_CONFIG"])
        if self.config.controller == "command":
            external.write_json(
                self.run_dir / external.TOPOLOGY_FILE, external.topology_description(net)
            )
        if self._starts_late():
            self._start_controller()

    def mininet_options(self) -> dict:
        host, port = self.address
        return {
            "switch": self._switch_class(protocols=self.config.switch_protocols()),
            "controller": functools.partial(
                StartedController, ip=host, port=port, started=self._controller_started
            ),
        }

    def switches_connected(self) -> bool:
        """Every switch's Controller row says is_connected (asked of our OVS, so it holds for
        any controller; OVS refreshes it in its database within about a second)."""
        rows = self.ovs.vsctl(
            "--format=csv",
            "--no-headings",
            "--columns=is_connected",
            "list",
            "Controller",
            check=False,
        ).split()
        return sum(r.strip() == "true" for r in rows) >= len(self.spec.switches())

    def switches_programmed(self, net) -> bool:
        """Every bridge has a flow entry. From OpenFlow 1.3 on a table miss drops, so a
        controller that forwards anything installs at least its table-miss entry; under
        1.0 a miss goes to the controller, and an empty table is a working one."""
        if "OpenFlow10" in self.config.switch_protocols():
            return True
        protocols = self.config.switch_protocols()
        for sw in net.switches:
            proc = subprocess.run(
                ["ovs-ofctl", "-O", protocols, "dump-aggregate", sw.name],
                capture_output=True,
                text=True,
                env={**os.environ, **self.ovs.env()},
            )
            found = re.search(r"flow_count=(\d+)", proc.stdout)
            if not found or int(found.group(1)) == 0:
                return False
        return True

    def wait_ready(self, net, timeout: float) -> None:
        def ready() -> bool:
            check_controller(self.controller, "died")
            if self.controller is None or self.controller.state_file is None:
                return self.switches_connected() and self.switches_programmed(net)
            state = self.controller.state()  # our apps say exactly who finished the handshake
            if state is None or len(state["switches"]) < len(net.switches):
                return False
            # and whose table-miss entry the switch confirmed (a barrier reply)
            if len(state.get("programmed", ())) < len(net.switches):
                return False
            if self.config.app == "topo-forwarding":
                # os-ken reports each physical link once per direction.
                return state["links"] >= 2 * self.spec.switch_graph().number_of_edges()
            return True

        wait_until(
            ready,
            timeout,
            f"{len(net.switches)} switches to connect to "
            f"{self.controller_label()} (and links to be discovered)",
            # the table-miss entry an app sends at the handshake gets 0.5 s to be in, unless
            # the app is ours: it says when the switch confirmed the entry
            interval=0.05,
            stable_for=0.0 if self.controller and self.controller.state_file else 0.5,
            explain=lambda: controller_log(self.controller),
        )

    def controller_label(self) -> str:
        if self.controller is None:
            return "the remote controller at {}:{}".format(*self.address)
        return self.controller.kind

    def processes(self) -> dict[str, list[int]]:
        out = super().processes()
        if self.controller is not None and self.controller.pid:
            out["controller"] = [self.controller.pid]
        return out

    def check_alive(self) -> None:
        super().check_alive()
        check_controller(self.controller, "died during the run")
        if self.controller is None and not self.switches_connected():
            raise ArchitectureError(
                "the switches lost the remote controller {}:{} during the run".format(*self.address)
            )

    def control_stats(self) -> dict[str, float]:
        controller = self.controller
        if controller is None or controller.state_file is None:
            return {}
        asked = time.time()
        state = controller.state()
        deadline = time.monotonic() + 1.0
        while state and state.get("time", 0) < asked and time.monotonic() < deadline:
            time.sleep(0.05)  # the app rewrites its state every 0.2 s: wait for a fresh one
            state = controller.state()
        if not state:
            return {}
        return {"packet_ins": state["packet_ins"], "flow_mods": state["flow_mods"]}

    def facts(self) -> dict:
        cfg = self.config
        facts = {
            **super().facts(),
            "controller": cfg.controller,
            "app": cfg.app if cfg.controller in ("osken", "pox") else None,
            "openflow": cfg.switch_protocols(),
            "idle_timeout_s": cfg.idle_timeout,
        }
        if cfg.controller == "command":
            facts["command"] = list(self._started_controller().argv)
        if self.controller is None:
            facts["controller_address"] = "{}:{}".format(*self.address)
            facts["controller_cpu"] = "not measured (remote controller, not started by sdnperf)"
        return facts

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
        super().stop()
