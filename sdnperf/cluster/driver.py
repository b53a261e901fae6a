"""The driver of a cluster study: the single writer of the store.

It connects to Ray (or starts `local:N`), has every node check itself and refuses a mixed
cluster, then hands blocks to idle nodes (schedule.py) and commits each run as it comes
back, exactly as the one-machine runner does, so `--resume` works the same after a crash.
Each node's NodeWorker runs one run at a time; the driver sends a block's next run when the
previous one is back, so a run is committed the moment it finishes.
"""

from __future__ import annotations

import logging
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from sdnperf.cluster import NODE_RESOURCE
from sdnperf.cluster.blocks import blocks_to_run, make_blocks
from sdnperf.cluster.isolated import running
from sdnperf.cluster.local import LocalCluster, keep_ray_on_loopback, local_size
from sdnperf.cluster.preflight import Verdict, compare_nodes
from sdnperf.cluster.schedule import Assignment, Schedule
from sdnperf.runner import new_result, observe, plan_of
from sdnperf.samples import RunResult

PREFLIGHT_TIMEOUT_S = 180.0  # doctor probes take seconds; a busy slot would wait forever
WAIT_TICK_S = 5.0
TEARDOWN_WAIT_S = 60.0  # local:N: how long isolated runs get to take their networks down


class ClusterRefused(RuntimeError):
    """The cluster cannot run this study (nothing was started)."""


@dataclass
class Node:
    label: str
    ray_id: str
    # a NodeWorker's ray ActorHandle: its methods are made at run time (ray's
    # ActorHandle.__getattr__ is typed as returning Never)
    worker: Any
    facts: dict


