"""`recirc_pace_us` of a p4 architecture: our switch's recirculation path latency, passed
to the switch daemon as --recirc-pace-us and recorded in the run's facts."""

from __future__ import annotations

import pydantic
import pytest

from sdnperf.arch.config import P4Config


def test_pace_is_our_switchs_and_bounded():
    assert P4Config(kind="p4", name="p").recirc_pace_us == 0
    assert P4Config(kind="p4", name="p", recirc_pace_us=50).recirc_pace_us == 50
    with pytest.raises(pydantic.ValidationError, match="BMv2 has no recirculation path"):
        P4Config(kind="p4", name="p", target="bmv2", recirc_pace_us=50)
    with pytest.raises(pydantic.ValidationError, match="recirc_pace_us"):
        P4Config(kind="p4", name="p", recirc_pace_us=-1)
    with pytest.raises(pydantic.ValidationError, match="recirc_pace_us"):
        P4Config(kind="p4", name="p", recirc_pace_us=2_000_000)


def test_the_switch_daemon_gets_the_flag_only_when_set(tmp_path, monkeypatch):
    from sdnperf.arch import p4
    from sdnperf.topo.registry import build_topology

    spec = build_topology("single", {"hosts": 2}, seed=1)
    monkeypatch.setattr(p4.P4Architecture, "switch_binary", lambda self: "/bin/true")
    for pace, expect in ((0, []), (50, ["--recirc-pace-us", "50"])):
        config = P4Config(kind="p4", name="p", program="recirc", recirc_pace_us=pace)
        arch = p4.P4Architecture(config, spec, tmp_path, needs={})
        assert _extra_args_of(arch) == expect


def _extra_args_of(arch) -> list[str]:
    """The extra arguments a switch of `arch` is started with (without building one)."""
    import sdnperf.emulation.p4switch as p4switch

    seen: list = []

    class Capture:
        def __init__(self, *a, extra_args=None, **k):
            seen.append(list(extra_args or []))

    original = p4switch.P4Switch
    p4switch.P4Switch = Capture
    try:
        arch.mininet_options()["switch"]("s1")
    finally:
        p4switch.P4Switch = original
    return seen[0]
