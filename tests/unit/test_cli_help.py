"""`--help` on every sdnperf subcommand exits 0 with that subcommand's own help (the Rust
tools' pass-through commands included), found by walking the one argparse parser."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from sdnperf.cli import build_parser, main

# subcommand -> a word only its own help has; a new subcommand must be added here
OWN_WORD = {
    (): "COMMAND",
    ("run",): "--resume",
    ("check",): "Validate",
    ("report",): "--baseline",
    ("topo",): "ACTION",
    ("topo", "show"): "--png",
    ("doctor",): "kernel",
    ("clean",): "crashed",
    ("calibrate",): "--loss",
    ("ctlbench",): "ceiling",
    ("ctlbench", "run"): "--controller",
    ("ctlbench", "ceiling"): "--threads",
    ("p4c",): "sdnperf-p4c",
    ("switch",): "sdnperf-switch",
    ("stf",): "sdnperf-switch stf",
    ("recirc",): "ACTION",
    ("recirc", "plan"): "--target-delay",
    ("recirc", "study"): "--target-delay",
    ("study",): "ACTION",
    ("study", "list"): "not measured",
    ("study", "show"): "--page",
    ("study", "run"): "--record",
    ("study", "figures"): "reproduced A of B",
}


def subcommands(parser: argparse.ArgumentParser, path=()):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from subcommands(child, path + (name,))


def test_every_subcommand_is_listed():
    assert set(subcommands(build_parser())) == set(OWN_WORD)


@pytest.mark.parametrize("path", list(OWN_WORD), ids=lambda p: " ".join(p) or "sdnperf")
def test_help_exits_0_with_its_own_help(path, capsys):
    with pytest.raises(SystemExit) as exit_:
        code = main([*path, "--help"])
        raise SystemExit(code)  # our pass-through commands return instead of exiting
    assert exit_.value.code in (0, None)
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {' '.join(('sdnperf',) + path)}")
    assert OWN_WORD[path] in out


def test_stf_help_is_ours_and_the_tool_still_gets_its_arguments():
    """Through the installed entry point: `sdnperf stf --help` exited 2 with the switch's
    whole usage before; `sdnperf stf -- --help` still reaches the tool."""
    proc = subprocess.run(
        [sys.executable, "-m", "sdnperf.cli", "stf", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: sdnperf stf")
