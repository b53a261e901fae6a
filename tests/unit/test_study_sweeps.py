"""Sweeps and several topologies: plan expansion (grid, zip), keys, run order, validation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sdnperf.study.loader import StudyError, load_study
from sdnperf.study.paths import valid_paths
from sdnperf.study.plan import plan_runs

BASE = textwrap.dedent("""\
    [study]
    name = "s"
    repetitions = 2
    seed = 7

    [topology]
    kind = "linear"
    switches = 2

    [[architecture]]
    name = "bridge"
    kind = "bridge"

    [[architecture]]
    name = "p4"
    kind = "p4"

    [[workload]]
    name = "udp"
    kind = "iperf-udp"
    pairs = [["h1", "h2"]]
    duration = 1
    """)


def load(text: str, tmp_path: Path):
    path = tmp_path / "study.toml"
    path.write_text(text)
    return load_study(path)


def problems(text: str, tmp_path: Path) -> list[str]:
    with pytest.raises(StudyError) as info:
        load(text, tmp_path)
    return [str(p) for p in info.value.problems]


SWEEP_BW = '\n[[sweep]]\nparam = "topology.link.bw"\nvalues = [10, 100, "unlimited"]\n'
SWEEP_LEN = '\n[[sweep]]\nparam = "workload.udp.length"\nvalues = [64, 1400]\n'


def test_without_sweeps_keys_are_what_they_were(tmp_path):
    runs = plan_runs(load(BASE, tmp_path))
    assert [r.key for r in runs] == [
        "linear-2x1|bridge|udp|1",
        "linear-2x1|p4|udp|1",
        "linear-2x1|bridge|udp|2",
        "linear-2x1|p4|udp|2",
    ]
    assert all(r.point == () and r.study.topology.name == "linear-2x1" for r in runs)


def test_grid_is_the_cartesian_product_and_each_run_has_its_config(tmp_path):
    study = load(BASE + SWEEP_BW + SWEEP_LEN, tmp_path)
    runs = plan_runs(study)
    assert len(runs) == 3 * 2 * 2 * 2  # bw × length × architectures × repetitions
    assert len({r.key for r in runs}) == len(runs)
    first = runs[0]
    assert first.key == "linear-2x1|bridge|udp|topology.link.bw=10,workload.udp.length=64|1"
    for run in runs:
        params = run.params
        assert run.workload.length == params["workload.udp.length"]
        bws = {link.bw for link in run.study.topology.links()}
        assert bws == (
            {None} if params["topology.link.bw"] == "unlimited" else {params["topology.link.bw"]}
        )
    # interleaved: both architectures at every point before the next point
    assert [r.architecture.name for r in runs[:4]] == ["bridge", "p4", "bridge", "p4"]
    assert runs[0].params == runs[1].params != runs[2].params


def test_zip_advances_together(tmp_path):
    text = (
        BASE
        + SWEEP_BW.replace('"unlimited"', "1000")
        + 'mode = "zip"\n'
        + SWEEP_LEN.replace("[64, 1400]", "[64, 512, 1400]")
        + 'mode = "zip"\n'
    )
    runs = plan_runs(load(text, tmp_path))
    pairs = {(r.params["topology.link.bw"], r.params["workload.udp.length"]) for r in runs}
    assert pairs == {(10, 64), (100, 512), (1000, 1400)}
    assert len(runs) == 3 * 2 * 2


def test_zip_lengths_must_match(tmp_path):
    text = BASE + SWEEP_BW + 'mode = "zip"\n' + SWEEP_LEN + 'mode = "zip"\n'
    errs = problems(text, tmp_path)
    assert len(errs) == 1 and ":31: sweep[1].values:" in errs[0] and "same number" in errs[0]


def test_architecture_parameter_only_multiplies_that_architecture(tmp_path):
    text = (
        BASE + '\n[[sweep]]\nparam = "architecture.p4.app"\nvalues = ["l2-learning", "proactive"]\n'
    )
    runs = [r for r in plan_runs(load(text, tmp_path)) if r.repetition == 1]
    assert [r.key for r in runs] == [
        "linear-2x1|bridge|udp|1",
        "linear-2x1|p4|udp|architecture.p4.app=l2-learning|1",
        "linear-2x1|p4|udp|architecture.p4.app=proactive|1",
    ]
    assert [r.architecture.app for r in runs[1:]] == ["l2-learning", "proactive"]


def test_keys_stable_when_values_are_added_or_sweeps_reordered(tmp_path):
    before = {r.key for r in plan_runs(load(BASE + SWEEP_BW + SWEEP_LEN, tmp_path))}
    more = SWEEP_LEN.replace("[64, 1400]", "[64, 256, 1400]")
    after = {r.key for r in plan_runs(load(BASE + more + SWEEP_BW, tmp_path))}
    assert before < after and len(after - before) == 3 * 2 * 2


def test_random_order_is_a_shuffle_reproduced_from_the_seed(tmp_path):
    text = BASE + SWEEP_BW + SWEEP_LEN
    interleaved = [r.key for r in plan_runs(load(text, tmp_path))]
    shuffled = text.replace("seed = 7", 'seed = 7\norder = "random"')
    one = [r.key for r in plan_runs(load(shuffled, tmp_path))]
    two = [r.key for r in plan_runs(load(shuffled, tmp_path))]
    other_seed = [
        r.key for r in plan_runs(load(shuffled.replace("seed = 7", "seed = 8"), tmp_path))
    ]
    assert one == two and sorted(one) == sorted(interleaved)
    assert one != interleaved and one != other_seed
    import random

    expected = list(interleaved)
    random.Random(7).shuffle(expected)
    assert one == expected


TWO_TOPOLOGIES = BASE.replace(
    '[topology]\nkind = "linear"\nswitches = 2\n',
    textwrap.dedent("""\
    [[topology]]
    name = "line"
    kind = "linear"
    switches = 2

    [[topology]]
    name = "grid"
    kind = "grid"
    rows = 1
    cols = 2
    """),
).replace('kind = "bridge"', 'kind = "bridge"\nstp = "on"')


def test_several_topologies_each_run_has_its_own(tmp_path):
    study = load(TWO_TOPOLOGIES, tmp_path)
    assert list(study.topologies) == ["line", "grid"]
    runs = plan_runs(study)
    assert {r.topology for r in runs} == {"line", "grid"} and len(runs) == 8
    for r in runs:
        assert r.key.startswith(f"{r.topology}|") and r.study.topology.name == r.topology
        assert list(r.study.topologies) == [r.topology]


def test_named_topology_parameter_sweeps_that_topology_only(tmp_path):
    text = TWO_TOPOLOGIES + '\n[[sweep]]\nparam = "topology.grid.cols"\nvalues = [2, 3]\n'
    runs = [r for r in plan_runs(load(text, tmp_path)) if r.repetition == 1]
    grid = [r for r in runs if r.topology == "grid"]
    assert sorted(len(r.study.topology.switches()) for r in grid) == [2, 2, 3, 3]
    assert all(r.point == () for r in runs if r.topology == "line")


def test_unknown_path_names_the_line_and_nearby_paths(tmp_path):
    errs = problems(BASE + SWEEP_LEN.replace("udp.length", "udp.lenght"), tmp_path)
    assert len(errs) == 1
    assert ":25: sweep[0].param:" in errs[0] and "workload.udp.length" in errs[0]
    errs = problems(BASE + SWEEP_LEN.replace("workload.udp", "workload.tcp"), tmp_path)
    assert "no workload named 'tcp'" in errs[0] and "workload.udp." in errs[0]
    errs = problems(BASE + SWEEP_LEN.replace("workload.udp.length", "study.seed"), tmp_path)
    assert "not swept" in errs[0]


def test_parameter_an_architecture_does_not_have(tmp_path):
    errs = problems(
        BASE + '\n[[sweep]]\nparam = "architecture.bridge.app"\nvalues = ["x"]\n', tmp_path
    )
    assert len(errs) == 1 and ":25: sweep[0].param:" in errs[0]
    assert "architecture.bridge has no parameter 'app'" in errs[0] and "stp" in errs[0]


def test_wrong_value_type_names_the_value(tmp_path):
    errs = problems(BASE + SWEEP_LEN.replace("1400", '"big"'), tmp_path)
    assert len(errs) == 1 and ":26: sweep[0].values:" in errs[0]
    assert "workload.udp.length = 'big'" in errs[0]
    errs = problems(BASE + SWEEP_BW.replace("100,", "5000,"), tmp_path)
    assert len(errs) == 1 and "topology.link.bw = 5000" in errs[0] and "1000" in errs[0]


def test_dict_fields_are_swept_by_their_keys(tmp_path):
    # A free table of runtime values (as a P4 program's parameters would be) is walked by
    # the keys the study gives it; the path grammar does not know the field.
    from pydantic import BaseModel

    from sdnperf.study.paths import _tree

    class WithParams(BaseModel):
        name: str
        kind: str
        params: dict[str, int] = {}

    tree = _tree(WithParams, WithParams(name="p4", kind="p4", params={"recirc_passes": 7}))
    assert tree == {"params": {"recirc_passes": False}}


def test_valid_paths_cover_models(tmp_path):
    paths = valid_paths(load(BASE, tmp_path).config)
    for expected in (
        "topology.switches",
        "topology.link.bw",
        "architecture.p4.app",
        "architecture.bridge.stp",
        "workload.udp.rate",
        "workload.udp.length",
    ):
        assert expected in paths
    assert not any(p.endswith((".name", ".kind")) for p in paths)


def test_a_combination_of_valid_values_can_still_be_refused(tmp_path):
    # duration and bytes are each fine alone, not together: the plan validates every point
    text = (
        BASE.replace('kind = "iperf-udp"', 'kind = "iperf-tcp"').replace("duration = 1\n", "")
        + '\n[[sweep]]\nparam = "workload.udp.duration"\nvalues = [1, 2]\n'
        + '\n[[sweep]]\nparam = "workload.udp.bytes"\nvalues = ["1M"]\n'
    )
    study = load(text, tmp_path)
    with pytest.raises(StudyError) as info:
        plan_runs(study)
    (problem,) = info.value.problems
    assert str(problem).endswith("give either duration or bytes, not both")
    assert "sweep[1].values: at workload.udp.bytes=1M,workload.udp.duration=1" in str(problem)


def test_topo_show_prints_every_topology_of_a_study(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "two.toml"
    path.write_text(TWO_TOPOLOGIES)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sdnperf.cli",
            "topo",
            "show",
            str(path),
            "--png",
            str(tmp_path / "t.png"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "line: 2 switches" in proc.stdout and "grid: 2 switches" in proc.stdout
    assert (tmp_path / "t-line.png").exists() and (tmp_path / "t-grid.png").exists()
