"""The Ray actor on each node: it holds the node's `sdnperf_slot` for the whole study, so
no other study's run shares the machine, checks the node (preflight) and runs one run at
a time, each in a child process in its own network namespace (isolated.py): nodes that
share a kernel cannot collide, and a worker that dies takes its run's network down."""

from __future__ import annotations

import ray

from sdnperf.cluster import NODE_RESOURCE


@ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
class NodeWorker:
    def facts(self, study) -> dict:
        from sdnperf.cluster.preflight import node_facts

        facts = node_facts(study)
        facts["ray_node_id"] = ray.get_runtime_context().get_node_id()
        from sdnperf.cluster.isolated import available

        facts["isolation"] = available()  # None, or why runs cannot be isolated here
        return facts

    def run(self, study, run, results_dir: str, session: str):
        """(RunResult, log messages) of one run on this node."""
        from pathlib import Path

        from sdnperf.cluster.isolated import run_isolated

        return run_isolated(study, run, Path(results_dir), session=session)


def start_worker(node_id: str):
    """A NodeWorker pinned to one node, holding its slot."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeWorker.options(
        resources={NODE_RESOURCE: 1},
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    ).remote()
