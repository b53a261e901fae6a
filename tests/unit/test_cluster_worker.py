"""The node worker's raylet watch: a node whose raylet is gone ends its run at once."""

import os
import subprocess
import threading

import psutil

from sdnperf.cluster.worker import exit_when_gone, raylet_of


def test_the_callback_runs_once_the_watched_process_ends():
    daemon = subprocess.Popen(["sleep", "30"])
    gone = threading.Event()
    exit_when_gone(psutil.Process(daemon.pid), gone.set, poll_s=0.02)
    assert not gone.wait(0.2)  # alive: nothing happens
    daemon.kill()
    daemon.wait()
    assert gone.wait(5)


def test_a_killed_process_not_yet_reaped_counts_as_gone():
    daemon = subprocess.Popen(["sleep", "30"])  # our child: a zombie until we wait()
    gone = threading.Event()
    exit_when_gone(psutil.Process(daemon.pid), gone.set, poll_s=0.02)
    daemon.kill()
    try:
        assert gone.wait(5)
        assert psutil.Process(daemon.pid).status() == psutil.STATUS_ZOMBIE  # not reaped yet
    finally:
        daemon.wait()


def test_a_stopped_watch_never_calls_back():
    daemon = subprocess.Popen(["sleep", "30"])
    gone = threading.Event()
    stop = exit_when_gone(psutil.Process(daemon.pid), gone.set, poll_s=0.02)
    stop.set()
    daemon.kill()
    daemon.wait()
    assert not gone.wait(0.3)


def test_a_process_outside_ray_has_no_raylet():
    assert raylet_of(os.getpid()) is None
    assert raylet_of(2**22 + 12345) is None  # no such process
