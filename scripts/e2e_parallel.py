#!/usr/bin/env python3
"""Run tests/e2e as K parallel groups, each in its own network, mount and PID namespaces.

    .venv/bin/python scripts/e2e_parallel.py                  # 2 groups, all of tests/e2e
    .venv/bin/python scripts/e2e_parallel.py --groups 3 -- -x # extra args go to every pytest
    .venv/bin/python scripts/e2e_parallel.py --dry-run        # show the split and stop
    .venv/bin/python scripts/e2e_parallel.py --record         # run, then store per-file times
    .venv/bin/python scripts/e2e_parallel.py --record-from a.xml b.xml  # from junit files

The files are split into groups by longest-first assignment over the per-file wall times in
tests/e2e/durations.json (a file not listed there counts as the median), so the groups end
together. Each group's pytest runs under `unshare --net --mount --pid`: interface names (s1,
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

REPO = Path(__file__).resolve().parent.parent
E2E = REPO / "tests" / "e2e"
DURATIONS = E2E / "durations.json"
PRIVATE_TMPFS = ("/run/sdnperf", "/run/netns", "/run/openvswitch")
IN_NAMESPACE = "--in-namespace"
NO_TESTS = 5  # pytest's exit status when no test was selected


# -- the split -------------------------------------------------------------------------------


@dataclass
class Group:
    index: int
    files: list[str] = field(default_factory=list)
    expected_s: float = 0.0


def test_files(root: Path = E2E) -> list[str]:
    """tests/e2e's test files, as paths relative to the repository (the durations' keys)."""
    return sorted(str(p.relative_to(REPO)) for p in root.glob("test_*.py"))


def split(files: list[str], seconds: dict[str, float], k: int) -> list[Group]:
    """`files` in `k` groups whose expected times are as even as longest-first assignment
    makes them; a file without a recorded time counts as the median of the recorded ones."""
    if k < 1:
        raise ValueError(f"need at least one group, got {k}")
    known = [seconds[f] for f in files if f in seconds]
    default = statistics.median(known) if known else 1.0
    cost = {f: seconds.get(f, default) for f in files}
    groups = [Group(i + 1) for i in range(k)]
    for f in sorted(files, key=lambda f: (-cost[f], f)):
        emptiest = min(groups, key=lambda g: (g.expected_s, g.index))
        emptiest.files.append(f)
        emptiest.expected_s += cost[f]
    return [g for g in groups if g.files]


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {str(k): float(v) for k, v in data.get("files", {}).items()}


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


def read_junit(path: Path, files: list[str]) -> list[Case]:
    """The test cases of one pytest --junitxml file (time = setup + call + teardown)."""
    cases = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        f = file_of(tc.get("classname", ""), files)
        if f is None:
            continue
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            if tc.find(kind) is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
        cases.append(Case(f, tc.get("name", "?"), float(tc.get("time", 0.0)), outcome))
    return cases


def per_file(cases: list[Case]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for c in cases:
        totals[c.file] = totals.get(c.file, 0.0) + c.seconds
    # never 0: a file that ran in under 0.05 s still costs something to the balance
    return {f: max(round(s, 1), 0.1) for f, s in totals.items()}


def record(measured: dict[str, float], path: Path = DURATIONS, note: str = "") -> None:
    """Merge `measured` per-file seconds into the durations file (other files keep theirs)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        data = {}
    files = {**data.get("files", {}), **measured}
    data["about"] = (
        "Wall seconds per e2e test file (sum of its tests' setup+call+teardown, from pytest's "
        "junit output), used by scripts/e2e_parallel.py to balance its groups. "
        "Re-record: scripts/e2e_parallel.py --record (or --record-from JUNIT.xml ...)."
    )
    if note:
        data["recorded"] = note
    data["files"] = dict(sorted(files.items()))
    path.write_text(json.dumps(data, indent=1) + "\n")


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


@dataclass
class Running:
    group: Group
    proc: subprocess.Popen
    junit: Path
    started: float
    wall_s: float = 0.0
    returncode: int | None = None


def group_argv(python: str, group: Group, private_tmp: Path, junit: Path, extra: list[str]):
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=20"]
    pytest += [f"--junitxml={junit}", *extra, *group.files]
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


