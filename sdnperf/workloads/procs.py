"""Start tools inside Mininet hosts and make sure none of them outlives the workload.

`ProcessGroup` is a context manager: everything started through it is terminated and
reaped when the block exits, whether it finished, raised or was interrupted by Ctrl-C.
Output goes to files, not pipes, so a chatty tool can never block on a full pipe while
we wait for another one.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import psutil

from .context import WorkloadContext

# After SIGTERM, how long a tool gets to exit before SIGKILL.
TERM_GRACE_S = 1.0


@dataclass
class Launched:
    """One process started in a host, with where its output goes."""

    label: str  # e.g. "iperf3 client h1->h2", used in error messages
    popen: subprocess.Popen
    out_path: str
    err_path: str
    started: float  # time.time() just before the launch
    timed_out: bool = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def output(self) -> str:
        return _read(self.out_path)

    def errors(self) -> str:
        return _read(self.err_path).strip()


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def listens(pid: int, port: int, name: str) -> bool:
    """True once `pid` runs `name` (mnexec has exec'd, so it is in the host's namespace)
    and that namespace has a TCP socket listening on `port`.

    The socket tables are read from /proc/PID/net, the process's own network namespace:
    psutil's connection lists read the caller's (the root namespace's) tables instead.
    """
    try:
        if psutil.Process(pid).name() != name:
            return False
    except psutil.Error:
        return False
    wanted = f":{port:04X}"
    for table in ("tcp", "tcp6"):
        for line in _read(f"/proc/{pid}/net/{table}").splitlines()[1:]:
            cols = line.split()
            if len(cols) > 3 and cols[1].endswith(wanted) and cols[3] == "0A":  # LISTEN
                return True
    return False


class ProcessGroup:
    """Processes of one workload; all stopped and reaped on exit of the `with` block."""

    def __init__(self, ctx: WorkloadContext):
        self._ctx = ctx
        self._procs: list[Launched] = []
        self._dir = tempfile.mkdtemp(prefix="sdnperf-wl-")

    @property
    def started(self) -> int:
        return len(self._procs)

    def start(self, host: Any, argv: list[str], label: str) -> Launched:
        n = len(self._procs)
        out_path = os.path.join(self._dir, f"{n}.out")
        err_path = os.path.join(self._dir, f"{n}.err")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.time()
            popen = host.popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        launched = Launched(label, popen, out_path, err_path, started)
        self._procs.append(launched)
        self._ctx.on_process(popen.pid)
        return launched

    def wait(self, procs: list[Launched], timeout_s: float) -> list[Launched]:
        """Wait for `procs` until a shared deadline; kill the late ones and return them."""
        deadline = time.monotonic() + timeout_s
        late = []
        for proc in procs:
            try:
                proc.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.timed_out = True
                late.append(proc)
        for proc in late:
            _stop(proc.popen)
        return late

    def stop_all(self) -> None:
        interrupted: BaseException | None = None
        for proc in self._procs:
            try:
                _stop(proc.popen)
            except KeyboardInterrupt as exc:  # keep stopping the others first
                interrupted = exc
        if interrupted is not None:
            raise interrupted

    def __enter__(self) -> "ProcessGroup":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop_all()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)


def _stop(popen: subprocess.Popen) -> None:
    """SIGTERM, a short grace, then SIGKILL; always reap so no zombie is left."""
    if popen.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            popen.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            popen.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:
            # A second Ctrl-C during cleanup must not leave the tool running.
            popen.kill()
            popen.wait()
            raise
