"""A ctlbench file as a study of the one pipeline (sdnperf/ctlbench/study.py): its plan's
keys, sweeps and order, the probe ceiling each run is judged against, and the errors of a
bad [[sweep]]."""

from __future__ import annotations

import pytest

from sdnperf.ctlbench import config
from sdnperf.ctlbench.study import CtlbenchStudy
from sdnperf.runner import plan_of
from sdnperf.samples import RunResult

BASE = (
    '[study]\nname = "t"\nrepetitions = 2\n[[controller]]\nkind = "echo"\n'
    '[[controller]]\nkind = "ovs-testcontroller"\n'
    '[load]\nmode = "throughput"\nswitches = [1, 4]\n'
)


def study(extra: str = "") -> CtlbenchStudy:
    text = BASE + extra
    return CtlbenchStudy("t.toml", text, config.parse(text, "t.toml"))


def test_keys_without_a_sweep_are_the_old_ones():
    keys = [r.key for r in study().plan()]
    assert keys[:2] == ["ceiling|1sw", "ceiling|4sw"]
    assert keys[2:4] == ["echo|throughput|1sw|1", "ovs-testcontroller|throughput|1sw|1"]
    assert len(keys) == 2 + 2 * 2 * 2 == len(set(keys))


def test_a_sweep_multiplies_the_plan_and_names_its_point():
    s = study('[[sweep]]\nparam = "load.window"\nvalues = [16, 256]\n')
    plan = plan_of(s)  # the pipeline's plan of either kind
    assert len(plan) == 2 * 2 + 2 * 2 * 2 * 2  # ceilings per switch count and point
    assert "echo|throughput|4sw|load.window=256|2" in {r.key for r in plan}
    run = next(r for r in plan if r.key == "echo|throughput|4sw|load.window=256|2")
    assert run.load.window == 256 and run.point == (("load.window", 256),)
    assert run.params == {"load.window": 256}
    assert run.topology == "4 switches" and run.architecture.name == "echo"
    assert [r.index for r in plan] == list(range(len(plan)))


def test_random_order_shuffles_by_seed_and_keeps_the_ceilings_first():
    ordered = [r.key for r in study().plan()]
    a = [r.key for r in study().plan()]
    text = BASE.replace('name = "t"', 'name = "t"\norder = "random"\nseed = 7')
    shuffled = [r.key for r in CtlbenchStudy("t", text, config.parse(text)).plan()]
    again = [r.key for r in CtlbenchStudy("t", text, config.parse(text)).plan()]
    assert a == ordered
    assert shuffled == again  # the same seed gives the same order
    assert sorted(shuffled) == sorted(ordered) and shuffled != ordered
    assert shuffled[:2] == ["ceiling|1sw", "ceiling|4sw"]


def test_each_run_is_judged_against_the_ceiling_of_its_switches_and_point():
    s = study('[[sweep]]\nparam = "load.threads"\nvalues = [1, 2]\n')
    ceiling = RunResult(
        key="ceiling|4sw|load.threads=2",
        topology="4sw",
        architecture="echo (probe ceiling)",
        workload="ceiling",
        repetition=1,
        params={"ceiling": True, "switches": 4, "answered_rate": 5000.0},
        status="ok",
        point={"load.threads": 2},
    )
    s.observe(ceiling)
    s.observe(
        RunResult(
            key="x", topology="", architecture="", workload="", repetition=1, params={}, status="ok"
        )
    )
    assert s.ceilings == {(4, (("load.threads", 2),)): 5000.0}
    failed = RunResult(
        key="ceiling|1sw|load.threads=1",
        topology="1sw",
        architecture="echo (probe ceiling)",
        workload="ceiling",
        repetition=1,
        params={"ceiling": True, "switches": 1, "answered_rate": 1.0},
        status="failed",
    )
    s.observe(failed)
    assert len(s.ceilings) == 1  # a failed ceiling is no ceiling


@pytest.mark.parametrize(
    "sweep, words",
    [
        ('param = "load.window"\nvalues = [0]', "sweep[0]: load.window = 0"),
        ('param = "load.protocol"\nvalues = ["p4runtime"]', "expected load.FIELD"),
        ('param = "topology.n"\nvalues = [1]', "expected load.FIELD"),
        ('param = "load.window"\nvalues = []', "sweep"),
    ],
)
def test_a_bad_sweep_is_refused_in_words(sweep, words):
    with pytest.raises(config.ConfigError) as exc:
        config.parse(BASE + "[[sweep]]\n" + sweep + "\n", "t.toml")
    assert words in str(exc.value) and "t.toml" in str(exc.value)
