"""`userspace`: IPv4 forwarding by a Linux user-space program (sdnperf/arch/userfwd.py) —
seed paper 001's "Linux user-space" row beside the kernel's routing (`router`) and the SDN
switches.

The switch node is a namespace like the kernel router's (its ports carry no address, so
the kernel neither answers nor routes); the forwarder reads and writes every port through
AF_PACKET sockets and routes each host by a /32 route built from the topology, as the
other routing chains do. Frames it reads must be complete: a host's checksum and
segmentation offloads leave partial checksums and 64-KiB super-frames that only the
kernel could finish, so the hosts of this architecture's runs send without them (ethtool
tx off), as any host of a user-space forwarder must.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from mininet.node import Switch

from sdnperf.arch.base import Architecture, ArchitectureError, attached_hosts, wait_until
from sdnperf.topo.spec import TopoSpec


def forwarder_config(ports: dict[int, str], port_macs: dict[int, str], hosts: list[dict],
                     ready: Path) -> dict:  # fmt: skip
    """The forwarder's configuration: its ports, their MACs and a route per host."""
    return {
        "ports": {str(p): n for p, n in ports.items()},
        "port_macs": {str(p): m for p, m in port_macs.items()},
        "routes": {h["ip"]: [h["port"], h["mac"]] for h in hosts},
        "ready": str(ready),
    }


class UserspaceSwitch(Switch):
    """A Mininet switch node in its own namespace whose frames a user-space program forwards."""

    def __init__(self, name, **kwargs):
        kwargs["inNamespace"] = True
        super().__init__(name, **kwargs)
        self.forwarder: subprocess.Popen | None = None

    def start(self, _controllers):
        pass  # the forwarder starts once the hosts are known (network_started)

    def stop(self, deleteIntfs=True):
        if self.forwarder is not None and self.forwarder.poll() is None:
            self.forwarder.terminate()
            try:
                self.forwarder.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.forwarder.kill()
                self.forwarder.wait()
        super().stop(deleteIntfs)


class UserspaceArchitecture(Architecture):
    def __init__(self, config, spec: TopoSpec, run_dir: Path, needs: dict, seed: int = 0):
        super().__init__(config, spec, run_dir, needs, seed)
        self.switches: list[UserspaceSwitch] = []

    @classmethod
    def check(cls, config, spec: TopoSpec) -> dict:
        if len(spec.switches()) != 1:
            raise ArchitectureError(
                f"architecture {config.name!r}: the user-space forwarder routes the hosts on "
                f"its own ports (one switch, /32 routes); topology {spec.name!r} has "
                f"{len(spec.switches())} switches"
            )
        return {}

    def mininet_options(self) -> dict:
        return {"switch": UserspaceSwitch, "controller": None}

    def network_started(self, net) -> None:
        hosts = attached_hosts(net)
        for host in net.hosts:
            for intf in host.intfList():
                if intf.name != "lo":
                    host.cmd(
                        shlex.join(["ethtool", "-K", intf.name, "tx", "off"]) + " >/dev/null 2>&1"
                    )
        self.switches = list(net.switches)
        for sw in self.switches:
            ports = {sw.ports[i]: i.name for i in sw.intfList() if i.name != "lo"}
            macs = {sw.ports[i]: i.MAC() for i in sw.intfList() if i.name != "lo"}
            for name in ports.values():
                sw.cmd(shlex.join(["ip", "link", "set", name, "up"]))
            ready = self.run_dir / f"{sw.name}-userfwd.ready"
            cfg = self.run_dir / f"{sw.name}-userfwd.json"
            mine = [h for h in hosts if h["switch"] == sw.name]
            cfg.write_text(json.dumps(forwarder_config(ports, macs, mine, ready)))
            log = open(self.run_dir / f"{sw.name}-userfwd.log", "w")
            sw.forwarder = sw.popen(
                [sys.executable, "-m", "sdnperf.arch.userfwd", str(cfg)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self, net, timeout: float) -> None:
        def ready() -> bool:
            self.check_alive()
            return all((self.run_dir / f"{sw.name}-userfwd.ready").exists() for sw in net.switches)

        wait_until(ready, timeout, "the user-space forwarder to open its ports", interval=0.05)

    def processes(self) -> dict[str, list[int]]:
        return {"switch": [sw.forwarder.pid for sw in self.switches if sw.forwarder is not None]}

    def check_alive(self) -> None:
        for sw in self.switches:
            if sw.forwarder is not None and sw.forwarder.poll() is not None:
                log = self.run_dir / f"{sw.name}-userfwd.log"
                raise ArchitectureError(
                    f"the user-space forwarder of {sw.name} exited ({sw.forwarder.returncode}): "
                    + (log.read_text()[-500:] if log.exists() else "")
                )

    def facts(self) -> dict:
        return {
            "architecture": "userspace",
            "forwarding": "IPv4 in a Linux user-space program (AF_PACKET, /32 routes)",
            "host_offloads": "off on this architecture's hosts (tx off)",
        }
