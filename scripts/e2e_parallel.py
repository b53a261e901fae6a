#!/usr/bin/env python3
"""Run tests/e2e as K parallel groups, each in its own network, mount and PID namespaces.

    .venv/bin/python scripts/e2e_parallel.py                  # 2 groups, all of tests/e2e
    .venv/bin/python scripts/e2e_parallel.py --groups 3 -- -x # extra args go to every pytest
    .venv/bin/python scripts/e2e_parallel.py --dry-run        # show the split and stop
    .venv/bin/python scripts/e2e_parallel.py --record         # run, then store per-test times
    .venv/bin/python scripts/e2e_parallel.py --record-from a.xml b.xml  # from junit files

The split is by test, not by file: every group's pytest collects the same tests and this
module, loaded into it as a plugin (`-p scripts.e2e_parallel`), keeps the group's share and
deselects the rest. The shares come from longest-first assignment over the per-test wall
times in tests/e2e/durations.json, so the groups end together and no slow file bounds a
group. A file whose tests share a fixture wider than one test (scope module, class or
package: a network started once for the file) stays in one group, as one unit. A test
without a recorded time counts as its file's recorded total shared by its tests, else as
the median test. Every group reports a digest of what it collected, and the run fails when
two groups saw different tests (their shares would then not add up to the whole).

Each group's pytest runs under `unshare --net --mount --pid`: interface names (s1,
h1-eth0), OVS bridges and sockets, /run/sdnperf, /run/netns, /sys/class/net and /proc are its
own, and so is /tmp (a folder of the run's work directory bound over it): sdnperf names sockets
and capture files in /tmp after its PID, and every group's pytest has the same PIDs. Loopback
ports are per network namespace, so fixed ports do not collide either. What stays shared is
read-mostly: the repository, ~/.cache/sdnperf (P4 and video caches are written atomically).

The output of every group is streamed with a `[eN]` prefix; the run fails when any group
fails, and ends with one line per group and the slowest tests of all groups.
Needs root (unshare); without it the tests run in one plain pytest (they skip themselves).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from sdnperf.emulation import kernel_limits

REPO = Path(__file__).resolve().parent.parent
E2E = REPO / "tests" / "e2e"
DURATIONS = E2E / "durations.json"
PRIVATE_TMPFS = ("/run/sdnperf", "/run/netns", "/run/openvswitch")
IN_NAMESPACE = "--in-namespace"
NO_TESTS = 5  # pytest's exit status when no test was selected


# -- the split -------------------------------------------------------------------------------

WIDE_SCOPES = ("module", "class", "package")  # a fixture shared by several tests of a file


@dataclass(frozen=True)
class Unit:
    """What one group runs as a whole: one test, or every test of a file that shares a
    fixture wider than one test (split, each group would set it up again)."""

    file: str
    nodeids: tuple[str, ...]
    seconds: float


@dataclass
class Group:
    index: int
    units: list[Unit] = field(default_factory=list)
    expected_s: float = 0.0

    @property
    def files(self) -> list[str]:
        return sorted({u.file for u in self.units})

    @property
    def nodeids(self) -> list[str]:
        return [n for u in self.units for n in u.nodeids]


def test_files(root: Path = E2E) -> list[str]:
    """tests/e2e's test files, as paths relative to the repository (the durations' keys)."""
    return sorted(str(p.relative_to(REPO)) for p in root.glob("test_*.py"))


def file_part(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@dataclass
class Durations:
    """Recorded wall seconds: per test (node id) and per file (the sum of its tests)."""

    tests: dict[str, float] = field(default_factory=dict)
    files: dict[str, float] = field(default_factory=dict)

    def costs(self, nodeids: list[str]) -> dict[str, float]:
        """Expected seconds of each collected test: its recorded time; else its file's
        recorded total shared among the file's collected tests (a file recorded before
        per-test times); else the median recorded test."""
        timed_files = {file_part(t) for t in self.tests}
        known = list(self.tests.values())
        default = statistics.median(known) if known else 1.0
        count: dict[str, int] = {}
        for n in nodeids:
            count[file_part(n)] = count.get(file_part(n), 0) + 1
        out = {}
        for n in nodeids:
            f = file_part(n)
            if n in self.tests:
                out[n] = self.tests[n]
            elif f in self.files and f not in timed_files:
                out[n] = self.files[f] / count[f]
            else:
                out[n] = default
        return out


def units_of(nodeids: list[str], together: set[str], costs: dict[str, float]) -> list[Unit]:
    """One unit per test, except one per file for the files in `together`; in the order
    collected (a file's unit where its first test was)."""
    units: list[Unit] = []
    whole: dict[str, list[str]] = {}
    for n in nodeids:
        f = file_part(n)
        if f not in together:
            units.append(Unit(f, (n,), costs[n]))
        elif f not in whole:
            whole[f] = [n]
            units.append(Unit(f, (), 0.0))  # placeholder, filled below
        else:
            whole[f].append(n)
    return [
        Unit(u.file, tuple(whole[u.file]), sum(costs[n] for n in whole[u.file]))
        if not u.nodeids
        else u
        for u in units
    ]


def split(units: list[Unit], k: int) -> list[Group]:
    """`units` in `k` groups whose expected times are as even as longest-first assignment
    makes them; within a group the units keep the order they were collected in."""
    if k < 1:
        raise ValueError(f"need at least one group, got {k}")
    order = {u: i for i, u in enumerate(units)}
    groups = [Group(i + 1) for i in range(k)]
    for u in sorted(units, key=lambda u: (-u.seconds, order[u])):
        emptiest = min(groups, key=lambda g: (g.expected_s, g.index))
        emptiest.units.append(u)
        emptiest.expected_s += u.seconds
    for g in groups:
        g.units.sort(key=lambda u: order[u])
    return [g for g in groups if g.units]


def digest(nodeids: list[str]) -> str:
    return hashlib.sha256("\n".join(nodeids).encode()).hexdigest()[:16]


def load_durations(path: Path = DURATIONS) -> Durations:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return Durations()
    return Durations(
        tests={str(k): float(v) for k, v in data.get("tests", {}).items()},
        files={str(k): float(v) for k, v in data.get("files", {}).items()},
    )


def file_of(classname: str, files: list[str]) -> str | None:
    """The test file a junit `classname` (tests.e2e.test_x or tests.e2e.test_x.TestY) is in."""
    for f in files:
        module = f.removesuffix(".py").replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            return f
    return None


@dataclass(frozen=True)
class Case:
    file: str
    name: str
    seconds: float
    outcome: str  # passed, failed, error, skipped
    nodeid: str = ""


def read_junit(path: Path, files: list[str]) -> list[Case]:
    """The test cases of one pytest --junitxml file (time = setup + call + teardown)."""
    cases = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        classname = tc.get("classname", "")
        f = file_of(classname, files)
        if f is None:
            continue
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            if tc.find(kind) is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
        name = tc.get("name", "?")
        # tests.e2e.test_x.TestY -> tests/e2e/test_x.py::TestY::name
        classes = classname[len(f.removesuffix(".py")) :].lstrip(".")
        nodeid = "::".join([f, *([classes] if classes else []), name]).replace(".::", "::")
        cases.append(Case(f, name, float(tc.get("time", 0.0)), outcome, nodeid))
    return cases


def seconds(value: float) -> float:
    # never 0: a test that ran in under 0.05 s still costs something to the balance
    return max(round(value, 1), 0.1)


def per_file(cases: list[Case]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for c in cases:
        totals[c.file] = totals.get(c.file, 0.0) + c.seconds
    return {f: seconds(s) for f, s in totals.items()}


def per_test(cases: list[Case]) -> dict[str, float]:
    return {c.nodeid: seconds(c.seconds) for c in cases}


def record(cases: list[Case], path: Path = DURATIONS, note: str = "") -> None:
    """Merge the measured per-test and per-file seconds into the durations file: a file
    measured now replaces all of its tests' times (renamed tests leave none behind); the
    other files keep theirs."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        data = {}
    measured = per_file(cases)
    files = {**data.get("files", {}), **measured}
    tests = {t: s for t, s in data.get("tests", {}).items() if file_part(t) not in measured}
    tests.update(per_test(cases))
    data["about"] = (
        "Wall seconds per e2e test (node id) and per test file (the sum of its tests), each "
        "setup+call+teardown from pytest's junit output; scripts/e2e_parallel.py balances its "
        "groups by test with them. "
        "Re-record: scripts/e2e_parallel.py --record (or --record-from JUNIT.xml ...)."
    )
    if note:
        data["recorded"] = note
    data["files"] = dict(sorted(files.items()))
    data["tests"] = dict(sorted(tests.items()))
    path.write_text(json.dumps(data, indent=1) + "\n")


# -- the plugin in every group's pytest ------------------------------------------------------


def pytest_addoption(parser) -> None:
    g = parser.getgroup("e2e-split", "scripts/e2e_parallel.py: one group's share of the tests")
    g.addoption("--e2e-groups", type=int, default=0, help="split the collected tests K ways")
    g.addoption("--e2e-group", type=int, default=0, help="run group I (1..K); 0: none, plan only")
    g.addoption("--e2e-durations", default=str(DURATIONS), help="recorded seconds (json)")
    g.addoption("--e2e-plan", default="", help="write the split (json) here")


def shares_a_wide_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else []
    return any(d.scope in WIDE_SCOPES for chain in defs for d in chain)


def plan_of(items, k: int, durations: Durations) -> tuple[list[Group], set[str]]:
    nodeids = [i.nodeid for i in items]
    together = {file_part(i.nodeid) for i in items if shares_a_wide_fixture(i)}
    return split(units_of(nodeids, together, durations.costs(nodeids)), k), together


def pytest_collection_modifyitems(session, config, items) -> None:
    k = config.getoption("--e2e-groups")
    if not k:
        return
    groups, together = plan_of(items, k, load_durations(Path(config.getoption("--e2e-durations"))))
    index = config.getoption("--e2e-group")
    items_all = list(items)
    plan = {
        "collected": len(items),
        "digest": digest([i.nodeid for i in items]),
        "together": sorted(together),
        "groups": [
            {"index": g.index, "expected_s": round(g.expected_s, 1), "nodeids": g.nodeids}
            for g in groups
        ],
    }
    if config.getoption("--e2e-plan"):
        Path(config.getoption("--e2e-plan")).write_text(json.dumps(plan, indent=1))
    mine = next((g for g in groups if g.index == index), None)
    keep = set(mine.nodeids) if mine else set()
    config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in keep])
    items[:] = [i for i in items if i.nodeid in keep]
    if mine is not None:
        print(
            f"\ne2e split: group {index} of {len(groups)} runs {len(keep)} of {len(items_all)} "
            f"tests ({len(mine.files)} files), expected {mine.expected_s / 60:.1f} min"
        )


# -- inside one group's namespaces -----------------------------------------------------------


def in_namespace(private_tmp: str, argv: list[str]) -> int:
    """PID 1 of a group's namespaces: private /run folders, /sys, /tmp and lo, then `argv`
    as a child (PID 1 ignores default-handled signals, so pytest must not be PID 1); reaps
    every orphan until the child ends, forwarding SIGINT/SIGTERM/SIGHUP to it."""
    for target in PRIVATE_TMPFS:
        os.makedirs(target, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "sdnperf-e2e", target], check=True)
    subprocess.run(["mount", "-t", "sysfs", "sysfs", "/sys"], check=True)
    subprocess.run(["mount", "--bind", private_tmp, "/tmp"], check=True)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # its own process group: a signal for the whole group reaches pytest once, through us
    child = subprocess.Popen(argv, env={**os.environ, "TMPDIR": "/tmp"}, process_group=0)

    def forward(sig, _frame):
        try:
            os.kill(child.pid, sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:  # nothing left to wait for (cannot happen before child)
            return 1
        if pid == child.pid:
            return os.waitstatus_to_exitcode(status)


# -- the parent: start, stream, summarise ----------------------------------------------------

PLUGIN = "scripts.e2e_parallel"  # this file, as pytest imports it from the repository
PLAN = "e2e-plan.json"
JUNIT = "e2e-junit.xml"


@dataclass(frozen=True)
class Share:
    """Which group of how many, the tests to collect, and where the recorded times are."""

    index: int
    groups: int
    files: list[str]
    durations: Path

    def pytest_args(self, plan: Path) -> list[str]:
        return [
            "-p",
            PLUGIN,
            f"--e2e-groups={self.groups}",
            f"--e2e-group={self.index}",
            f"--e2e-durations={self.durations}",
            f"--e2e-plan={plan}",
        ]


@dataclass
class Running:
    share: Share
    proc: subprocess.Popen
    tmp: Path  # the group's private /tmp, seen from out here
    started: float
    wall_s: float = 0.0
    returncode: int | None = None

    def plan(self) -> dict | None:
        try:
            return json.loads((self.tmp / PLAN).read_text())
        except (OSError, ValueError):
            return None


def group_argv(python: str, share: Share, private_tmp: Path, extra: list[str]) -> list[str]:
    # the junit and plan files land in the group's private /tmp, which is private_tmp outside
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=20"]
    pytest += [f"--junitxml=/tmp/{JUNIT}", *share.pytest_args(Path("/tmp") / PLAN)]
    pytest += [*extra, *share.files]
    unshare = ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc"]
    unshare += ["--kill-child=SIGTERM", "--propagation", "private"]
    return [*unshare, python, str(Path(__file__).resolve()), IN_NAMESPACE, str(private_tmp)] + [
        "--",
        *pytest,
    ]


def stream(prefix: str, pipe, lock: threading.Lock) -> None:
    for line in iter(pipe.readline, b""):
        text = line.decode(errors="replace").rstrip("\n")
        with lock:
            print(f"{prefix} {text}", flush=True)
    pipe.close()


def run_groups(shares: list[Share], python: str, extra: list[str], work: Path) -> list[Running]:
    lock = threading.Lock()
    running, readers = [], []
    for share in shares:
        tmp = work / f"g{share.index}" / "tmp"
        tmp.mkdir(parents=True)
        tmp.chmod(0o1777)
        argv = group_argv(python, share, tmp, extra)
        # a session of its own: Ctrl-C reaches this script only, which hands it on once
        proc = subprocess.Popen(
            argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        running.append(Running(share, proc, tmp, time.monotonic()))
        t = threading.Thread(target=stream, args=(f"[e{share.index}]", proc.stdout, lock))
        t.start()
        readers.append(t)
    try:
        pending = list(running)
        while pending:  # each group's wall time taken when it ends, not when waited for
            for r in list(pending):
                if r.proc.poll() is not None:
                    r.returncode, r.wall_s = r.proc.returncode, time.monotonic() - r.started
                    pending.remove(r)
            time.sleep(0.2)
    except KeyboardInterrupt:
        # unshare ignores SIGINT while it waits; the group's PID 1 hands it to pytest, which
        # stops after tearing down its current test
        for r in running:
            if r.proc.poll() is None:
                os.killpg(r.proc.pid, signal.SIGINT)
        for r in running:
            r.returncode = r.proc.wait()
            r.wall_s = time.monotonic() - r.started
        raise
    finally:
        for t in readers:
            t.join()
    return running


def cases_of(r: Running, files: list[str]) -> list[Case]:
    junit = r.tmp / JUNIT
    return read_junit(junit, files) if junit.exists() else []


def same_collection(plans: list[dict | None]) -> str | None:
    """None when every group that got as far as collecting saw the same tests; else why not."""
    seen = {(p["digest"], p["collected"]) for p in plans if p is not None}
    if len(seen) > 1:
        told = ", ".join(f"{n} tests (digest {d})" for d, n in sorted(seen))
        return f"the groups collected different tests ({told}): their shares are not the whole"
    return None


def summary(running: list[Running], cases: dict[int, list[Case]], slowest: int = 15) -> list[str]:
    lines = ["", "==> e2e groups"]
    for r in running:
        counts: dict[str, int] = {}
        for c in cases[r.share.index]:
            counts[c.outcome] = counts.get(c.outcome, 0) + 1
        told = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no junit output"
        state = {0: "ok", NO_TESTS: "no tests selected"}.get(
            r.returncode, f"FAILED (exit {r.returncode})"
        )
        plan = r.plan()
        expected = ""
        if plan is not None:
            mine = [g for g in plan["groups"] if g["index"] == r.share.index]
            expected = f" (expected {mine[0]['expected_s'] / 60:.1f})" if mine else ""
        files = len({c.file for c in cases[r.share.index]})
        lines.append(
            f"  [e{r.share.index}] {state}: {files} files, {told}; "
            f"{r.wall_s / 60:.1f} min{expected}"
        )
    every = [c for cs in cases.values() for c in cs]
    if every:
        lines.append(f"==> slowest {slowest} e2e tests (setup+call+teardown)")
        for c in sorted(every, key=lambda c: -c.seconds)[:slowest]:
            lines.append(f"  {c.seconds:7.1f} s  {c.nodeid}")
    return lines


def dry_run(python: str, share: Share, extra: list[str]) -> int:
    """Collect as a group would and print every group's share (no test runs)."""
    with tempfile.TemporaryDirectory(prefix="sdnperf-e2e-plan-") as d:
        plan_path = Path(d) / PLAN
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only"]
        cmd += [*share.pytest_args(plan_path), *extra, *share.files]
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if not plan_path.exists():
            print(done.stdout[-3000:] + done.stderr[-3000:], file=sys.stderr)
            return done.returncode or 1
        plan = json.loads(plan_path.read_text())
    print(f"{plan['collected']} tests; kept together (a fixture shared by a file's tests):")
    print("  " + (" ".join(plan["together"]) or "none"))
    for g in plan["groups"]:
        per: dict[str, int] = {}
        for n in g["nodeids"]:
            per[file_part(n)] = per.get(file_part(n), 0) + 1
        listed = " ".join(f"{Path(f).name}({n})" for f, n in per.items())
        print(
            f"[e{g['index']}] expected {g['expected_s'] / 60:.1f} min, {len(g['nodeids'])} tests:"
        )
        print(f"  {listed}")
    return 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Run tests/e2e as parallel groups, each in private namespaces.",
        epilog="Arguments after -- go to every group's pytest.",
    )
    ap.add_argument("--groups", "-k", type=int, default=2, help="parallel groups (default 2)")
    ap.add_argument("--durations-file", type=Path, default=DURATIONS, help="recorded seconds")
    ap.add_argument("--dry-run", action="store_true", help="print the split and exit")
    ap.add_argument("--record", action="store_true", help="store the measured per-test times")
    ap.add_argument(
        "--record-from", nargs="+", type=Path, metavar="JUNIT", help="record from junit files"
    )
    ap.add_argument("--keep", action="store_true", help="keep the groups' /tmp folders")
    ap.add_argument("files", nargs="*", help="e2e test files (default: all of tests/e2e)")
    ours, extra = argv, []
    if "--" in argv:
        at = argv.index("--")
        ours, extra = argv[:at], argv[at + 1 :]
    args = ap.parse_args(ours)
    args.extra = extra
    if args.groups < 1:
        ap.error(f"--groups: need at least one group, got {args.groups}")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [IN_NAMESPACE]:
        if len(argv) < 4 or argv[2] != "--":
            print(f"usage: {IN_NAMESPACE} PRIVATE_TMP -- ARGV...", file=sys.stderr)
            return 2
        return in_namespace(argv[1], argv[3:])
    args = parse_args(argv)
    every = test_files()
    if args.record_from:
        cases = [c for p in args.record_from for c in read_junit(p, every)]
        record(cases, args.durations_file, note=", ".join(map(str, args.record_from)))
        print(
            f"recorded {len(cases)} tests of {len(per_file(cases))} files in {args.durations_file}"
        )
        return 0
    files = [str(Path(f).resolve().relative_to(REPO)) for f in args.files] or every
    durations = args.durations_file.resolve()
    shares = [Share(i + 1, args.groups, files, durations) for i in range(args.groups)]
    python = sys.executable
    if args.dry_run:
        return dry_run(python, Share(0, args.groups, files, durations), args.extra)
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("not root (or no unshare): one plain pytest; the e2e tests skip without root")
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.extra, *files]
        return subprocess.run(cmd, cwd=REPO).returncode
    # the groups' namespaces take the socket buffer maxima from here and cannot raise them
    kernel_limits.raise_like_mininet()
    print(
        f"{args.groups} groups; each collects the tests and runs its share (by test, {durations})"
    )
    work = Path(tempfile.mkdtemp(prefix="sdnperf-e2e-", dir="/var/tmp"))
    try:
        running = run_groups(shares, python, args.extra, work)
        cases = {r.share.index: cases_of(r, every) for r in running}
        mismatch = same_collection([r.plan() for r in running])
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"groups' /tmp folders kept in {work}")
    print("\n".join(summary(running, cases)))
    if mismatch:
        print(f"FAILED: {mismatch}", file=sys.stderr)
        return 1
    if args.record:
        measured = [c for cs in cases.values() for c in cs]
        stamp = time.strftime("%Y-%m-%d", time.gmtime())
        record(measured, args.durations_file, note=f"{stamp}, {args.groups} groups")
        print(f"recorded {len(measured)} tests in {args.durations_file}")
    return verdict([r.returncode for r in running])


def verdict(returncodes: list[int | None]) -> int:
    """0 when every group passed; a group whose tests were all deselected (pytest's 5, e.g.
    `-k` naming tests of another group) passes unless every group is so."""
    if all(rc == NO_TESTS for rc in returncodes):
        return NO_TESTS
    return 0 if all(rc in (0, NO_TESTS) for rc in returncodes) else 1


if __name__ == "__main__":
    sys.exit(main())
