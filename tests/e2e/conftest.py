"""End-to-end tests run real Mininet, OVS and controllers: they need root.

After every test, nothing sdnperf-shaped may remain in the kernel: a leftover interface
is a clean-up bug, and this fixture makes it a test failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

LEFTOVER = re.compile(r"-eth\d+$|^s\d+$")


def _interfaces() -> set[str]:
    return {p.name for p in Path("/sys/class/net").iterdir() if LEFTOVER.search(p.name)}


@pytest.fixture(autouse=True)
def no_leftover_interfaces():
    if os.geteuid() != 0:
        yield
        return
    before = _interfaces()
    yield
    left = _interfaces() - before
    assert not left, f"interfaces left behind: {sorted(left)}"


@pytest.fixture
def needs_daemon():
    """Skips a test that needs our P4Runtime switch daemon when it is not built (tests ask
    for it by name or with support.NEEDS_DAEMON)."""
    from sdnperf import tools
    from sdnperf.arch.p4 import GRPC_DAEMON

    if tools.locate(GRPC_DAEMON) is None:
        pytest.skip(f"{GRPC_DAEMON} is not built")


@pytest.fixture(autouse=True, scope="session")
def quiet_mininet():
    try:
        from mininet.log import setLogLevel

        setLogLevel("warning")
    except ImportError:
        pass
