"""Controller processes started and stopped by the lab.

Each controller listens for OpenFlow on 127.0.0.1 only, on a free port, logs into the run
directory, and runs in its own process group so wrappers (Faucet) die with their children.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from sdnperf.processes import signal_process_group, stop_process_group

APPS_DIR = Path(__file__).parent / "osken_apps"
OSKEN_APPS = {"l2-learning": "l2_learning.py", "topo-forwarding": "topo_forwarding.py"}
START_GRACE_S = 1.0  # a controller with no port to watch must live this long to have started


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORTS_BELOW_EPHEMERAL = 12000  # how far below the ephemeral range free_port looks
_handed_out: set[int] = set()  # ports this process already gave a daemon


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in EPHEMERAL_RANGE.read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` for a daemon we are about to start, below the kernel's
    ephemeral range. Not port 0's pick: that comes from the ephemeral range, where the
    outgoing connections of a big study (a controller connecting to 100 switches while the
    later ones start) take local ports, and one took a switch's port between this call and
    the switch's bind ("Address already in use" on a 10x10 grid). Below the range only an
    explicit bind takes a port, and this process never hands out the same port twice."""
    low, _ = ephemeral_range()
    first = max(1024, low - PORTS_BELOW_EPHEMERAL)
    candidates = list(range(first, low))
    if not candidates:  # a range starting near 1024: nothing below it to use
        with socket.socket() as s:
            s.bind((host, 0))
            return s.getsockname()[1]
    start = random.randrange(len(candidates))  # concurrent sdnperf processes spread out
    for port in candidates[start:] + candidates[:start]:
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise OSError(f"no free TCP port on {host} between {first} and {low - 1}")


