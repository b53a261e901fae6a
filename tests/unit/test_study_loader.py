"""Study files: the default loads; every kind of mistake gets one error naming file:line: field."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sdnperf.study.loader import StudyError, load_study
from sdnperf.study.locate import format_path, line_of
from sdnperf.study.plan import plan_runs

GOOD = textwrap.dedent("""\
    [study]
    name = "t"
    repetitions = 2

    [topology]
    kind = "tree"
    depth = 2
    fanout = 2

    [[architecture]]
    name = "bridge"
    kind = "bridge"

    [[architecture]]
    name = "of"
    kind = "openflow"

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h4"]]
    count = 5
    """)


def load(text: str, tmp_path: Path):
    path = tmp_path / "study.toml"
    path.write_text(text)
    return load_study(path), path


def problems(text: str, tmp_path: Path) -> list[str]:
    with pytest.raises(StudyError) as info:
        load(text, tmp_path)
    return [str(p) for p in info.value.problems]


def test_default_study_loads_and_matches_the_issue():
    study = load_study(None)
    assert study.topology.name.startswith("campus")
    assert len(study.topology.switches()) == 10 and len(study.topology.hosts()) == 28
    kinds = [a.kind for a in study.config.architecture]
    assert kinds[:2] == ["bridge", "openflow"] and set(kinds) <= {"bridge", "openflow", "p4"}
    assert {w.kind for w in study.config.workload} == {"ping", "iperf-tcp", "iperf-udp"}
    assert study.config.study.repetitions == 3


def test_good_file_loads(tmp_path):
    study, _ = load(GOOD, tmp_path)
    assert study.config.study.baseline == "bridge"  # defaults to the first architecture
    assert len(study.topology.hosts()) == 4


def test_wrong_field_named_with_file_and_line(tmp_path):
    errs = problems(GOOD.replace("count = 5", "cuont = 5"), tmp_path)
    assert len(errs) == 1
    assert errs[0].startswith(f"{tmp_path / 'study.toml'}:22: workload[0].cuont: unknown field")


def test_out_of_range_value(tmp_path):
    errs = problems(GOOD.replace("repetitions = 2", "repetitions = 0"), tmp_path)
    assert len(errs) == 1 and ":3: study.repetitions:" in errs[0]


def test_unknown_architecture_kind(tmp_path):
    errs = problems(GOOD.replace('kind = "openflow"', 'kind = "openflwo"'), tmp_path)
    assert len(errs) == 1 and "architecture[1]" in errs[0] and ":16:" in errs[0]


def test_topology_parameter_error_points_at_its_line(tmp_path):
    errs = problems(GOOD.replace("fanout = 2", "fanout = -1"), tmp_path)
    assert len(errs) == 1 and ":8: topology.fanout:" in errs[0]


def test_unknown_host_in_pairs(tmp_path):
    errs = problems(GOOD.replace('["h1", "h4"]', '["h1", "h99"]'), tmp_path)
    assert len(errs) == 1 and "workload[0].pairs" in errs[0] and "h99" in errs[0]


def test_baseline_must_be_an_architecture(tmp_path):
    errs = problems(GOOD.replace("repetitions = 2", 'repetitions = 2\nbaseline = "nope"'), tmp_path)
    assert len(errs) == 1 and "baseline" in errs[0]


def test_duplicate_names_refused(tmp_path):
    errs = problems(GOOD.replace('name = "of"', 'name = "bridge"'), tmp_path)
    assert len(errs) == 1 and "unique" in errs[0]


def test_toml_syntax_error_has_line(tmp_path):
    errs = problems(GOOD.replace("depth = 2", "depth = = 2"), tmp_path)
    assert len(errs) == 1 and ":7:" in errs[0] and "not valid TOML" in errs[0]


def test_missing_file(tmp_path):
    with pytest.raises(StudyError) as info:
        load_study(tmp_path / "absent.toml")
    assert "cannot read" in str(info.value)


def test_cli_check_exit_code_2_and_one_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace("interval", "x").replace("count = 5", "count = 5\nbogus = 1"))
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "check", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert lines == [
        f"error: {path}:23: workload[0].bogus: unknown field 'bogus'; valid fields: name, "
        "pairs, per_topology, topologies, kind, count, interval, size, cold, control_frames, reply_timeout "
        "(see docs/study-reference.md)"
    ]


def test_locate_paths():
    text = GOOD + '\n[[workload]]\nname = "tcp"\nkind = "iperf-tcp"\n'
    assert line_of(text, ("workload", 1, "kind")) == 26
    assert line_of(text, ("workload", 1, "missing")) == 24  # falls back to the table header
    assert format_path(("workload", 1, "pairs", 0)) == "workload[1].pairs[0]"


def test_plan_alternates_architectures_and_keys_are_unique(tmp_path):
    study, _ = load(GOOD, tmp_path)
    runs = plan_runs(study)
    assert [(r.architecture.name, r.repetition) for r in runs] == [
        ("bridge", 1),
        ("of", 1),
        ("bridge", 2),
        ("of", 2),
    ]
    assert len({r.key for r in runs}) == len(runs)


def test_every_example_study_validates():
    from sdnperf.ctlbench import config as ctlbench_config

    examples = sorted(Path(__file__).resolve().parents[2].glob("examples/*.toml"))
    assert examples, "examples/ holds study files"
    for path in examples:
        # ctlbench files describe controller benchmarks, not network studies.
        (ctlbench_config.load if path.name.startswith("ctlbench-") else load_study)(path)


def test_bandwidth_mininet_cannot_shape_is_refused_at_load(tmp_path):
    errs = problems(
        GOOD.replace("fanout = 2", "fanout = 2\n\n[topology.link]\nbw = 5000"), tmp_path
    )
    assert len(errs) == 1 and ":11: topology.link.bw:" in errs[0]


def test_missing_graphml_file_names_the_field(tmp_path):
    text = GOOD.replace(
        'kind = "tree"\ndepth = 2\nfanout = 2', 'kind = "graphml"\nfile = "nope.graphml"'
    )
    errs = problems(text, tmp_path)
    assert len(errs) == 1 and "topology.file" in errs[0] and "nope.graphml" in errs[0]
