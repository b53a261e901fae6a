"""`ovs-standalone` and `openflow`: Open vSwitch, alone or under an OpenFlow controller.

Both run our private OVS daemons (emulation/ovs.py) with the kernel datapath where the
openvswitch module exists and the userspace netdev datapath elsewhere; which one was used
is recorded with every run.
"""
from __future__ import annotations

import functools
import re
import time
from pathlib import Path

from mininet.node import OVSSwitch, RemoteController

from sdnperf.arch.base import Architecture, ArchitectureError, spanning_tree_wanted, wait_until
from sdnperf.controllers import faucet_config, process
from sdnperf.emulation.ovs import OvsDaemons
from sdnperf.topo.spec import TopoSpec


class StartedController(RemoteController):
    """A controller sdnperf already started and saw listening.

    Mininet's own check telnets to the port and decodes the OpenFlow HELLO it gets back
    as UTF-8, which fails at random; our ControllerProcess has checked the port already."""

    def checkListening(self):
        pass


class _OvsArchitecture(Architecture):
    fail_mode = "standalone"

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        datapath = None if config.datapath == "auto" else config.datapath
        self.ovs = OvsDaemons(self.run_dir / "ovs", datapath=datapath)

    def prepare(self) -> None:
        self.ovs.start()

    def _switch_class(self, **extra):
        return functools.partial(OVSSwitch, datapath=self.ovs.datapath, failMode=self.fail_mode,
                                 **extra)

    def processes(self) -> dict[str, list[int]]:
        pid = self.ovs.pids().get("ovs-vswitchd")
        return {"switch": [pid]} if pid else {}

    def check_alive(self) -> None:
        missing = {"ovsdb-server", "ovs-vswitchd"} - set(self.ovs.pids())
        if missing:
            raise ArchitectureError(f"{', '.join(sorted(missing))} died during the run; "
                                    f"see {self.ovs.run_dir}")

    def facts(self) -> dict:
        return {"architecture": self.config.kind, "ovs_datapath": self.ovs.datapath}

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
        wait_until(lambda: self._rstp_settled(net), timeout, "OVS rapid spanning tree to converge",
                   interval=0.3, stable_for=1.5)

    def _rstp_settled(self, net) -> bool:
        for sw in net.switches:
            for intf in sw.intfList():
                if intf.name == "lo":
                    continue
                status = self.ovs.vsctl("get", "Port", intf.name, "rstp_status", check=False)
                state = re.search(r'rstp_port_state="?(\w+)', status)
                if not state or state.group(1) not in ("Forwarding", "Discarding"):
                    return False
                if state.group(1) == "Discarding" and "Alternate" not in status and "Backup" not in status:
                    return False
        return True

    def facts(self) -> dict:
        return {**super().facts(), "rstp": self.rstp}


class OpenflowArchitecture(_OvsArchitecture):
    fail_mode = "secure"

    @classmethod
    def controller_sees_packets(cls, config) -> bool:
        return True

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        cfg = config
        floods = cfg.controller == "ovs-testcontroller" or (
            cfg.controller == "osken" and cfg.app == "l2-learning")
        if floods and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: {cfg.controller} {cfg.app if cfg.controller == 'osken' else ''}"
                f" floods unknown destinations and topology {spec.name!r} has loops (broadcast "
                "storm); use controller = \"osken\" with app = \"topo-forwarding\"")
        if cfg.controller == "faucet" and spec.has_loops():
            raise ArchitectureError(
                f"architecture {cfg.name!r}: faucet needs a stacking configuration on topologies "
                f"with loops, which sdnperf does not generate yet; topology {spec.name!r} has loops")
        return {}

    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        if config.controller == "osken":
            self.controller = process.osken(config.app, self.run_dir)
            self.controller.env["SDNPERF_IDLE_TIMEOUT"] = str(config.idle_timeout)
        elif config.controller == "ovs-testcontroller":
            self.controller = process.ovs_testcontroller(self.run_dir)
        else:
            self.controller = process.faucet(self.run_dir / "faucet.yaml", self.run_dir)

    def prepare(self) -> None:
        super().prepare()
        if self.config.controller != "faucet":
            # Faucet's config names port numbers, known only once Mininet has built the
            # net: it starts in network_started().
            self.controller.start()

    def network_started(self, net) -> None:
        if self.config.controller == "faucet":
            faucet_config.write(net.switches, self.controller.env["FAUCET_CONFIG"])
            self.controller.start()

    def mininet_options(self) -> dict:
        port = self.controller.port
        return {"switch": self._switch_class(protocols="OpenFlow13"),
                "controller": functools.partial(StartedController, ip="127.0.0.1", port=port)}

    def wait_ready(self, net, timeout: float) -> None:
        def ready() -> bool:
            if not self.controller.alive():
                raise ArchitectureError(f"controller {self.controller.kind} died:\n"
                                        f"{self.controller.log_tail()}")
            if self.controller.state_file is None:
                # OVS refreshes is_connected in its database only every few seconds.
                return all(sw.connected() for sw in net.switches)
            state = self.controller.state()  # our apps say exactly who finished the handshake
            if state is None or len(state["switches"]) < len(net.switches):
                return False
            if self.config.app == "topo-forwarding":
                # os-ken reports each physical link once per direction.
                return state["links"] >= 2 * self.spec.switch_graph().number_of_edges()
            return True

        wait_until(ready, timeout, f"{len(net.switches)} switches to connect to "
                   f"{self.controller.kind} (and links to be discovered)", stable_for=0.5)

    def processes(self) -> dict[str, list[int]]:
        out = super().processes()
        if self.controller.pid:
            out["controller"] = [self.controller.pid]
        return out

    def check_alive(self) -> None:
        super().check_alive()
        if not self.controller.alive():
            raise ArchitectureError(f"controller {self.controller.kind} died during the run "
                                    f"(exit code {self.controller.proc.returncode}):\n"
                                    f"{self.controller.log_tail()}")

    def control_stats(self) -> dict[str, float]:
        controller = self.controller
        if controller.state_file is None:
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
        return {**super().facts(), "controller": self.config.controller,
                "app": self.config.app if self.config.controller == "osken" else None,
                "openflow": "1.3", "idle_timeout_s": self.config.idle_timeout}

    def stop(self) -> None:
        self.controller.stop()
        super().stop()
