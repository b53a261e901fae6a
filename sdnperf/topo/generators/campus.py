"""The 10-switch / 28-host three-tier campus network (a tree: no loops).

    core            s1
                  /     \\
    distribution s2       s3
               / | | \\    | \\ \\
    access   s4 s5 s6 s7  s8 s9 s10      (4 hosts on every access switch)

s2 serves four access switches (s4-s7, hosts h1-h16), s3 serves three (s8-s10, h17-h28).
"""

from __future__ import annotations

from ..builder import SpecBuilder
from ..spec import TopoSpec
from .base import Generator, Params

ACCESS_PER_DISTRIBUTION = (4, 3)
HOSTS_PER_ACCESS = 4


class CampusParams(Params):
    """The campus has a fixed shape; it takes no parameters (link values come from
    [topology.link])."""


def build_campus(p: CampusParams, seed: int, base_dir=None) -> TopoSpec:
    b = SpecBuilder()
    core = b.switch(pos=(0.0, 4.0), tier="core")
    distribution = [
        b.switch(pos=(-2.5 + 5.0 * i, 2.0), tier="distribution")
        for i in range(len(ACCESS_PER_DISTRIBUTION))
    ]
    for d in distribution:
        b.link(core, d)
    x = 0.0
    for d, count in zip(distribution, ACCESS_PER_DISTRIBUTION):
        for _ in range(count):
            access = b.switch(pos=(x * 1.5 - 4.5, 0.0), tier="access")
            b.link(d, access)
            b.hosts(access, HOSTS_PER_ACCESS)
            x += 1
    return b.spec("campus")


GENERATORS = [
    Generator(
        "campus",
        CampusParams,
        build_campus,
        "3-tier campus: 1 core, 2 distribution, 7 access switches, 28 hosts (a tree)",
    ),
]