class ClusterRunner:
    """Same contract as runner.StudyRunner: run() -> (study_id, results)."""

    def __init__(
        self,
        study,
        store,
        results_dir: Path,
        resume: bool,
        address: str,
        allow_mixed: bool = False,
        progress=None,
        log: Callable[[str], None] = print,
        only=None,
        provenance: dict | None = None,
    ):
        self.study, self.store, self.results_dir = study, store, Path(results_dir).resolve()
        self.only = only  # a run selection (`--only`), or None for every run
        self.provenance = provenance
        self.resume, self.address, self.allow_mixed = resume, address, allow_mixed
        self.progress, self.log = progress, log
        self.session = uuid.uuid4().hex[:12]
        self.nodes: dict[str, Node] = {}
        self._local: LocalCluster | None = None

    # -- connection ------------------------------------------------------------------------
    def run(self, environment: dict | None = None) -> tuple[int, list[RunResult]]:
        import ray

        try:
            self._connect()
            self._check_nodes()
            return self._run_blocks(environment or {})
        finally:
            for node in self.nodes.values():
                ray.kill(node.worker)  # its isolated run (if any) gets SIGTERM and tears down
            if self._local is not None:
                self._wait_for_teardown()
            ray.shutdown()
            if self._local is not None:
                self._local.stop()

    def _connect(self) -> None:
        import ray

        size = local_size(self.address)
        address = self.address
        if size is not None:
            self.log(f"starting a local Ray cluster of {size} node(s) on 127.0.0.1")
            self._local = LocalCluster(size)
            address = self._local.start()
        else:
            problem = unreachable(address)
            if problem:
                raise ClusterRefused(f"cannot reach the Ray cluster at {address}: {problem}")
            if address.split("://")[-1].split(":")[0] in ("127.0.0.1", "localhost"):
                keep_ray_on_loopback()
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ClusterRefused(
                f"cannot connect to the Ray cluster at {self.address}: {exc}"
            ) from None

    def _wait_for_teardown(self) -> None:

        deadline = time.monotonic() + TEARDOWN_WAIT_S
        while running(self.session) and time.monotonic() < deadline:
            time.sleep(0.2)

    # -- preflight -------------------------------------------------------------------------
    def _check_nodes(self) -> None:
        import ray

        # lazy: pulls in google.protobuf, ray, wanted only here
        from sdnperf.cluster.worker import start_worker

        alive = [
            n
            for n in ray.nodes()
            if n.get("Alive") and n.get("Resources", {}).get(NODE_RESOURCE, 0) >= 1
        ]
        if not alive:
            raise ClusterRefused(
                f"no node of the Ray cluster at {self.address} offers the {NODE_RESOURCE} "
                f"resource; start each node with `ray start ... --resources "
                f"'{{\"{NODE_RESOURCE}\": 1}}'` (docs/scale-out.md)"
            )
        workers = {n["NodeID"]: start_worker(n["NodeID"]) for n in alive}
        refs = {workers[nid].facts.remote(self.study): nid for nid in workers}
        self.log(f"preflight on {len(refs)} node(s)")
        ready, pending = ray.wait(list(refs), num_returns=len(refs), timeout=PREFLIGHT_TIMEOUT_S)
        facts: dict[str, dict] = {}
        for ref in ready:
            try:
                facts[refs[ref]] = ray.get(ref)
            except ray.exceptions.RayError as exc:
                facts[refs[ref]] = {
                    "refusal": f"its preflight failed: {_first_line(exc)}",
                    "host": refs[ref][:8],
                }
        for ref in pending:
            facts[refs[ref]] = {
                "host": refs[ref][:8],
                "refusal": (
                    f"no answer to the preflight within {PREFLIGHT_TIMEOUT_S:.0f}s (is its "
                    f"{NODE_RESOURCE} held by another study?)"
                ),
            }
        for f in facts.values():
            if f.get("isolation") and not f.get("refusal"):
                f["refusal"] = f"runs cannot be isolated in namespaces there: {f['isolation']}"
        labels = node_labels(
            {nid: f.get("host", nid[:8]) for nid, f in facts.items()},
            order=[n["NodeID"] for n in alive],
        )
        by_label = {labels[nid]: facts[nid] for nid in labels}
        verdict = compare_nodes({label: _comparable(f) for label, f in by_label.items()})
        for warning in verdict.warnings:
            self.log(f"warning: {warning} (blocking keeps each comparison on one node)")
        if verdict.mixed():
            text = verdict_text(verdict)
            usable = [label for label in by_label if label not in verdict.refused]
            if not self.allow_mixed or not usable:
                for worker in workers.values():
                    ray.kill(worker)
                raise ClusterRefused(
                    f"the cluster is mixed, the study does not start:\n{text}\n"
                    + (
                        "make the nodes agree, or pass --allow-mixed to run anyway on the "
                        "nodes that can"
                        if usable
                        else "no node can run this study"
                    )
                )
            self.log(f"--allow-mixed: going on despite:\n{text}")
        for nid, label in labels.items():
            if label in verdict.refused:
                ray.kill(workers[nid])
            else:
                self.nodes[label] = Node(label, nid, workers[nid], by_label[label])
        self.log(f"nodes: {', '.join(self.nodes)}")

    # -- the study -------------------------------------------------------------------------
    def _run_blocks(self, environment: dict) -> tuple[int, list[RunResult]]:
        import ray
        from ray.exceptions import RayError, RayTaskError

        cfg = self.study.config
        environment = {
            **environment,
            "cluster": {
                "address": self.address,
                "nodes": {n.label: n.facts for n in self.nodes.values()},
            },
        }
        extra = {"provenance": self.provenance} if self.provenance else {}
        study_id = self.store.open_study(
            self.study.name, self.study.path, cfg.model_dump(mode="json"), environment, **extra
        )
        done = self.store.done_keys(study_id) if self.resume else set()
        for stored in self.store.runs(study_id) if done else []:
            observe(self.study, stored)
        plan = [r for r in plan_of(self.study) if self.only is None or self.only.matches(r)]
        blocks = make_blocks(plan, self.study.topology.name)
        todo = blocks_to_run(blocks, done)
        if self.resume and done:
            self.log(
                f"resuming: {len(blocks) - len(todo)} of {len(blocks)} blocks complete; "
                "incomplete blocks run again whole"
            )
        schedule = Schedule(todo)
        self._total = sum(len(b.runs) for b in todo)
        self._started = 0
        results: dict[str, RunResult] = {}
        inflight: dict = {}  # ObjectRef -> (node label, run, submitted at)

        def submit(label: str, run) -> None:
            self._started += 1
            if self.progress:
                self.progress(self._started, self._total, run)
            ref = self.nodes[label].worker.run.remote(
                self.study, run, str(self.results_dir), self.session
            )
            inflight[ref] = (label, run, time.time())

        def commit(result: RunResult, job: Assignment) -> None:
            result.params["node"] = job.node
            result.params["cluster"] = {
                "node": job.node,
                "block": job.block.label,
                "attempt": job.attempt,
                "previous": job.history,
            }
            self.store.record_run(study_id, result)
            observe(self.study, result)  # sent with the next runs (a ctlbench ceiling)
            results[result.key] = result

        while not schedule.finished():
            for label in sorted(set(self.nodes) - set(schedule.busy)):
                job = schedule.assign(label)
                if job:
                    self.log(
                        f"{label}: block {job.block.label} ({len(job.block.runs)} runs"
                        f"{', attempt %d' % job.attempt if job.attempt > 1 else ''})"
                    )
                    submit(label, job.current)
            if not inflight:
                for block in schedule.stranded(set(self.nodes)):
                    job = Assignment(block, "", 0)
                    for run in block.runs:
                        commit(
                            failed_result(
                                self.study,
                                run,
                                "not run: no node of the cluster is left that may run its block",
                            ),
                            job,
                        )
                continue
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=WAIT_TICK_S)
            for ref in ready:
                label, run, submitted = inflight.pop(ref)
                job = schedule.busy[label]
                try:
                    result, messages = ray.get(ref)
                except RayTaskError as exc:  # the run's code raised on the node
                    cause = getattr(exc, "cause", None)  # the node's own exception
                    reason = f"{type(cause).__name__}: {cause}" if cause else _first_line(exc)
                    result, messages = failed_result(self.study, run, reason, submitted), []
                except RayError as exc:  # the worker or its node is gone
                    self._node_lost(label, run, exc, schedule, commit, submitted)
                    continue
                for message in messages:
                    self.log(f"{label}: {message}")
                commit(result, job)
                following = schedule.run_done(label)
                if following is not None:
                    submit(label, following)
        return study_id, list(results.values())

    def _node_lost(self, label: str, run, exc, schedule: Schedule, commit, submitted) -> None:
        import ray

        reason = f"node {label} lost mid-run: {_first_line(exc)}"
        job = schedule.busy[label]
        node = self.nodes.pop(label)
        ray.kill(node.worker)
        lost = schedule.node_lost(label, reason)
        commit(failed_result(self.study, run, reason, submitted), job)
        if lost.retried:
            self._total += len(job.block.runs)
            self.log(f"{reason}; block {job.block.label} runs again on another node")
        else:
            self.log(f"{reason}; block {job.block.label} was already retried once: given up")
            for other in lost.not_run:
                commit(
                    failed_result(
                        self.study, other, f"not run: {reason} (second loss of its block)"
                    ),
                    job,
                )


