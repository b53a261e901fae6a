"""scripts/e2e_parallel.py: the split of tests/e2e into balanced groups, the per-file times
read from pytest's junit output and merged into the durations file, and the argv each group
runs (a list, never a shell string)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "e2e_parallel.py"


@pytest.fixture(scope="module")
def ep():
    spec = importlib.util.spec_from_file_location("e2e_parallel", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["e2e_parallel"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_longest_first_fills_the_emptiest_group(ep):
    seconds = {"a": 8, "b": 7, "c": 6, "d": 5, "e": 4}
    groups = ep.split(list(seconds), seconds, 2)
    assert [g.files for g in groups] == [["a", "d", "e"], ["b", "c"]]
    assert [g.expected_s for g in groups] == [17, 13]


def test_every_file_lands_in_exactly_one_group_and_groups_stay_within_one_file(ep):
    seconds = {f"t{i}": float((i * 37) % 23 + 1) for i in range(40)}
    groups = ep.split(sorted(seconds), seconds, 3)
    placed = [f for g in groups for f in g.files]
    assert sorted(placed) == sorted(seconds)
    spread = max(g.expected_s for g in groups) - min(g.expected_s for g in groups)
    assert spread <= max(seconds.values())
    assert sum(g.expected_s for g in groups) == pytest.approx(sum(seconds.values()))


def test_a_file_without_a_recorded_time_counts_as_the_median(ep):
    groups = ep.split(["a", "b", "c", "new"], {"a": 1, "b": 3, "c": 100}, 1)
    assert groups[0].expected_s == 1 + 3 + 100 + 3


def test_more_groups_than_files_leaves_no_empty_group_and_zero_groups_is_refused(ep):
    assert [g.files for g in ep.split(["a", "b"], {}, 5)] == [["a"], ["b"]]
    with pytest.raises(ValueError, match="at least one group"):
        ep.split(["a"], {}, 0)


def test_junit_classnames_map_to_their_file_not_a_longer_namesake(ep):
    files = ["tests/e2e/test_p4.py", "tests/e2e/test_p4_arch.py"]
    assert ep.file_of("tests.e2e.test_p4_arch", files) == "tests/e2e/test_p4_arch.py"
    assert ep.file_of("tests.e2e.test_p4.TestX", files) == "tests/e2e/test_p4.py"
    assert ep.file_of("tests.unit.test_p4", files) is None


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.e2e.test_a" name="test_one" time="12.5" />
<testcase classname="tests.e2e.test_a" name="test_two" time="2.0"><failure message="x"/></testcase>
<testcase classname="tests.e2e.test_b.TestK" name="test_k" time="1.25"><skipped/></testcase>
</testsuite></testsuites>"""


def test_junit_times_sum_per_file_and_merge_into_the_durations_file(ep, tmp_path):
    junit = tmp_path / "g1.xml"
    junit.write_text(JUNIT)
    files = ["tests/e2e/test_a.py", "tests/e2e/test_b.py"]
    cases = ep.read_junit(junit, files)
    assert [(c.name, c.outcome) for c in cases] == [
        ("test_one", "passed"),
        ("test_two", "failed"),
        ("test_k", "skipped"),
    ]
    assert ep.per_file(cases) == {"tests/e2e/test_a.py": 14.5, "tests/e2e/test_b.py": 1.2}
    store = tmp_path / "durations.json"
    store.write_text(json.dumps({"files": {"tests/e2e/test_a.py": 99, "tests/e2e/test_z.py": 7}}))
    ep.record(ep.per_file(cases), store, note="test")
    assert ep.load_durations(store) == {
        "tests/e2e/test_a.py": 14.5,
        "tests/e2e/test_b.py": 1.2,
        "tests/e2e/test_z.py": 7.0,
    }
    assert json.loads(store.read_text())["recorded"] == "test"


def test_a_group_runs_pytest_in_its_own_namespaces_as_an_argv_list(ep):
    g = ep.Group(1, ["tests/e2e/test_a.py", "tests/e2e/test_b.py"])
    argv = ep.group_argv("/py", g, Path("/w/g1/tmp"), Path("/tmp/j.xml"), ["-x", "-k", "a b"])
    assert argv[0] == "unshare" and {"--net", "--mount", "--pid"} <= set(argv)
    at = argv.index(ep.IN_NAMESPACE)
    assert argv[at + 1 : at + 3] == ["/w/g1/tmp", "--"]
    pytest_argv = argv[at + 3 :]
    assert pytest_argv[:3] == ["/py", "-m", "pytest"]
    assert "--durations=20" in pytest_argv and "--junitxml=/tmp/j.xml" in pytest_argv
    assert pytest_argv[-5:] == ["-x", "-k", "a b", *g.files]  # the user's "a b" stays one arg


def test_arguments_after_the_double_dash_go_to_pytest(ep):
    args = ep.parse_args(["--groups", "3", "--", "-x", "--groups"])
    assert args.groups == 3 and args.extra == ["-x", "--groups"]
    assert ep.parse_args([]).extra == [] and ep.parse_args([]).groups == 2


def test_the_committed_durations_name_only_existing_e2e_files(ep):
    recorded = ep.load_durations()
    assert recorded, "tests/e2e/durations.json is empty"
    assert set(recorded) <= set(ep.test_files())
    assert all(v > 0 for v in recorded.values())


def test_any_failed_group_fails_the_run_and_a_group_with_nothing_selected_does_not(ep):
    assert ep.verdict([0, 0]) == 0
    assert ep.verdict([0, 1]) == 1 and ep.verdict([2, 0]) == 1
    assert ep.verdict([0, ep.NO_TESTS]) == 0  # -k matched tests of one group only
    assert ep.verdict([ep.NO_TESTS, ep.NO_TESTS]) == ep.NO_TESTS
