"""Which block each node runs next, and what happens when a node is lost (no Ray here).

Rules (docs/scale-out.md, "Failures"):
- a node runs one block at a time, its runs one after the other;
- a run that fails by itself (a controller crashed, a workload error) is an ordinary failed
  run, stored with its reason, exactly as on one machine; the block goes on;
- a node lost mid-run fails the run under way (stored with the reason) and the block is
  run again, whole, on another node, once: whole, so that all its architectures are still
  compared on one machine (the new results replace those of the lost node);
- a block lost a second time is given up: its run under way and the runs it had not
  reached are stored as failed, and `--resume` retries them later.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sdnperf.cluster.blocks import Block

MAX_ATTEMPTS = 2  # the first, and one retry on another node


@dataclass
class Assignment:
    """A block on a node: which attempt it is and how far it has come."""

    block: Block
    node: str
    attempt: int
    history: list[dict] = field(default_factory=list)  # earlier attempts: node, error
    done: int = 0  # runs of the block finished on this node

    @property
    def current(self):
        return self.block.runs[self.done]


@dataclass
class Lost:
    """What a lost node means for its block."""

    failed_run: object  # the run that was under way: stored as failed
    retried: bool  # the block is queued again, for another node
    not_run: list = field(default_factory=list)  # runs given up without being run


@dataclass
class _Queued:
    block: Block
    attempt: int = 1
    excluded: frozenset = frozenset()  # nodes this block must not go to again
    history: list = field(default_factory=list)


class Schedule:
    def __init__(self, blocks: list[Block]):
        self._queue: deque[_Queued] = deque(_Queued(b) for b in blocks)
        self.busy: dict[str, Assignment] = {}  # node -> its block under way

    def assign(self, node: str) -> Assignment | None:
        """The next block for an idle node (None: nothing this node may take)."""
        assert node not in self.busy, f"{node} already runs a block"
        for queued in self._queue:
            if node not in queued.excluded:
                self._queue.remove(queued)
                job = Assignment(queued.block, node, queued.attempt, list(queued.history))
                self.busy[node] = job
                return job
        return None

    def run_done(self, node: str):
        """The node's current run finished (ok or failed by itself): its next run, or None
        when the block is complete and the node is free again."""
        job = self.busy[node]
        job.done += 1
        if job.done < len(job.block.runs):
            return job.current
        del self.busy[node]
        return None

    def node_lost(self, node: str, reason: str) -> Lost:
        job = self.busy.pop(node)
        failed = job.current
        history = job.history + [{"node": node, "error": reason}]
        if job.attempt < MAX_ATTEMPTS:
            # Ahead of the queue: its other runs may already be stored from the lost node.
            self._queue.appendleft(
                _Queued(job.block, job.attempt + 1, frozenset(h["node"] for h in history), history)
            )
            return Lost(failed, retried=True)
        return Lost(failed, retried=False, not_run=list(job.block.runs[job.done + 1 :]))

    def stranded(self, alive: set[str]) -> list[Block]:
        """Blocks no live node may take (every node left was excluded, or none is left);
        they leave the queue. Call when no block is under way."""
        if self.busy:
            return []
        out = [q.block for q in self._queue if not (alive - q.excluded)]
        self._queue = deque(q for q in self._queue if alive - q.excluded)
        return out

    def finished(self) -> bool:
        return not self._queue and not self.busy

    @property
    def queued(self) -> int:
        return len(self._queue)