def venv_tool(name: str) -> str:
    """A console script installed beside our interpreter (os-ken, faucet live in the venv)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


class ControllerError(RuntimeError):
    pass


class ControllerProcess:
    """A running controller: argv + env + log file, stopped as a whole process group."""

    def __init__(
        self,
        kind: str,
        argv: list[str],
        run_dir: Path,
        port: int | None,
        env: dict[str, str] | None = None,
        state_file: Path | None = None,
    ):
        self.kind, self.argv, self.run_dir, self.port = kind, argv, Path(run_dir), port
        self.env = dict(env or {})  # on top of the environment as it is at spawn()
        self.state_file = state_file
        self.log_path = self.run_dir / f"controller-{kind}.log"
        self.proc: subprocess.Popen | None = None
        # set by waiting_for_config(): spawn() gives the process a stdin pipe, and
        # release() tells it through that pipe that its config file is written
        self.config_path: Path | None = None
        self.config: dict | None = None  # written first, then what release() adds, then:
        self.own_config: dict = {}  # what the lab decided for it (state file, status port)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def spawn(self) -> None:
        """Start the process in its own session, output to `log_path`; no readiness check."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # os.environ as it is now: a run's private OVS daemons (OVS_RUNDIR) start before
        # the controller but after this object is made.
        env = {**os.environ, **self.env}
        # Wrappers such as faucet exec osken-manager by name: let them find the venv's.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(
                    self.argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.PIPE if self.config_path else subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
            except OSError as exc:  # a missing or non-executable program
                raise ControllerError(
                    f"{self.kind} controller {self.argv[0]!r} cannot be started: {exc.strerror}"
                ) from None

    def release(self, config: dict) -> None:
        """Write the config of a controller spawned waiting for it (p4rt_controller's
        `wait_for_config`) and tell it to go on; ControllerError when it already exited."""
        proc = self.spawned()
        if self.config_path is None or self.config is None or proc.stdin is None:
            raise ControllerError(f"{self.kind} controller: not waiting for a config")
        write_config(self.config_path, {**self.config, **config, **self.own_config})
        try:
            proc.stdin.write(b"go\n")
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it exited: wait_started() says so, with its log
        proc.stdin = None

    def spawned(self) -> subprocess.Popen:
        """The process spawn() started (ControllerError before spawn())."""
        if self.proc is None:
            raise ControllerError(f"{self.kind} controller: not started yet")
        return self.proc

    def start(self, timeout: float = 20.0) -> None:
        """Spawn, then wait until it listens on `port`; a controller without a port of its
        own (one that dials P4Runtime switches) only has to survive START_GRACE_S."""
        self.spawn()
        self.wait_started(timeout)

    def wait_started(self, timeout: float = 20.0) -> None:
        """The second half of start(), for a caller that spawned the controller earlier
        and did other work while it started (ControllerError when it exited or never
        listened)."""
        proc = self.spawned()
        deadline = time.monotonic() + (timeout if self.port else START_GRACE_S)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ControllerError(
                    f"{self.kind} exited with code {proc.returncode} "
                    f"at start-up:\n{self.log_tail()}"
                )
            if self.port and port_open(self.port):
                return
            time.sleep(0.02)
        if not self.port:
            return
        raise ControllerError(
            f"{self.kind} did not listen on 127.0.0.1:{self.port} within "
            f"{timeout:.0f}s:\n{self.log_tail()}"
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def state(self) -> dict | None:
        """The JSON state our os-ken apps write (None for other controllers / not yet)."""
        if not self.state_file:
            return None
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc:
            stop_process_group(self.proc)
            self._close_stdin()

    def signal_stop(self) -> None:
        """SIGTERM to the process group without waiting (stop() waits for it later)."""
        if self.proc:
            signal_process_group(self.proc)

    def _close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self.proc.stdin = None


def status_snapshot(port: int, timeout: float = 1.0) -> dict | None:
    """The state our P4Runtime controller answers on its status port (controller.py),
    current when asked (the state file is rewritten every 0.2 s); None when it cannot."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.settimeout(timeout)
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        state = json.loads(data)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def osken(app: str, run_dir: Path) -> ControllerProcess:
    """osken-manager running one of our apps (by name: it writes our state file) or the
    study's own app file (a path to a .py; no state file, so readiness is asked of OVS)."""
    ours = app in OSKEN_APPS
    if not ours and not (app.endswith(".py") and Path(app).is_file()):
        raise ControllerError(
            f"os-ken app {app!r} is neither one of ours "
            f"({', '.join(sorted(OSKEN_APPS))}) nor an existing .py file"
        )
    port = free_port()
    state = Path(run_dir) / "controller-state.json" if ours else None
    argv = [
        venv_tool("osken-manager"),
        "--ofp-listen-host",
        "127.0.0.1",
        "--ofp-tcp-listen-port",
        str(port),
    ]
    if app == "topo-forwarding":
        argv.append("--observe-links")
    argv.append(str(APPS_DIR / OSKEN_APPS[app]) if ours else str(Path(app).resolve()))
    # The apps import sdnperf.controllers.osken_apps.common: make the package importable.
    pythonpath = str(Path(__file__).resolve().parents[2])
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")]))}
    if state:
        env["SDNPERF_CONTROLLER_STATE"] = str(state)
    kind = f"osken-{app}" if ours else f"osken-{Path(app).stem}"
    return ControllerProcess(kind, argv, run_dir, port, env=env, state_file=state)


def pox_home() -> Path | None:
    """A POX checkout: $POX_HOME, else the folder of a `pox.py` on PATH (POX is not on
    the package registries; `git clone https://github.com/noxrepo/pox`)."""
    home = os.environ.get("POX_HOME")
    if home:
        return Path(home) if (Path(home) / "pox.py").is_file() else None
    found = shutil.which("pox.py")
    return Path(found).resolve().parent if found else None


POX_HINT = (
    "POX is not on the package registries: `git clone https://github.com/noxrepo/pox` "
    "and set POX_HOME to the checkout (or put its pox.py on PATH)"
)


def pox(components: list[str], run_dir: Path) -> ControllerProcess:
    """POX (OpenFlow 1.0) with `components` (e.g. forwarding.l2_learning and its --options)."""
    home = pox_home()
    if home is None:
        raise ControllerError(f'controller = "pox" needs a POX checkout: {POX_HINT}')
    port = free_port()
    argv = [
        sys.executable,
        str(home / "pox.py"),
        "log.level",
        "--INFO",
        "openflow.of_01",
        "--address=127.0.0.1",
        f"--port={port}",
        *components,
    ]
    return ControllerProcess("pox", argv, run_dir, port)


def ovs_testcontroller(run_dir: Path) -> ControllerProcess:
    port = free_port()
    argv = ["ovs-testcontroller", "-O", "OpenFlow13", f"ptcp:{port}:127.0.0.1"]
    return ControllerProcess("ovs-testcontroller", argv, run_dir, port)


def faucet(config_path: Path, run_dir: Path) -> ControllerProcess:
    port, prom = free_port(), free_port()
    env = {
        "FAUCET_CONFIG": str(config_path),
        "FAUCET_LOG": str(Path(run_dir) / "faucet.log"),
        "FAUCET_EXCEPTION_LOG": str(Path(run_dir) / "faucet-exception.log"),
        "FAUCET_PROMETHEUS_ADDR": "127.0.0.1",
        "FAUCET_PROMETHEUS_PORT": str(prom),
    }
    argv = [
        venv_tool("faucet"),
        "--ryu-ofp-listen-host=127.0.0.1",
        f"--ryu-ofp-tcp-listen-port={port}",
    ]
    return ControllerProcess("faucet", argv, run_dir, port, env=env)


def p4rt_controller(
    config: dict, run_dir: Path, *, wait_for_config: bool = False
) -> ControllerProcess:
    """sdnperf's P4Runtime controller (sdnperf/controllers/p4rt) for the switches in `config`
    (see controller.py for its keys). It connects out to the switches' gRPC ports; for the
    lab's start-up check it listens on a free 127.0.0.1 status port, and it writes the same
    state file as our os-ken apps. `wait_for_config`: the config is not written yet; once
    spawned, the process imports its modules (a second of Python) and waits until
    release() writes `config` completed with what the network adds."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    state = run_dir / "controller-state.json"
    own = {"state_file": str(state), "status_port": port}
    config_path = run_dir / "p4rt-controller.json"
    argv = [sys.executable, "-m", "sdnperf.controllers.p4rt", "--config", str(config_path)]
    if wait_for_config:
        argv.append("--wait-for-config")
    else:
        write_config(config_path, {**config, **own})
    pythonpath = str(Path(__file__).resolve().parents[2])
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")]))}
    proc = ControllerProcess(
        f"p4rt-{config.get('app', 'l2-learning')}", argv, run_dir, port, env=env, state_file=state
    )
    if wait_for_config:
        proc.config_path, proc.config, proc.own_config = config_path, dict(config), own
    return proc


def write_config(path: Path, config: dict) -> None:
    """The controller's config file, replaced whole (the controller never reads half)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(config, indent=1))
    tmp.replace(path)
