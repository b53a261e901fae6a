"""The malformed-input corpus (tests/unit/data/malformed/, written by its make_corpus.py):
every case gets its exact error lines and exit code from the command a user would type,
and nothing answers with a traceback or a panic.

sdnperf commands run in this process (`sdnperf.cli.main`, stderr captured); our Rust
binaries run as processes. Paths in the cases are relative to the corpus folder."""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from sdnperf import tools

CORPUS = Path(__file__).parent / "data" / "malformed"
CASES = json.loads((CORPUS / "cases.json").read_text())
RUST = {"sdnperf-p4c", "sdnperf-switch"}


def _stores(root: Path) -> None:
    """The stored studies some cases read: a corrupt one, an empty file, a real one."""
    from sdnperf.samples import RunResult, Summary
    from sdnperf.store.sqlite import Store

    (root / "stores" / "corrupt" / "good").mkdir(parents=True, exist_ok=True)
    (root / "stores" / "corrupt" / "good" / "study.sqlite").write_bytes(b"not a database\n" * 64)
    (root / "stores" / "empty" / "good").mkdir(parents=True, exist_ok=True)
    (root / "stores" / "empty" / "good" / "study.sqlite").write_bytes(b"")
    ok = root / "stores" / "ok" / "good" / "study.sqlite"
    if ok.exists():
        ok.unlink()
    with Store(ok) as store:
        study_id = store.open_study("good", "good.toml", {"study": {"baseline": "br"}}, {})
        for arch in ("br", "of"):
            result = RunResult(
                key=f"t|{arch}|ping|1",
                topology="t",
                architecture=arch,
                workload="ping",
                repetition=1,
                params={},
                status="ok",
            )
            result.summaries.append(Summary("ping", "rtt_avg_ms", 1.0, "ms"))
            store.record_run(study_id, result)


@functools.cache
def _workdir() -> Path:
    """A copy of the corpus with the stored studies beside it (the tree stays as committed)."""
    work = Path(tempfile.mkdtemp(prefix="sdnperf-malformed-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    shutil.copytree(CORPUS, work, dirs_exist_ok=True)
    _stores(work)
    return work


def run_case(argv: list[str]) -> tuple[int, list[str]]:
    """(exit code, stderr lines) of one case, run from a copy of the corpus folder."""
    cwd = os.getcwd()
    os.chdir(_workdir())
    try:
        if argv[0] in RUST:
            proc = subprocess.run(
                [tools.find(argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120
            )
            # STF reports go to stdout, errors to stderr: both are the answer
            return proc.returncode, proc.stderr.splitlines() + proc.stdout.splitlines()
        from sdnperf.cli import main

        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = main(argv[1:])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 2
        return code, err.getvalue().splitlines()
    finally:
        os.chdir(cwd)


def test_the_corpus_is_large_and_covers_every_kind():
    kinds = {key.split("/")[0] for key in CASES}
    assert len(CASES) >= 100
    assert {"check", "topo-show", "ctlbench-run", "cli", "p4c", "switch-check", "stf"} <= kinds


@pytest.mark.parametrize("key", sorted(CASES))
def test_malformed_input_gets_its_exact_error(key):
    case = CASES[key]
    if case["argv"][1:2] == ["run"] and os.geteuid() != 0:
        pytest.skip("sdnperf run answers 'needs root' first when not root")
    code, stderr = run_case(case["argv"])
    text = "\n".join(stderr)
    assert "Traceback" not in text and "panicked" not in text, text
    assert "pydantic" not in text and "errors.pydantic.dev" not in text, text
    assert code == case["exit"], text
    assert stderr == case["stderr"]
    assert code in (1, 2)


def test_rust_tools_end_quietly_when_their_output_pipe_closes(tmp_path):
    """`sdnperf-p4c BAD.p4 2>&1 | head -2` exited 101 (a panic printing the error)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the tool writes
    for argv in (
        [tools.find("sdnperf-p4c"), str(CORPUS / "p4" / "p4-syntax.p4"), "-o", str(tmp_path)],
        [
            tools.find("sdnperf-switch"),
            "stf",
            str(CORPUS / CASES["stf/stf-empty.stf"]["argv"][2]),
            str(CORPUS / "stf" / "stf-empty.stf"),
        ],
    ):
        proc = subprocess.run(argv, stdout=write_end, stderr=write_end, timeout=60)
        assert proc.returncode in (1, -13), (argv, proc.returncode)  # -13: SIGPIPE, as `cat`
    os.close(write_end)


def test_sqlite_store_fixture_is_a_real_database(tmp_path):
    _stores(tmp_path)
    with sqlite3.connect(tmp_path / "stores" / "ok" / "good" / "study.sqlite") as db:
        assert db.execute("select count(*) from run").fetchone()[0] == 2
