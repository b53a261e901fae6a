"""scripts/e2e_parallel.py: the split of tests/e2e into balanced groups, the per-file times
read from pytest's junit output and merged into the durations file, and the argv each group
runs (a list, never a shell string)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
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


def units(ep, seconds: dict[str, float]):
    return [ep.Unit(f"tests/e2e/{n}.py", (f"tests/e2e/{n}.py::t",), s) for n, s in seconds.items()]


def test_longest_first_fills_the_emptiest_group_and_keeps_the_collected_order(ep):
    groups = ep.split(units(ep, {"a": 8, "b": 7, "c": 6, "d": 5, "e": 4}), 2)
    assert [[u.file[10:-3] for u in g.units] for g in groups] == [["a", "d", "e"], ["b", "c"]]
    assert [g.expected_s for g in groups] == [17, 13]
    # the collected order, not the order of assignment
    groups = ep.split(units(ep, {"e": 4, "a": 8, "d": 5}), 1)
    assert [u.file[10:-3] for u in groups[0].units] == ["e", "a", "d"]


def test_every_unit_lands_in_exactly_one_group_and_groups_stay_within_one_unit(ep):
    seconds = {f"t{i}": float((i * 37) % 23 + 1) for i in range(40)}
    groups = ep.split(units(ep, seconds), 3)
    placed = [u.file for g in groups for u in g.units]
    assert sorted(placed) == sorted(f"tests/e2e/{n}.py" for n in seconds)
    spread = max(g.expected_s for g in groups) - min(g.expected_s for g in groups)
    assert spread <= max(seconds.values())
    assert sum(g.expected_s for g in groups) == pytest.approx(sum(seconds.values()))


def test_a_slow_file_of_independent_tests_is_spread_over_the_groups(ep):
    ids = [f"tests/e2e/test_slow.py::test_x[{i}]" for i in range(4)] + ["tests/e2e/test_b.py::t"]
    costs = {**{n: 100.0 for n in ids[:4]}, ids[4]: 10.0}
    groups = ep.split(ep.units_of(ids, set(), costs), 2)
    assert [g.expected_s for g in groups] == [210, 200]
    assert all(any("test_slow" in n for n in g.nodeids) for g in groups)


def test_a_file_sharing_a_wide_fixture_is_one_unit_in_one_group(ep):
    ids = ["f/test_a.py::t1", "f/test_m.py::t1", "f/test_a.py::t2", "f/test_m.py::t2"]
    costs = dict.fromkeys(ids, 5.0)
    got = ep.units_of(ids, {"f/test_m.py"}, costs)
    assert [u.nodeids for u in got] == [
        ("f/test_a.py::t1",),
        ("f/test_m.py::t1", "f/test_m.py::t2"),
        ("f/test_a.py::t2",),
    ]
    assert got[1].seconds == 10
    groups = ep.split(got, 3)
    assert [g for g in groups if "f/test_m.py::t1" in g.nodeids][0].nodeids[-1] == "f/test_m.py::t2"


def test_a_test_without_a_recorded_time_costs_its_file_share_or_the_median(ep):
    d = ep.Durations(
        tests={"a.py::t1": 1.0, "a.py::t2": 3.0, "b.py::t1": 100.0},
        files={"a.py": 4.0, "b.py": 100.0, "old.py": 30.0},
    )
    ids = ["a.py::t1", "a.py::new", "old.py::x", "old.py::y", "old.py::z", "unknown.py::t"]
    assert d.costs(ids) == {
        "a.py::t1": 1.0,
        "a.py::new": 3.0,  # median of the recorded tests (its file has per-test times)
        "old.py::x": 10.0,  # a file recorded before per-test times: its total, shared
        "old.py::y": 10.0,
        "old.py::z": 10.0,
        "unknown.py::t": 3.0,
    }
    with pytest.raises(ValueError, match="at least one group"):
        ep.split([], 0)


def test_more_groups_than_units_leaves_no_empty_group(ep):
    assert [g.files for g in ep.split(units(ep, {"a": 1, "b": 1}), 5)] == [
        ["tests/e2e/a.py"],
        ["tests/e2e/b.py"],
    ]


def test_junit_classnames_map_to_their_file_not_a_longer_namesake(ep):
    files = ["tests/e2e/test_p4.py", "tests/e2e/test_p4_arch.py"]
    assert ep.file_of("tests.e2e.test_p4_arch", files) == "tests/e2e/test_p4_arch.py"
    assert ep.file_of("tests.e2e.test_p4.TestX", files) == "tests/e2e/test_p4.py"
    assert ep.file_of("tests.unit.test_p4", files) is None


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.e2e.test_a" name="test_one[x-1]" time="12.5" />
<testcase classname="tests.e2e.test_a" name="test_two" time="2.0"><failure message="x"/></testcase>
<testcase classname="tests.e2e.test_b.TestK" name="test_k" time="0.01"><skipped/></testcase>
</testsuite></testsuites>"""


