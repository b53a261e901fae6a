"""What sdnperf uses of Mininet's nodes and interfaces, as Protocols: Mininet ships no type
stubs, and unit tests hand small fakes in their place."""

from __future__ import annotations

import subprocess
from typing import Any, Protocol


class Node(Protocol):
    """A Mininet host or switch: a name and processes started in its namespace."""

    name: str

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen: ...


class Intf(Protocol):
    """A Mininet interface of a node."""

    name: str
    prefixLen: int | None

    def MAC(self) -> str: ...

    def IP(self) -> str | None: ...


class ControlledSwitch(Protocol):
    """A switch node that takes control-socket commands (emulation/p4switch.py's P4Switch)."""

    name: str

    def ctl(self, *commands: str) -> str: ...


class Net(Protocol):
    """A built Mininet network (or a test's fake): nodes by name."""

    def get(self, *names: str) -> Any: ...
