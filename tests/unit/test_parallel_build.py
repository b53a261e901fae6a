"""The scheduling of emulation/parallel_build.py: links split into rounds where no node
appears twice (every link once, topology order kept inside a round), and run_all's
results, errors and bookkeeping of what was made before an error."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("mininet")

from sdnperf.emulation.parallel_build import node_disjoint_rounds, run_all  # noqa: E402


def test_rounds_never_give_a_node_two_links_at_once():
    pairs = [("h1", "s1"), ("h2", "s1"), ("s1", "s2"), ("h3", "s2"), ("h4", "s3"), ("s2", "s3")]
    rounds = node_disjoint_rounds(pairs)
    assert sorted(i for r in rounds for i in r) == list(range(len(pairs)))
    for members in rounds:
        nodes = [n for i in members for n in pairs[i]]
        assert len(nodes) == len(set(nodes)), members
        assert members == sorted(members)
    # s1 has three links: at least three rounds; the first takes every link it can
    assert len(rounds) == 3
    assert rounds[0] == [0, 3, 4]


def test_a_star_needs_one_round_per_link_and_a_matching_one_round():
    assert node_disjoint_rounds([("s", f"h{i}") for i in range(4)]) == [[0], [1], [2], [3]]
    assert node_disjoint_rounds([(f"a{i}", f"b{i}") for i in range(4)]) == [[0, 1, 2, 3]]
    assert node_disjoint_rounds([]) == []


def test_run_all_runs_at_once_and_keeps_order():
    started = []
    lock = threading.Lock()

    def slow(x):
        with lock:
            started.append(x)
        time.sleep(0.2)
        return x * 10

    t = time.monotonic()
    kept: list = []
    assert run_all(slow, [3, 1, 2], kept.extend) == [30, 10, 20]
    assert time.monotonic() - t < 0.5  # three 0.2 s calls overlapped
    assert kept == [30, 10, 20]


def test_run_all_waits_for_every_call_and_keeps_the_good_ones_before_raising():
    finished = []

    def work(x):
        if x == 1:
            raise ValueError("one")
        time.sleep(0.1)
        finished.append(x)
        return x

    kept: list = []
    with pytest.raises(ValueError, match="one"):
        run_all(work, [0, 1, 2], kept.extend)
    assert sorted(finished) == [0, 2]  # nothing still running when the error came out
    assert kept == [0, 2]
