"""The script arithmetic of emulation/batched_links.py: commands joined with a separator
and the output split back per command (pty line ends included)."""

from __future__ import annotations

import subprocess

import pytest

pytest.importorskip("mininet")

from sdnperf.emulation.batched_links import (  # noqa: E402
    SEPARATOR,
    clear_root_command,
    script,
    split_outputs,
)


def test_script_runs_each_command_and_marks_its_end():
    line = script(["echo a", "true", "echo b 1>&2"])
    out = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
    assert out.stdout.count(SEPARATOR) == 3
    assert split_outputs(out.stdout, 3) == ["a", "", ""]


def test_split_outputs_handles_pty_line_ends_and_missing_parts():
    out = f"up\r\n{SEPARATOR}\r\n{SEPARATOR}\r\nError: bad\r\n{SEPARATOR}\r\n"
    assert split_outputs(out, 3) == ["up", "", "Error: bad"]
    assert split_outputs(out, 5) == ["up", "", "Error: bad", "", ""]
    assert split_outputs("", 2) == ["", ""]


@pytest.mark.parametrize(
    ("shown", "deletes"),
    [
        ("qdisc noqueue 0: root refcnt 2", False),
        ("qdisc pfifo_fast 0: root refcnt 2 bands 3 priomap 1 2 2 2", False),
        ("qdisc htb 5: root refcnt 2 r2q 10 default 0x1", True),
        ("Cannot find device", True),
    ],
)
def test_clear_root_deletes_only_someone_elses_qdisc(shown, deletes):
    # `tc` replaced by a function printing `shown` for show, and "DEL" for del
    fake = f"tc() {{ if [ \"$2\" = show ]; then echo '{shown}'; else echo DEL; fi; }}; "
    out = subprocess.run(
        ["bash", "-c", fake + clear_root_command("x-eth0")], capture_output=True, text=True
    )
    assert ("DEL" in out.stdout) == deletes
