"""Controllers under test, started fresh for every run (so no run inherits another's
learned state), and the probe options each one needs to see a plausible switch."""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import yaml

from sdnperf.controllers import process
from sdnperf.controllers.process import ControllerError, ControllerProcess
from sdnperf.ctlbench.config import ControllerSpec, LoadSection
from sdnperf.p4 import P4ProgramError, compiled

FAUCET_VLAN = 100
FAUCET_HOSTS = 100_000  # distinct MACs per switch, so Faucet keeps learning (see below)
SIMPLE_SWITCH_13 = "os_ken.app.simple_switch_13"


@dataclass
class Running:
    spec: ControllerSpec
    address: str
    proc: ControllerProcess | None = None  # None for an external controller
    pid: int | None = None
    probe_args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _tmp: str | None = None

    def alive(self) -> bool:
        return self.proc.alive() if self.proc else True

    def exit_code(self) -> int | None:
        return self.proc.proc.returncode if self.proc and self.proc.proc else None

    def log_tail(self) -> str:
        return self.proc.log_tail() if self.proc else ""

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


def faucet_yaml(dpids: list[int], ports: int) -> str:
    """One Faucet dp per emulated switch, every port untagged on one VLAN, host limits
    raised so learning is not banned after 255 hosts."""
    port = {"native_vlan": "bench", "max_hosts": 16000000}
    config = {
        "vlans": {"bench": {"vid": FAUCET_VLAN, "max_hosts": 16000000}},
        "dps": {
            f"probe{d}": {
                "dp_id": d,
                "hardware": "Open vSwitch",
                "interfaces": {p: dict(port) for p in range(1, ports + 1)},
            }
            for d in dpids
        },
    }
    return yaml.safe_dump(config, sort_keys=False)


def _osken_module(app: str) -> tuple[list[str], dict[str, str]]:
    """argv tail and env for an os-ken app that is not one of ours."""
    if app in ("simple_switch_13", "simple-switch-13"):
        app = SIMPLE_SWITCH_13
    if app.endswith(".py"):
        if not Path(app).is_file():
            raise ControllerError(f"os-ken app file {app} does not exist")
        return [str(Path(app).resolve())], {}
    try:
        found = importlib.util.find_spec(app)
    except (ImportError, ValueError):
        found = None
    if found is None:
        hint = (
            (
                ' (the os-ken package installed here ships no sample apps; app = "l2-learning" '
                "is the same reactive L2 learning switch)"
            )
            if app.startswith("os_ken.app.")
            else ""
        )
        raise ControllerError(f"os-ken app module {app!r} is not installed{hint}")
    return [app], {}


def _given(spec: ControllerSpec, value: str | None, field: str) -> str:
    """`value`, which ControllerSpec's own check sets for this kind of controller."""
    if value is None:
        raise ControllerError(f"controller kind {spec.kind!r} has no {field}")
    return value