def test_junit_times_become_node_ids_and_merge_into_the_durations_file(ep, tmp_path):
    junit = tmp_path / "g1.xml"
    junit.write_text(JUNIT)
    files = ["tests/e2e/test_a.py", "tests/e2e/test_b.py"]
    cases = ep.read_junit(junit, files)
    assert [(c.nodeid, c.outcome) for c in cases] == [
        ("tests/e2e/test_a.py::test_one[x-1]", "passed"),
        ("tests/e2e/test_a.py::test_two", "failed"),
        ("tests/e2e/test_b.py::TestK::test_k", "skipped"),
    ]
    assert ep.per_file(cases) == {"tests/e2e/test_a.py": 14.5, "tests/e2e/test_b.py": 0.1}
    store = tmp_path / "durations.json"
    old = {"tests/e2e/test_a.py::renamed": 50, "tests/e2e/test_z.py::t": 7}
    store.write_text(json.dumps({"files": {"tests/e2e/test_a.py": 99}, "tests": old}))
    ep.record(cases, store, note="test")
    got = ep.load_durations(store)
    assert got.files == {"tests/e2e/test_a.py": 14.5, "tests/e2e/test_b.py": 0.1}
    assert got.tests == {
        "tests/e2e/test_a.py::test_one[x-1]": 12.5,
        "tests/e2e/test_a.py::test_two": 2.0,
        "tests/e2e/test_b.py::TestK::test_k": 0.1,  # never 0
        "tests/e2e/test_z.py::t": 7.0,  # a file not measured now keeps its times
    }
    assert json.loads(store.read_text())["recorded"] == "test"


def test_a_group_runs_pytest_with_its_share_in_its_own_namespaces_as_an_argv_list(ep):
    share = ep.Share(2, 3, ["tests/e2e/test_a.py", "tests/e2e/test_b.py"], Path("/r/d.json"))
    argv = ep.group_argv("/py", share, Path("/w/g2/tmp"), ["-x", "-k", "a b"])
    assert argv[0] == "unshare" and {"--net", "--mount", "--pid"} <= set(argv)
    at = argv.index(ep.IN_NAMESPACE)
    assert argv[at + 1 : at + 3] == ["/w/g2/tmp", "--"]
    pytest_argv = argv[at + 3 :]
    assert pytest_argv[:3] == ["/py", "-m", "pytest"]
    assert "--durations=20" in pytest_argv and "--junitxml=/tmp/e2e-junit.xml" in pytest_argv
    plugin = pytest_argv.index("-p", pytest_argv.index("no:cacheprovider"))
    assert pytest_argv[plugin + 1] == "scripts.e2e_parallel"
    assert {"--e2e-groups=3", "--e2e-group=2", "--e2e-durations=/r/d.json"} <= set(pytest_argv)
    assert pytest_argv[-5:] == ["-x", "-k", "a b", *share.files]  # the user's "a b" stays one arg


SHARED = """import pytest

@pytest.fixture(scope="module")
def net():
    return object()

def test_m1(net):
    pass

def test_m2(net):
    pass
"""

INDEPENDENT = """import pytest

@pytest.mark.parametrize("n", [1, 2, 3])
def test_slow(n):
    pass

def test_quick():
    pass
"""


def run_share(tmp_path, k, i, *extra):
    plan = tmp_path / f"plan{i}.json"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p"]
    cmd += ["scripts.e2e_parallel", f"--e2e-groups={k}", f"--e2e-group={i}"]
    cmd += [f"--e2e-durations={tmp_path / 'durations.json'}", f"--e2e-plan={plan}"]
    cmd += ["--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"), *extra]
    cmd += [str(tmp_path / "test_shared.py"), str(tmp_path / "test_indep.py")]
    done = subprocess.run(cmd, cwd=SCRIPT.parents[1], capture_output=True, text=True)
    return done, json.loads(plan.read_text())


def test_the_plugin_gives_every_group_a_disjoint_share_that_adds_up_to_the_whole(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_shared.py").write_text(SHARED)
    (tmp_path / "test_indep.py").write_text(INDEPENDENT)
    slow = {f"test_indep.py::test_slow[{n}]": 100 for n in (1, 2, 3)}
    (tmp_path / "durations.json").write_text(json.dumps({"tests": slow}))
    runs = [run_share(tmp_path, 2, i) for i in (1, 2)]
    plans = [p for _, p in runs]
    assert plans[0] == plans[1]  # both groups computed the same split
    assert plans[0]["collected"] == 6 and plans[0]["together"] == ["test_shared.py"]
    shares = [set(g["nodeids"]) for g in plans[0]["groups"]]
    assert not shares[0] & shares[1] and len(shares[0] | shares[1]) == 6
    assert any({"test_shared.py::test_m1", "test_shared.py::test_m2"} <= s for s in shares)
    # the three slow tests are spread: 2 + 1, never 3 in one group
    assert sorted(sum("test_slow" in n for n in s) for s in shares) == [1, 2]
    for (done, _), share in zip(runs, shares):
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{len(share)} passed, {6 - len(share)} deselected" in done.stdout


def test_arguments_after_the_double_dash_go_to_pytest(ep):
    args = ep.parse_args(["--groups", "3", "--", "-x", "--groups"])
    assert args.groups == 3 and args.extra == ["-x", "--groups"]
    assert ep.parse_args([]).extra == [] and ep.parse_args([]).groups == 2


def test_the_committed_durations_name_only_existing_e2e_files_and_tests(ep):
    recorded = ep.load_durations()
    assert recorded.files, "tests/e2e/durations.json is empty"
    assert set(recorded.files) <= set(ep.test_files())
    assert {ep.file_part(t) for t in recorded.tests} <= set(recorded.files)
    for nodeid in recorded.tests:  # the test function is still defined in its file
        path, *_, name = nodeid.split("::")
        source = (SCRIPT.parents[1] / path).read_text()
        assert f"def {name.split('[')[0]}(" in source, nodeid
    assert all(v > 0 for v in [*recorded.files.values(), *recorded.tests.values()])


def test_any_failed_group_fails_the_run_and_a_group_with_nothing_selected_does_not(ep):
    assert ep.verdict([0, 0]) == 0
    assert ep.verdict([0, 1]) == 1 and ep.verdict([2, 0]) == 1
    assert ep.verdict([0, ep.NO_TESTS]) == 0  # -k matched tests of one group only
    assert ep.verdict([ep.NO_TESTS, ep.NO_TESTS]) == ep.NO_TESTS