def run_groups(groups: list[Group], python: str, extra: list[str], work: Path) -> list[Running]:
    lock = threading.Lock()
    running, readers = [], []
    for g in groups:
        gdir = work / f"g{g.index}"
        (gdir / "tmp").mkdir(parents=True)
        (gdir / "tmp").chmod(0o1777)
        # junit lands in the group's private /tmp, which is gdir/tmp seen from out here
        argv = group_argv(python, g, gdir / "tmp", Path("/tmp/e2e-junit.xml"), extra)
        # a session of its own: Ctrl-C reaches this script only, which hands it on once
        proc = subprocess.Popen(
            argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        r = Running(g, proc, gdir / "tmp" / "e2e-junit.xml", time.monotonic())
        running.append(r)
        t = threading.Thread(target=stream, args=(f"[e{g.index}]", proc.stdout, lock))
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


def summary(running: list[Running], cases: list[Case], slowest: int = 15) -> list[str]:
    lines = ["", "==> e2e groups"]
    for r in running:
        counts: dict[str, int] = {}
        for c in cases:
            if c.file in r.group.files:
                counts[c.outcome] = counts.get(c.outcome, 0) + 1
        told = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no junit output"
        state = {0: "ok", NO_TESTS: "no tests selected"}.get(
            r.returncode, f"FAILED (exit {r.returncode})"
        )
        lines.append(
            f"  [e{r.group.index}] {state}: {len(r.group.files)} files, {told}; "
            f"{r.wall_s / 60:.1f} min (expected {r.group.expected_s / 60:.1f})"
        )
    if cases:
        lines.append(f"==> slowest {slowest} e2e tests (setup+call+teardown)")
        for c in sorted(cases, key=lambda c: -c.seconds)[:slowest]:
            lines.append(f"  {c.seconds:7.1f} s  {c.file}::{c.name}")
    return lines


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Run tests/e2e as parallel groups, each in private namespaces.",
        epilog="Arguments after -- go to every group's pytest.",
    )
    ap.add_argument("--groups", "-k", type=int, default=2, help="parallel groups (default 2)")
    ap.add_argument("--durations-file", type=Path, default=DURATIONS, help="per-file seconds")
    ap.add_argument("--dry-run", action="store_true", help="print the split and exit")
    ap.add_argument("--record", action="store_true", help="store the measured per-file times")
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
        record(per_file(cases), args.durations_file, note=", ".join(map(str, args.record_from)))
        print(f"recorded {len(per_file(cases))} files in {args.durations_file}")
        return 0
    files = [str(Path(f).resolve().relative_to(REPO)) for f in args.files] or every
    groups = split(files, load_durations(args.durations_file), args.groups)
    for g in groups:
        print(f"[e{g.index}] expected {g.expected_s / 60:.1f} min: {' '.join(g.files)}")
    if args.dry_run:
        return 0
    python = sys.executable
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("not root (or no unshare): one plain pytest; the e2e tests skip without root")
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.extra, *files]
        return subprocess.run(cmd, cwd=REPO).returncode
    work = Path(tempfile.mkdtemp(prefix="sdnperf-e2e-", dir="/var/tmp"))
    try:
        running = run_groups(groups, python, args.extra, work)
        cases = [c for r in running if r.junit.exists() for c in read_junit(r.junit, every)]
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"groups' /tmp folders kept in {work}")
    print("\n".join(summary(running, cases)))
    if args.record:
        stamp = time.strftime("%Y-%m-%d", time.gmtime())
        record(per_file(cases), args.durations_file, note=f"{stamp}, {len(groups)} groups")
        print(f"recorded {len(per_file(cases))} files in {args.durations_file}")
    return verdict([r.returncode for r in running])


def verdict(returncodes: list[int | None]) -> int:
    """0 when every group passed; a group whose tests were all deselected (pytest's 5, e.g.
    `-k` naming tests of another group) passes unless every group is so."""
    if all(rc == NO_TESTS for rc in returncodes):
        return NO_TESTS
    return 0 if all(rc in (0, NO_TESTS) for rc in returncodes) else 1


if __name__ == "__main__":
    sys.exit(main())
