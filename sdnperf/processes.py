"""Stopping a child that runs in a session of its own (switches, link elements,
controllers): the whole process group, so helpers it forked go with it."""

from __future__ import annotations

import os
import signal
import subprocess


def signal_process_group(p: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """`sig` to `p`'s process group without waiting (nothing when it already exited)."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass


def stop_process_group(p: subprocess.Popen, kill_wait: float | None = 3) -> None:
    """SIGTERM to `p`'s process group, SIGKILL after 3 s, then wait up to `kill_wait` s
    (None: until it is gone). A process that already exited is left as it is."""
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=3)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=kill_wait)
