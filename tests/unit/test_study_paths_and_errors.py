"""Found as a new user: paths in a study file are relative to the file (from any working
directory), and a file with several mistakes reports all of them, each file:line:field."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from sdnperf.arch import check_architecture
from sdnperf.study.loader import StudyError, load_study

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A working directory that is not the study's folder."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def test_runtime_dir_is_relative_to_the_study_file(elsewhere, monkeypatch):
    monkeypatch.setenv("SDNPERF_SWITCH_GRPC_BIN", "/bin/true")  # built or not: the files matter
    study = load_study(EXAMPLES / "p4-runtime-json.toml")
    arch = study.config.architecture[0]
    assert Path(arch.runtime_dir) == EXAMPLES / "data/p4-runtime-linear"
    check_architecture(arch, study.topology)  # was: "no runtime file for switch(es) s1, s2, s3"


def test_absolute_paths_are_kept(tmp_path, elsewhere):
    runtime = tmp_path / "rt"
    shutil.copytree(EXAMPLES / "data/p4-runtime-linear", runtime)
    text = (
        (EXAMPLES / "p4-runtime-json.toml")
        .read_text()
        .replace('runtime_dir = "data/p4-runtime-linear"', f'runtime_dir = "{runtime}"')
    )
    (tmp_path / "study").mkdir()
    (tmp_path / "study/s.toml").write_text(text)
    assert load_study(tmp_path / "study/s.toml").config.architecture[0].runtime_dir == str(runtime)


@pytest.mark.parametrize(
    "example,what", [("topo-graphml.toml", "graphml"), ("topo-custom.toml", "custom")]
)
def test_topology_files_are_relative_to_the_study_file(elsewhere, example, what):
    study = load_study(EXAMPLES / example)
    assert study.topology.switches() and study.config.topology.kind == what


def test_several_mistakes_are_all_reported(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        textwrap.dedent("""\
        [study]
        name = "t"
        repetitions = 0

        [topology]
        kind = "tree"
        depth = -1
        fanout = 2

        [[architecture]]
        name = "bridge"
        kind = "bridgex"

        [[workload]]
        name = "ping"
        kind = "ping"
        pairs = [["h1", "h2"]]
        bogus = 1
        """)
    )
    with pytest.raises(StudyError) as info:
        load_study(path)
    found = sorted(str(p).split(": ", 2)[:2] for p in info.value.problems)
    assert found == sorted(
        [
            [f"{path}:3", "study.repetitions"],
            [f"{path}:7", "topology.depth"],
            [f"{path}:12", "architecture[0].kind"],
            [f"{path}:18", "workload[0].bogus"],
        ]
    )


TOPOLOGY_STUDY = textwrap.dedent("""\
    [study]
    name = "t"

    [topology]
    kind = "single"
    hosts = 2

    [[architecture]]
    name = "bridge"
    kind = "bridge"

    [[workload]]
    name = "ping"
    kind = "ping"
    pairs = [["h1", "h2"]]
    """)


def test_a_topology_error_names_the_field_it_carries_never_one_guessed_from_its_text(
    tmp_path, monkeypatch
):
    """The field at fault comes from TopologyError.field: an unknown kind points at `kind`,
    while an error without a field whose words happen to say "kind" (a node's kind in a
    user's own Topo) points at the [topology] table, not at its `kind` line."""
    from sdnperf.study import validate
    from sdnperf.topo.spec import TopologyError

    path = tmp_path / "t.toml"
    path.write_text(TOPOLOGY_STUDY.replace('kind = "single"', 'kind = "ring"'))
    with pytest.raises(StudyError) as info:
        load_study(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.field) == (5, "topology.kind")
    assert problem.message.startswith("unknown topology kind 'ring'")

    def refuses(*args, **kwargs):
        raise TopologyError(
            "topology 'x': node 'r1' has kind 'router', expected 'host' or 'switch'"
        )

    monkeypatch.setattr(validate, "build_topology", refuses)
    path.write_text(TOPOLOGY_STUDY)
    with pytest.raises(StudyError) as info:
        load_study(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.field) == (4, "topology"), problem
