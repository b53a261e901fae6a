"""What scripts read: `--version`, `--json` of check, study list and report, exit codes in
--help."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from sdnperf.cli import main
from tests.unit.test_malformed_inputs import CORPUS, _stores


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def test_version_and_exit_codes_in_help():
    code, out, _ = run(["--version"])
    assert code == 0 and out.startswith("sdnperf ")
    code, out, _ = run(["--help"])
    assert code == 0 and "exit codes:" in out and "130  interrupted" in out


def test_check_json_says_ok_or_lists_every_error(tmp_path):
    code, out, _ = run(["check", str(CORPUS / "study" / "good.toml"), "--json"])
    verdict = json.loads(out)
    assert code == 0 and verdict["ok"] is True and verdict["runs"] == 1
    code, out, _ = run(["check", str(CORPUS / "study" / "five-mistakes.toml"), "--json"])
    verdict = json.loads(out)
    assert code == 2 and verdict["ok"] is False and len(verdict["errors"]) == 5


def test_study_list_json_names_every_builtin_study():
    code, out, _ = run(["study", "list", "--json"])
    names = {s["name"] for s in json.loads(out)}
    assert code == 0 and {"recirculation", "workload-complexity"} <= names


def test_report_json_is_the_comparison_table(tmp_path):
    _stores(tmp_path)
    code, out, err = run(["report", str(tmp_path / "stores" / "ok" / "good"), "--json"])
    rows = json.loads(out)
    assert code == 0, err
    assert {r["architecture"] for r in rows} == {"br", "of"}
    assert not (tmp_path / "stores" / "ok" / "good" / "report.html").exists()


@pytest.mark.parametrize("only", ["arch=nothing", "rep=7"])
def test_only_that_selects_nothing_is_an_error(only):
    code, _, err = run(["check", str(CORPUS / "study" / "good.toml"), "--only", only])
    assert code == 2 and "selects none of the study's 1 runs" in err
