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
from sdnperf.emulation.cleanup import Registry

OVS_SCHEMA_CANDIDATES = (
    Path("/usr/share/openvswitch/vswitch.ovsschema"),
    Path("/usr/local/share/openvswitch/vswitch.ovsschema"),
)
OVS_ENV_KEYS = ("OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR")
# The userspace datapath's tap device: removed when ovs-vswitchd exits cleanly, left in the
# kernel when the study is killed (-9) and the daemon then terminated by `sdnperf clean`.
USERSPACE_DATAPATH_DEVICE = "ovs-netdev"
# Open_vSwitch other_config of the userspace (netdev) datapath, the one this machine has
# (no openvswitch kernel module). Recorded in each study's provenance.
USERSPACE_OTHER_CONFIG = {
    # without it the datapath drops the TSO/partial-checksum packets veth delivers: TCP
    # and UDP fail while ping still works
    "userspace-tso-enable": "true",
    # revalidator threads dump and revalidate every datapath flow each 500 ms by default:
    # most of an idle 100-bridge vswitchd's CPU (bench/lab).
    # (stats-update-interval is left at its default: raised to 1 h, the Controller rows'
    # is_connected, which a study's own controller's readiness is read from, stopped
    # being refreshed and every bring-your-own OpenFlow controller timed out.)
    # What lags: OpenFlow flow statistics and idle timeouts (up to 2 s instead of 0.5 s)
    "max-revalidator": "2000",
}
STOCK_USERSPACE_OTHER_CONFIG = {"userspace-tso-enable": "true"}  # bench/lab's comparison


class OvsError(RuntimeError):
    pass


class OvsDaemons:
    """ovsdb-server + ovs-vswitchd living in `run_dir`, for the lifetime of one network."""

    def __init__(self, run_dir: Path, datapath: str | None = None):
        self.run_dir = Path(run_dir)
        # "kernel" needs the openvswitch module; elsewhere the userspace (netdev) datapath.
        self.datapath = datapath or ("kernel" if capabilities.ovs_kernel_module() else "user")
        # read at start(): bench/lab swaps in the stock settings to measure what ours save
        self.other_config = dict(USERSPACE_OTHER_CONFIG) if self.datapath == "user" else {}
        self._saved_env: dict[str, str | None] = {}
        self._procs: dict[str, subprocess.Popen] = {}
        # what `sdnperf clean` must remove if this process dies (ovs-netdev, when ours)
        self.registry = Registry(self.run_dir / "registry.json")

    # -- paths ---------------------------------------------------------------------------
    @property
    def db_sock(self) -> Path:
        return self.run_dir / "db.sock"

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
        if (
            self.datapath == "user"
            and not Path(f"/sys/class/net/{USERSPACE_DATAPATH_DEVICE}").exists()
        ):
            # ours once the first bridge exists: listed for `clean` before it does
            self.registry.interfaces = [USERSPACE_DATAPATH_DEVICE]
            self.registry.save()
        db = self.run_dir / "conf.db"
        if db.exists():
            db.unlink()
        self._run(["ovsdb-tool", "create", str(db), str(schema)])
        self._spawn(
            "ovsdb-server",
            [
                str(db),
                f"--remote=punix:{self.db_sock}",
                f"--unixctl={self.run_dir / 'ovsdb-server.ctl'}",
                f"--log-file={self.run_dir / 'ovsdb-server.log'}",
            ],
        )
        self._wait_for(lambda: self.db_sock.exists(), timeout, "ovsdb-server socket")
        self._activate_env()
        # the socket file appears at bind(), before listen(): a client in between is
        # refused, so the first command is retried until the server takes it
        self._wait_for(
            lambda: self.vsctl_ok("--no-wait", "init"), timeout, "ovsdb-server accepting clients"
        )
        if self.datapath == "user":
            self.vsctl(
                "--no-wait",
                "set",
                "Open_vSwitch",
                ".",
                *(f"other_config:{k}={v}" for k, v in self.other_config.items()),
            )
        self._spawn(
            "ovs-vswitchd",
            [
                f"unix:{self.db_sock}",
                f"--unixctl={self.run_dir / 'ovs-vswitchd.ctl'}",
                f"--log-file={self.run_dir / 'ovs-vswitchd.log'}",
            ],
        )
        self._wait_for(
            lambda: (self.run_dir / "ovs-vswitchd.ctl").exists(), timeout, "ovs-vswitchd"
        )

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self._procs.items() if proc.poll() is None}

    def stop(self) -> None:
        """Stop both daemons (vswitchd first so it releases its ports), restore the env."""
        if self.datapath == "kernel" and self._procs:
            # Kernel datapaths outlive the daemon: delete bridges while vswitchd still runs.
            for br in self.vsctl("list-br", check=False).split():
                self.vsctl("--if-exists", "del-br", br, check=False)
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            proc = self._procs.pop(daemon, None)
            if proc is not None:
                terminate_pid(proc.pid)
                proc.wait()
        self.registry.discard()
        self._restore_env()

    # -- helpers ---------------------------------------------------------------------------
    def vsctl(self, *args: str, check: bool = True) -> str:
        proc = self._vsctl(args)
        if check and proc.returncode != 0:
            raise OvsError(f"ovs-vsctl {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def vsctl_ok(self, *args: str) -> bool:
        """Whether `ovs-vsctl args` succeeded."""
        return self._vsctl(args).returncode == 0

    def _vsctl(self, args) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["ovs-vsctl", "-t", "5", *args], env=self._full_env(), capture_output=True, text=True
        )

    def _full_env(self) -> dict[str, str]:
        return {**os.environ, **self.env()}

    def _spawn(self, daemon: str, args: list[str]) -> None:
        # Our own children (not --detach): we reap them, and no pidfile can go stale.
        self._procs[daemon] = subprocess.Popen(
            [daemon, *args],
            env=self._full_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _wait_for(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            dead = [name for name, proc in self._procs.items() if proc.poll() is not None]
            if dead:
                raise OvsError(f"{dead[0]} exited at start-up; see {self.run_dir}/{dead[0]}.log")
            time.sleep(0.02)
        raise OvsError(f"{what} did not come up within {timeout:.0f}s; see logs in {self.run_dir}")

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
        if not pid_running(pid):
            return
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    _reap(pid)


def pid_running(pid: int) -> bool:
    """True while `pid` runs; a zombie (daemons reparented to an init that does not reap,
    as in some containers) counts as gone."""
    _reap(pid)
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