def start(
    spec: ControllerSpec,
    run_dir: Path,
    load: LoadSection,
    switches: int,
    probe_binary: str,
    dpid_base: int = 1,
) -> Running:
    """Start the controller (waits until it listens); raises ControllerError."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if spec.kind == "external":
        return Running(spec, _given(spec, spec.address, "address"), pid=spec.pid)
    if spec.kind == "echo":
        port = process.free_port()
        proc = ControllerProcess(
            "echo",
            [probe_binary, "echo-controller", "--listen", f"127.0.0.1:{port}"],
            run_dir,
            port,
        )
        running = Running(spec, f"127.0.0.1:{port}", proc)
    elif spec.kind == "osken":
        if spec.app in process.OSKEN_APPS:
            proc = process.osken(spec.app, run_dir)
        else:
            tail, env = _osken_module(_given(spec, spec.app, "app"))
            port = process.free_port()
            argv = [
                process.venv_tool("osken-manager"),
                "--ofp-listen-host",
                "127.0.0.1",
                "--ofp-tcp-listen-port",
                str(port),
                *tail,
            ]
            proc = ControllerProcess(f"osken-{spec.label}", argv, run_dir, port, env=env)
        running = Running(spec, f"127.0.0.1:{proc.port}", proc)
    elif spec.kind == "faucet":
        cfg = run_dir / "faucet.yaml"
        cfg.write_text(faucet_yaml([dpid_base + i for i in range(switches)], load.ports))
        proc = process.faucet(cfg, run_dir)
        # Faucet's pipeline sends packet-ins from its eth_src table (reason ACTION, table 1),
        # after the VLAN table tagged the frame; it ignores anything else. It answers only
        # hosts it has not learned yet, so every packet-in carries a new MAC for a long time.
        hosts = max(load.hosts, FAUCET_HOSTS)
        running = Running(
            spec,
            f"127.0.0.1:{proc.port}",
            proc,
            probe_args=[
                "--reason",
                "action",
                "--table-id",
                "1",
                "--vlan",
                str(FAUCET_VLAN),
                "--hosts",
                str(hosts),
            ],
            notes=[
                f"faucet: packet-ins tagged VLAN {FAUCET_VLAN}, reason ACTION, "
                f"table 1; {hosts} host MACs per switch"
            ],
        )
    elif spec.kind == "ovs-testcontroller":
        if not shutil.which("ovs-testcontroller"):
            raise ControllerError(
                "ovs-testcontroller is not installed (Debian package openvswitch-testcontroller)"
            )
        proc = process.ovs_testcontroller(run_dir)
        tmp = tempfile.mkdtemp(prefix="sdnperf-otc-")  # short path for its control socket
        proc.env["OVS_RUNDIR"] = tmp
        running = Running(spec, f"127.0.0.1:{proc.port}", proc, _tmp=tmp)
    else:  # pragma: no cover - the config model refuses other kinds
        raise ControllerError(f"unknown controller kind {spec.kind!r}")
    try:
        proc.start()
    except BaseException:
        running.stop()
        raise
    running.pid = proc.pid
    return running


class _Dialer(ControllerProcess):
    """A controller that dials the devices and listens on nothing (our P4Runtime echo):
    started = still running after a moment; the probe sees when it became primary."""

    def start(self, timeout: float = 20.0) -> None:
        self.spawn()
        time.sleep(0.2)
        proc = self.spawned()
        if proc.poll() is not None:
            raise ControllerError(
                f"{self.kind} exited with code {proc.returncode} at start-up:\n{self.log_tail()}"
            )


def p4rt_controller_config(app: str, devices: list[dict], ports: int) -> dict:
    """The config of our P4Runtime controller (sdnperf/controllers/p4rt/controller.py) for
    the probe's devices, with l2l3.p4 compiled as sdnperf/arch/p4.py does."""
    try:
        prog = compiled("l2l3")
    except P4ProgramError as exc:
        raise ControllerError(
            f"cannot compile sdnperf/p4/l2l3.p4 for the P4Runtime controller: {exc}"
        ) from None
    switches = [
        {
            "name": f"s{d['device_id']}",
            "device_id": int(d["device_id"]),
            "address": d["address"],
            "ports": list(range(1, ports + 1)),
        }
        for d in devices
    ]
    return {
        "app": app,
        "switches": switches,
        "links": [],
        "hosts": [],
        "election_id": 1,
        "p4info": str(prog.p4info),
        "device_config": str(prog.json),
    }


def start_p4runtime(
    spec: ControllerSpec,
    run_dir: Path,
    load: LoadSection,
    devices: list[dict],
    devices_file: Path,
    probe_binary: str,
) -> Running:
    """Start a controller that dials the probe's P4Runtime devices; raises ControllerError.
    `devices`: [{device_id, address}] as the probe announced them (also in devices_file)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    first = devices[0]["address"] if devices else "?"
    if spec.kind == "external":
        return Running(
            spec,
            first,
            pid=spec.pid,
            notes=[
                f"external P4Runtime controller: dials the devices at {first} "
                f"(device ids {devices[0]['device_id']}..) and on"
            ]
            if devices
            else [],
        )
    proc: ControllerProcess
    if spec.kind == "echo":
        proc = _Dialer(
            "p4rt-echo",
            [probe_binary, "p4runtime-echo", "--devices-file", str(devices_file)],
            run_dir,
            0,
        )
    elif spec.kind == "p4rt":
        proc = process.p4rt_controller(
            p4rt_controller_config(_given(spec, spec.app, "app"), devices, load.ports), run_dir
        )
    else:  # pragma: no cover - the config model refuses other kinds
        raise ControllerError(f"controller kind {spec.kind!r} does not speak P4Runtime")
    running = Running(spec, first, proc)
    try:
        # a Python controller imports grpc/finsy and compiles first: give it time
        proc.start(timeout=60.0)
    except BaseException:
        running.stop()
        raise
    running.pid = proc.pid
    return running


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process and its descendants, MB."""
    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return None
    total = 0
    seen = False
    for proc in procs:
        try:
            total += proc.memory_info().rss
            seen = True
        except psutil.Error:
            continue  # exited meanwhile
    return total / 2**20 if seen else None
