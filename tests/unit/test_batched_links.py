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
    ("refusal", "printed"),
    [
        ("", "DEL"),  # someone's qdisc: deleted
        ("Error: Cannot delete qdisc with handle of zero.", ""),  # a default root: kept
    ],
)
def test_clear_root_deletes_the_root_and_is_silent_on_a_default_one(refusal, printed):
    # `tc` replaced by a function failing with `refusal` on stderr, or printing "DEL"
    fake = (
        f"tc() {{ if [ -n '{refusal}' ]; then echo '{refusal}' >&2; return 2; fi; echo DEL $*; }}; "
    )
    out = subprocess.run(
        ["bash", "-c", fake + clear_root_command("x-eth0")], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert out.stderr == ""
    assert out.stdout.strip() == (f"{printed} qdisc del dev x-eth0 root" if printed else "")


def test_pair_line_puts_each_end_in_its_namespace():
    from sdnperf.emulation.batched_links import delete_batch, pair_line

    root_to_host = pair_line(
        "s1-eth1", "02:00:00:00:00:01", None, "h1-eth0", "02:00:00:00:00:02", 42
    )
    assert root_to_host == (
        "link add name s1-eth1 address 02:00:00:00:00:01 "
        "type veth peer name h1-eth0 address 02:00:00:00:00:02 netns 42\n"
    )
    host_to_host = pair_line("h1-eth0", "02:00:00:00:00:01", 7, "h2-eth0", "02:00:00:00:00:02", 8)
    assert "address 02:00:00:00:00:01 netns 7 type veth" in host_to_host
    assert host_to_host.endswith("address 02:00:00:00:00:02 netns 8\n")
    # deletion: every name moved to one group, then the group deleted, in one batch
    assert delete_batch(["a", "b"], 5).splitlines() == [
        "link set dev a group 5",
        "link set dev b group 5",
        "link del group 5",
    ]


def test_delete_root_ends_deletes_the_devices_given_in_the_same_batch(monkeypatch):
    from sdnperf.emulation import batched_links

    present = {"s9"}  # a bridge switch; "gone" does not exist (deleted already)
    batches: list[str] = []

    class FakePath:
        def __init__(self, path: str):
            self.name = path.rsplit("/", 1)[-1]

        def exists(self) -> bool:
            return self.name in present

    def fake_run(argv, input, **kwargs):
        batches.append(input)
        present.clear()  # the kernel deleted the group

    monkeypatch.setattr(batched_links, "Path", FakePath)
    monkeypatch.setattr(batched_links, "free_group", lambda: 9)
    monkeypatch.setattr(batched_links.subprocess, "run", fake_run)
    batched_links.delete_root_ends([], ["s9", "gone"])
    assert batches == ["link set dev s9 group 9\nlink del group 9\n"]
    batched_links.delete_root_ends([], ["s9"])  # nothing left to delete: no call
    assert len(batches) == 1