def unreachable(address: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at a Ray address (HOST:PORT or ray://HOST:PORT), or None.
    Ray itself would retry a dead address for minutes."""
    host, _, port = address.split("://")[-1].rpartition(":")
    if not host or not port.isdigit():
        return "write HOST:PORT (the head's GCS port, 6379 by default) or ray://HOST:PORT"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        return f"nothing answers on {host}:{port} ({exc.strerror or exc})"
    return None


def failed_result(study, run, reason: str, started: float | None = None) -> RunResult:
    """A run that produced nothing, with the reason (like execute_run's failed results)."""
    result = new_result(run.study or study, run, "failed", reason)
    result.started, result.finished = started or result.started, time.time()
    result.point, result.position = dict(run.point), run.index
    return result


def node_labels(hosts: dict[str, str], order: list[str]) -> dict[str, str]:
    """Ray node id -> a readable label: the host name, numbered where several nodes share
    one machine (local:N): vm-1, vm-2."""
    ids = [nid for nid in order if nid in hosts]
    count: dict[str, int] = {}
    for nid in ids:
        count[hosts[nid]] = count.get(hosts[nid], 0) + 1
    seen: dict[str, int] = {}
    labels = {}
    for nid in ids:
        host = hosts[nid]
        if count[host] == 1:
            labels[nid] = host
        else:
            seen[host] = seen.get(host, 0) + 1
            labels[nid] = f"{host}-{seen[host]}"
    return labels


def verdict_text(verdict: Verdict) -> str:
    lines = [f"  node {node} refuses: {why}" for node, why in verdict.refused.items()]
    lines += [f"  {d}" for d in verdict.differences]
    return "\n".join(lines)


def _comparable(facts: dict) -> dict:
    """Facts minus those that differ between nodes by nature."""
    return {
        k: v
        for k, v in facts.items()
        if k not in ("host", "hostname", "boot_id", "ray_node_id", "isolation")
    }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # RayTaskError's text starts with the remote traceback; its last line is the cause.
    return (lines[-1] if lines else type(exc).__name__)[:500]
