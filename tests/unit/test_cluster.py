"""The pure parts of `run --cluster`: blocks, the schedule and its retry rule, the nodes'
preflight comparison, node labels, the node-variance test, and the CLI without Ray."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from sdnperf.cli import EXIT_BAD_INPUT, main
from sdnperf.cluster import INSTALL_HINT
from sdnperf.cluster.blocks import block_key, blocks_to_run, make_blocks
from sdnperf.cluster.driver import node_labels, unreachable
from sdnperf.cluster.local import local_size
from sdnperf.cluster.preflight import compare_nodes
from sdnperf.cluster.schedule import MAX_ATTEMPTS, Schedule
from sdnperf.cluster.variance import Value, analyse
from sdnperf.study.loader import load_study
from sdnperf.study.plan import plan_runs

STUDY = textwrap.dedent("""\
    [study]
    name = "blocks"
    repetitions = 3
    [topology]
    kind = "linear"
    switches = 2
    [[architecture]]
    name = "bridge"
    kind = "bridge"
    [[architecture]]
    name = "ovs"
    kind = "ovs-standalone"
    [[architecture]]
    name = "of"
    kind = "openflow"
    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    [[workload]]
    name = "tcp"
    kind = "iperf-tcp"
    pairs = [["h1", "h2"]]
    duration = 1
    """)


@pytest.fixture
def plan(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    study = load_study(path)
    return study, plan_runs(study)


# -- blocks ------------------------------------------------------------------------------
def test_a_block_is_every_architecture_of_one_workload_and_repetition(plan):
    study, runs = plan
    blocks = make_blocks(runs, study.topology.name)
    assert len(blocks) == 2 * 3  # workloads × repetitions
    for block in blocks:
        assert [r.architecture.name for r in block.runs] == ["bridge", "ovs", "of"]
        assert len({(r.workload.name, r.repetition) for r in block.runs}) == 1
    assert sorted(r.key for b in blocks for r in b.runs) == sorted(r.key for r in runs)


@dataclass(frozen=True)
class SweptRun:
    """A run as the sweep-aware plan makes them (topology label and point)."""

    key: str
    architecture: object
    workload: object
    repetition: int
    topology: str
    point: tuple


def _named(name):
    return SimpleNamespace(name=name)


def test_an_architecture_parameter_does_not_split_a_block_but_a_link_rate_does():
    runs = [
        SweptRun(
            f"{arch}-{bw}-{passes}",
            _named(arch),
            _named("tcp"),
            1,
            "line",
            tuple(
                p
                for p in (("topology.link.bw", bw), ("architecture.p4.params.passes", passes))
                if p[1]
            ),
        )
        for bw in (10, 100)
        for arch, passes in (("bridge", None), ("p4", 1), ("p4", 2))
    ]
    blocks = make_blocks(runs)
    assert len(blocks) == 2
    for block in blocks:
        assert len(block.runs) == 3
        assert len({dict(r.point)["topology.link.bw"] for r in block.runs}) == 1
    assert block_key(runs[0])[2] == (("topology.link.bw", 10),)
    assert blocks[0].label == "line|tcp|topology.link.bw=10|1"


def test_resume_skips_complete_blocks_and_reruns_incomplete_ones_whole(plan):
    study, runs = plan
    blocks = make_blocks(runs, study.topology.name)
    done = {r.key for r in blocks[0].runs} | {blocks[1].runs[0].key}
    todo = blocks_to_run(blocks, done)
    assert blocks[0] not in todo
    assert todo[0] == blocks[1] and len(todo[0].runs) == 3  # whole, not only the missing two
    assert len(todo) == len(blocks) - 1


# -- schedule and retry ------------------------------------------------------------------
def test_blocks_spread_over_idle_nodes_and_run_one_run_at_a_time(plan):
    study, runs = plan
    schedule = Schedule(make_blocks(runs, study.topology.name))
    a, b = schedule.assign("a"), schedule.assign("b")
    assert a.block != b.block
    with pytest.raises(AssertionError):
        schedule.assign("a")  # a node has one block at a time
    assert a.current.architecture.name == "bridge"
    assert schedule.run_done("a").architecture.name == "ovs"
    assert schedule.run_done("a").architecture.name == "of"
    assert schedule.run_done("a") is None and "a" not in schedule.busy


def test_a_lost_node_fails_its_run_and_the_block_reruns_whole_elsewhere_once(plan):
    study, runs = plan
    blocks = make_blocks(runs, study.topology.name)[:2]
    schedule = Schedule(blocks)
    first = schedule.assign("a")
    schedule.run_done("a")  # bridge done on a
    lost = schedule.node_lost("a", "node a lost")
    assert lost.retried and lost.failed_run.architecture.name == "ovs" and not lost.not_run
    assert schedule.assign("a") is not None  # a (if it came back) gets the other block ...
    retry = schedule.assign("b")  # ... and the lost block goes to b, whole, first in line
    assert retry.block == first.block and retry.attempt == 2 and retry.done == 0
    assert retry.history == [{"node": "a", "error": "node a lost"}]
    schedule.run_done("b")
    second = schedule.node_lost("b", "node b lost")
    assert MAX_ATTEMPTS == 2 and not second.retried
    assert [r.architecture.name for r in second.not_run] == ["of"]


def test_a_block_no_live_node_may_take_is_stranded(plan):
    study, runs = plan
    schedule = Schedule(make_blocks(runs, study.topology.name)[:1])
    schedule.assign("a")
    schedule.node_lost("a", "gone")
    assert schedule.assign("a") is None  # never back to the node that lost it
    assert len(schedule.stranded({"a"})) == 1
    assert schedule.finished()


# -- node preflight ----------------------------------------------------------------------
FACTS = {
    "sdnperf": "0.1.0",
    "code": "abc",
    "openvswitch": "3.1.0",
    "netem": False,
    "capabilities": {"ovs-vswitchd": True, "faucet": True},
    "kernel": "6.1",
    "cpu_model": "EPYC",
    "refusal": None,
}


def test_identical_nodes_agree():
    verdict = compare_nodes({"a": dict(FACTS), "b": dict(FACTS), "c": dict(FACTS)})
    assert not verdict.mixed() and not verdict.warnings


def test_the_odd_node_out_is_named_with_what_differs():
    odd = {
        **FACTS,
        "openvswitch": "2.17.0",
        "capabilities": {"ovs-vswitchd": True, "faucet": False},
    }
    verdict = compare_nodes({"a": dict(FACTS), "b": odd, "c": dict(FACTS)})
    assert verdict.mixed()
    text = "\n".join(verdict.differences)
    assert "node b: openvswitch is '2.17.0', the other nodes have '3.1.0'" in text
    assert "node b: capabilities faucet: False where the others have True" in text
    assert "node a" not in text and "node c" not in text


def test_a_node_that_cannot_run_the_study_refuses_and_hardware_only_warns():
    verdict = compare_nodes(
        {"a": dict(FACTS), "b": {**FACTS, "kernel": "6.8", "refusal": "sch_netem missing"}}
    )
    assert verdict.refused == {"b": "sch_netem missing"}
    assert any("kernel" in w for w in verdict.warnings)
    assert not any("kernel" in d for d in verdict.differences)
    other_code = compare_nodes({"a": dict(FACTS), "b": {**FACTS, "code": "def"}})
    assert other_code.mixed() and "code" in other_code.differences[0]


def test_nodes_sharing_a_host_are_numbered():
    labels = node_labels({"n1": "vm", "n2": "lab3", "n3": "vm"}, order=["n1", "n2", "n3"])
    assert labels == {"n1": "vm-1", "n2": "lab3", "n3": "vm-2"}


# -- node variance -----------------------------------------------------------------------
def _values(means: dict[str, float], n=6, spread=0.01):
    cell = ("t", "", "bridge", "ping", "rtt_ms")
    return [Value(node, cell, mean + spread * i) for node, mean in means.items() for i in range(n)]


def test_a_node_that_moves_the_numbers_is_flagged():
    report = analyse(_values({"a": 1.0, "b": 2.0}), {"a": 6, "b": 6})
    assert len(report.flagged) == 1
    assert "the node explains variance of ping rtt_ms, bridge" in report.warnings()[0]


def test_nodes_with_the_same_numbers_are_not_flagged_and_single_runs_are_not_tested():
    same = analyse(_values({"a": 1.0, "b": 1.0}), {"a": 6, "b": 6})
    assert same.tested and not same.flagged
    one_each = analyse(_values({"a": 1.0, "b": 2.0}, n=1), {"a": 1, "b": 1})
    assert not one_each.tested and one_each.cells[0].per_node == {"a": (1, 1.0), "b": (1, 2.0)}


# -- command line ------------------------------------------------------------------------
def test_local_size():
    assert local_size("local:2") == 2 and local_size("ray://h:10001") is None
    with pytest.raises(ValueError, match="between 1 and"):
        local_size("local:0")


def test_cluster_without_ray_says_how_to_get_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    study = tmp_path / "s.toml"
    study.write_text(STUDY)
    assert main(["run", str(study), "--cluster", "local:2"]) == EXIT_BAD_INPUT
    err = " ".join(capsys.readouterr().err.split())
    assert "pip install 'sdnperf[cluster]'" in err and INSTALL_HINT.split(":")[0] in err


def test_a_bad_local_address_is_refused(capsys, tmp_path):
    assert main(["run", "--cluster", "local:x"]) == EXIT_BAD_INPUT
    assert "write local:N" in capsys.readouterr().err


def test_an_address_where_nothing_answers_is_refused_at_once():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        assert "nothing answers on 127.0.0.1:" in unreachable(f"127.0.0.1:{port}")
        assert "nothing answers" in unreachable(f"ray://127.0.0.1:{port}")
        s.listen()
        assert unreachable(f"127.0.0.1:{port}") is None
    assert "write HOST:PORT" in unreachable("headnode")
