"""`--only` expressions and `sdnperf check`'s duration estimate."""

from __future__ import annotations

import pytest

from sdnperf.study.estimate import NETWORK_BUILD_S, TEARDOWN_S, build_times, estimate
from sdnperf.study.plan import plan_runs
from sdnperf.study.select import SelectionError, parse_selection
from tests.unit.test_study_sweeps import BASE, SWEEP_BW, SWEEP_LEN, load


@pytest.fixture
def plan(tmp_path):
    return plan_runs(load(BASE + SWEEP_BW + SWEEP_LEN, tmp_path))


SWEPT = ["topology.link.bw", "workload.udp.length"]


def test_terms_and_alternatives(plan):
    sel = parse_selection("arch=p4, workload.udp.length=64|1400,topology.link.bw=unlimited", SWEPT)
    chosen = [r for r in plan if sel.matches(r)]
    assert len(chosen) == 2 * 2  # both lengths × both repetitions
    assert {r.architecture.name for r in chosen} == {"p4"}
    assert {r.params["topology.link.bw"] for r in chosen} == {"unlimited"}
    one = [
        r
        for r in plan
        if parse_selection(
            "rep=2,arch=bridge,topology.link.bw=10,workload.udp.length=64", SWEPT
        ).matches(r)
    ]
    assert [r.key for r in one] == [
        "linear-2x1|bridge|udp|topology.link.bw=10,workload.udp.length=64|2"
    ]


def test_a_run_without_the_parameter_does_not_match(tmp_path):
    text = (
        BASE + '\n[[sweep]]\nparam = "architecture.p4.app"\nvalues = ["l2-learning", "proactive"]\n'
    )
    runs = plan_runs(load(text, tmp_path))
    sel = parse_selection("architecture.p4.app=proactive", ["architecture.p4.app"])
    assert {r.architecture.name for r in runs if sel.matches(r)} == {"p4"}


@pytest.mark.parametrize(
    "expr, message",
    [
        ("arch", "not NAME=VALUE"),
        ("speed=3", "unknown name 'speed'"),
        ("arch=", "not NAME=VALUE"),
        ("arch=p4|", "empty value"),
        ("__import__('os')=1", "not NAME=VALUE"),
    ],
)
def test_bad_expressions_are_refused(expr, message):
    with pytest.raises(SelectionError, match=message.replace("(", r"\(")):
        parse_selection(expr, SWEPT)


class StoredRun:
    def __init__(self, topology, architecture, ready):
        self.topology, self.architecture, self.params = (
            topology,
            architecture,
            {"network_ready_s": ready},
        )


def test_estimate_uses_measured_build_times_else_the_constant(plan):
    # 24 runs of 1-s UDP; p4 measured at 4 s and 6 s on this topology (median 5), bridge never
    measured = build_times(
        [
            StoredRun("linear-2x1", "p4", 4.0),
            StoredRun("linear-2x1", "p4", 6.0),
            StoredRun("other", "p4", 100.0),
        ]
    )
    assert measured[("linear-2x1", "p4")] == 5.0
    est = estimate(plan, measured)
    per_kind = len(plan) // 2
    assert est.measured == per_kind and est.assumed == per_kind
    assert est.seconds == pytest.approx(
        per_kind * (5.0 + 1 + TEARDOWN_S) + per_kind * (NETWORK_BUILD_S + 1 + TEARDOWN_S)
    )
    assert "12 runs with measured" in est.text() and "12 runs assuming 5 s" in est.text()
