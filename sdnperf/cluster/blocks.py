"""Blocks: the runs that must share a machine so that their comparison is fair.

A block is every architecture of one (topology, workload, sweep point, repetition). The
architectures of a block are compared against each other, so they run on one node, one
after the other; different blocks may run on different nodes. A sweep parameter of one
architecture (`architecture.NAME.…`) does not split a block: the runs of that architecture
at each of its values are compared with the same runs of the others.

Runs are treated as black boxes with `key`, `workload.name`, `repetition` and, when the
plan has them, `topology` (label) and `point` ((path, value), ...).
"""

from __future__ import annotations

from dataclasses import dataclass

BlockKey = tuple  # (topology, workload, point without architecture parameters, repetition)


@dataclass(frozen=True)
class Block:
    key: BlockKey
    runs: tuple  # RunSpecs, in plan order

    @property
    def label(self) -> str:
        topology, workload, point, rep = self.key
        where = ",".join(f"{p}={v}" for p, v in point)
        return "|".join(str(part) for part in (topology, workload, where, rep) if part != "")


def block_key(run, default_topology: str = "") -> BlockKey:
    point = tuple(
        (path, value)
        for path, value in getattr(run, "point", ()) or ()
        if not str(path).startswith("architecture.")
    )
    topology = getattr(run, "topology", "") or default_topology
    return (topology, run.workload.name, point, run.repetition)


def make_blocks(plan, default_topology: str = "") -> list[Block]:
    """Group the plan's runs into blocks; blocks in the order of their first run."""
    grouped: dict[BlockKey, list] = {}
    for run in plan:
        grouped.setdefault(block_key(run, default_topology), []).append(run)
    return [Block(key, tuple(runs)) for key, runs in grouped.items()]


def blocks_to_run(blocks: list[Block], done_keys: set[str]) -> list[Block]:
    """On resume: a block whose runs all finished ok is skipped; any other block runs again
    whole, so that its architectures are still compared on one node (at most one block per
    node was under way when the driver stopped, since runs are committed one by one)."""
    return [b for b in blocks if not all(r.key in done_keys for r in b.runs)]
