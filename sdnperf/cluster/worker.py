"""The Ray actor on each node: it holds the node's `sdnperf_slot` for the whole study, so
no other study's run shares the machine, checks the node (preflight) and runs one run at
a time, each in a child process in its own network namespace (isolated.py): nodes that
share a kernel cannot collide, and a worker that dies takes its run's network down."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psutil
import ray

from sdnperf.cluster import NODE_RESOURCE
from sdnperf.cluster.isolated import available, run_isolated
from sdnperf.cluster.preflight import node_facts

RAYLET_POLL_S = 0.2


def raylet_of(pid: int) -> psutil.Process | None:
    """The raylet (a node's Ray daemon) among the ancestors of `pid`, or None."""
    try:
        for ancestor in psutil.Process(pid).parents():
            if ancestor.name() == "raylet":
                return ancestor
    except psutil.Error:
        pass
    return None


def alive(process: psutil.Process) -> bool:
    """Running, and not a zombie: a killed raylet stays a zombie until the process that
    started it reaps it (a `local:N` driver never does), and psutil counts zombies as
    running."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def exit_when_gone(daemon: psutil.Process, on_gone, poll_s: float = RAYLET_POLL_S):
    """Call `on_gone()` from a daemon thread once `daemon` has ended; returns the thread's
    stop event (set it to stop watching)."""
    stop = threading.Event()

    def watch():
        while not stop.wait(poll_s):
            if not alive(daemon):
                on_gone()
                return

    threading.Thread(target=watch, name="raylet-watch", daemon=True).start()
    return stop


def _lose_the_node() -> None:
    # Without its raylet the node is lost: a run that went on would be reported later as
    # if its node were healthy (Ray's core worker notices the raylet's death only after a
    # while, so a short run could finish first). Ending this worker at once kills the run's
    # namespace (PR_SET_PDEATHSIG) and the driver sees the actor die: the run fails and its
    # block is retried elsewhere, every time, not depending on how long the run had left.
    os._exit(1)


@ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
class NodeWorker:
    def __init__(self):
        raylet = raylet_of(os.getpid())
        self._watch = exit_when_gone(raylet, _lose_the_node) if raylet else None

    def facts(self, study) -> dict:

        facts = node_facts(study)
        facts["ray_node_id"] = ray.get_runtime_context().get_node_id()

        facts["isolation"] = available()  # None, or why runs cannot be isolated here
        return facts

    def run(self, study, run, results_dir: str, session: str):
        """(RunResult, log messages) of one run on this node."""
        return run_isolated(study, run, Path(results_dir), session=session)


def start_worker(node_id: str):
    """A NodeWorker pinned to one node, holding its slot."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeWorker.options(  # type: ignore[attr-defined]  # @ray.remote made it an ActorClass
        resources={NODE_RESOURCE: 1},
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    ).remote()
