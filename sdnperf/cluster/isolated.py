"""One run in its own network, mount and PID namespaces, in a child process.

Every run on a cluster node goes through here. Several Ray nodes on one machine
(`--cluster local:N`, or real nodes that share a kernel) would build Mininet networks side by
side in one root namespace, where switch ports (s1-eth1 ...) and OVS bridges collide by name.
So each run goes to a child started with `unshare --net --mount --pid --fork --mount-proc
--kill-child=SIGTERM`: its own /sys (so /sys/class/net shows its namespace), a private tmpfs
on sdnperf's run root (OVS databases, sockets, registries) and on /run/netns, lo up
(controllers listen on loopback inside it). It writes the pickled RunResult to a file.

Nothing can outlive it: the child gets SIGTERM when its parent dies (PR_SET_PDEATHSIG on
`unshare`, which passes it on with --kill-child) and tears its network down; and it is PID 1
of its PID namespace, so when it ends, however it ends (Ray SIGKILLs a dead worker's
children), the kernel kills every process left in the namespace (OVS daemons, controllers,
host shells) and the network namespace goes with them.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sdnperf.cluster.node import run_here
from sdnperf.emulation import cleanup, kernel_limits

PR_SET_PDEATHSIG = 1
SESSION_ENV = "SDNPERF_CLUSTER_SESSION"  # marks a study's isolated runs (see running())


class IsolationError(RuntimeError):
    pass


def available() -> str | None:
    """None when runs can be isolated here, else why not."""
    if not shutil.which("unshare"):
        return "unshare (util-linux) is not installed"
    if os.geteuid() != 0:
        return "isolating runs in namespaces needs root"
    return None


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_isolated(study, run, results_dir: Path, session: str = "", timeout: float | None = None):
    """Run `run` in a fresh network namespace; returns (RunResult, log messages).
    `session` marks the child's environment, so a driver can wait for its runs to end."""
    why_not = available()
    if why_not:
        raise IsolationError(why_not)
    kernel_limits.raise_like_mininet()  # the namespace below takes them from here
    with tempfile.TemporaryDirectory(prefix="sdnperf-iso-") as tmp:
        request, reply = Path(tmp) / "request", Path(tmp) / "reply"
        request.write_bytes(pickle.dumps((study, run, str(results_dir))))
        # Tagged after this process (not the child, PID 1 in its namespace): `sdnperf clean`
        # treats the run's processes as leftovers once this worker is gone.
        env = {
            **os.environ,
            SESSION_ENV: session,
            cleanup.TAG_ENV: f"sdnperf-{os.getpid()}-{int(time.time())}-{run.index}",
        }
        proc = subprocess.Popen(
            [
                "unshare",
                "--net",
                "--mount",
                "--propagation",
                "private",
                "--pid",
                "--fork",
                "--mount-proc",
                "--kill-child=SIGTERM",
                "--",
                sys.executable,
                "-m",
                "sdnperf.cluster.isolated",
                str(request),
                str(reply),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_die_with_parent,
            # Its own session: a signal to the node's process group (Ray stopping) does not
            # cut its teardown short; it still gets SIGTERM when its parent dies.
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
        except BaseException:
            proc.terminate()  # the child tears its network down on SIGTERM
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
        if proc.returncode != 0 or not reply.exists():
            tail = "\n".join(output.strip().splitlines()[-15:])
            raise IsolationError(f"isolated run {run.key} exited with {proc.returncode}: {tail}")
        return pickle.loads(reply.read_bytes())


def running(session: str) -> list[int]:
    """PIDs of isolated runs of this session still alive (tearing their network down)."""
    marker = f"{SESSION_ENV}={session}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


# -- the child -----------------------------------------------------------------------------
def _enter_namespace() -> None:
    """Make the fresh namespaces usable: our own /sys, lo up, private run dirs."""
    for target in (cleanup.RUN_ROOT, Path("/run/netns")):
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "sdnperf-iso", str(target)], check=True)
    subprocess.run(["mount", "-t", "sysfs", "sysfs", "/sys"], check=True)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def _child(request: Path, reply: Path) -> int:
    stopped = []

    def stop(signum, frame):
        stopped.append(signum)
        raise SystemExit(128 + signum)  # unwinds execute_run's finally: network torn down

    signal.signal(signal.SIGTERM, stop)
    try:
        _enter_namespace()

        study, run, results_dir = pickle.loads(request.read_bytes())
        messages: list[str] = []
        result = run_here(study, run, Path(results_dir), messages.append)
        tmp = reply.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps((result, messages)))
        os.replace(tmp, reply)
        return 0
    finally:
        if stopped:  # our worker is gone (or gave up on us): nobody will remove the folder
            shutil.rmtree(request.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(_child(*(Path(a) for a in sys.argv[1:3])))
