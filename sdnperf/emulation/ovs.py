"""Private Open vSwitch daemons: our own ovsdb-server and ovs-vswitchd per run.

sdnperf never uses (or disturbs) an OVS the user already runs: each network gets a fresh
database and run directory, and every `ovs-vsctl`/`ovs-ofctl` that Mininet or we start
finds it through the OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR environment variables, which OVS's
tools honour.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from sdnperf.emulation import capabilities

OVS_SCHEMA_CANDIDATES = (
    Path("/usr/share/openvswitch/vswitch.ovsschema"),
    Path("/usr/local/share/openvswitch/vswitch.ovsschema"),
)
OVS_ENV_KEYS = ("OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR")


class OvsError(RuntimeError):
    pass


class OvsDaemons:
    """ovsdb-server + ovs-vswitchd living in `run_dir`, for the lifetime of one network."""

    def __init__(self, run_dir: Path, datapath: str | None = None):
        self.run_dir = Path(run_dir)
        # "kernel" needs the openvswitch module; elsewhere the userspace (netdev) datapath.
        self.datapath = datapath or ("kernel" if capabilities.ovs_kernel_module() else "user")
        self._saved_env: dict[str, str | None] = {}

    # -- paths ---------------------------------------------------------------------------
    @property
    def db_sock(self) -> Path:
        return self.run_dir / "db.sock"

    def pidfile(self, daemon: str) -> Path:
        return self.run_dir / f"{daemon}.pid"

    def env(self) -> dict[str, str]:
        d = str(self.run_dir)
        return {"OVS_RUNDIR": d, "OVS_DBDIR": d, "OVS_LOGDIR": d, "OVS_SYSCONFDIR": d}

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 15.0) -> None:
        for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl"):
            if not shutil.which(tool):
                raise OvsError(f"{tool} not found: install Open vSwitch (scripts/install.sh does)")
        schema = next((p for p in OVS_SCHEMA_CANDIDATES if p.exists()), None)
        if schema is None:
            raise OvsError("vswitch.ovsschema not found; is openvswitch-common installed?")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        db = self.run_dir / "conf.db"
        if db.exists():
            db.unlink()
        self._run(["ovsdb-tool", "create", str(db), str(schema)])
        self._run([
            "ovsdb-server", str(db),
            f"--remote=punix:{self.db_sock}",
            f"--pidfile={self.pidfile('ovsdb-server')}",
            f"--unixctl={self.run_dir / 'ovsdb-server.ctl'}",
            f"--log-file={self.run_dir / 'ovsdb-server.log'}",
            "--detach", "--no-chdir",
        ])
        self._activate_env()
        self.vsctl("--no-wait", "init")
        if self.datapath == "user":
            # Without this the userspace datapath drops the TSO/partial-checksum packets veth
            # delivers and TCP/UDP fail while ping still works.
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       "other_config:userspace-tso-enable=true")
        self._run([
            "ovs-vswitchd", f"unix:{self.db_sock}",
            f"--pidfile={self.pidfile('ovs-vswitchd')}",
            f"--unixctl={self.run_dir / 'ovs-vswitchd.ctl'}",
            f"--log-file={self.run_dir / 'ovs-vswitchd.log'}",
            "--detach", "--no-chdir",
        ])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if subprocess.run(["ovs-vsctl", "-t", "1", "show"], env=self._full_env(),
                              capture_output=True).returncode == 0 and self.pids().get("ovs-vswitchd"):
                return
            time.sleep(0.1)
        raise OvsError(f"ovs-vswitchd did not come up within {timeout:.0f}s; see {self.run_dir}/ovs-vswitchd.log")

    def pids(self) -> dict[str, int]:
        out = {}
        for daemon in ("ovsdb-server", "ovs-vswitchd"):
            try:
                out[daemon] = int(self.pidfile(daemon).read_text().strip())
            except (OSError, ValueError):
                pass
        return out

    def stop(self) -> None:
        """Stop both daemons (vswitchd first so it releases its ports), restore the env."""
        if self.datapath == "kernel":
            # Kernel datapaths outlive the daemon: delete bridges while vswitchd still runs.
            for br in self.vsctl("list-br", check=False).split():
                self.vsctl("--if-exists", "del-br", br, check=False)
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pid = self.pids().get(daemon)
            if pid:
                terminate_pid(pid)
        self._restore_env()

    # -- helpers ---------------------------------------------------------------------------
    def vsctl(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["ovs-vsctl", "-t", "5", *args], env=self._full_env(),
                              capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise OvsError(f"ovs-vsctl {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def _full_env(self) -> dict[str, str]:
        return {**os.environ, **self.env()}

    def _run(self, argv: list[str]) -> None:
        proc = subprocess.run(argv, env=self._full_env(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise OvsError(f"{argv[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    def _activate_env(self) -> None:
        # Mininet runs ovs-vsctl from switch shells it spawns; they inherit our environment.
        for key, value in self.env().items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def _restore_env(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()


def terminate_pid(pid: int, grace: float = 3.0) -> None:
    """SIGTERM, wait up to `grace` seconds, then SIGKILL. Missing processes are fine."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        _reap(pid)
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
