"""Multi-path fabrics with loops: spine-leaf (Clos) and a rows x cols grid mesh."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..builder import SpecBuilder
from ..spec import TopoSpec
from .base import Generator, Params, check_size


class SpineLeafParams(Params):
    spines: int = Field(2, ge=1, le=64, description="spine switches")
    leaves: int = Field(4, ge=1, le=256, description="leaf switches, each linked to every spine")
    hosts_per_leaf: int = Field(2, ge=1, le=64, description="hosts on every leaf")

    @model_validator(mode="after")
    def _size(self):
        check_size(self.spines + self.leaves, self.leaves * self.hosts_per_leaf)
        return self


def build_spine_leaf(p: SpineLeafParams, seed: int, base_dir=None) -> TopoSpec:
    b = SpecBuilder()
    width = max(p.spines, p.leaves) - 1

    def spread(i: int, count: int) -> float:
        return width / 2 if count == 1 else i * width / (count - 1)

    spines = [b.switch(pos=(spread(i, p.spines), 1.0), tier="spine") for i in range(p.spines)]
    for i in range(p.leaves):
        leaf = b.switch(pos=(spread(i, p.leaves), 0.0), tier="leaf")
        for spine in spines:
            b.link(leaf, spine)
        b.hosts(leaf, p.hosts_per_leaf)
    return b.spec(f"spine-leaf-{p.spines}x{p.leaves}x{p.hosts_per_leaf}")


class GridParams(Params):
    rows: int = Field(3, ge=1, le=32, description="rows of switches")
    cols: int = Field(3, ge=1, le=32, description="columns of switches")
    hosts_per_switch: int = Field(1, ge=1, le=16, description="hosts on every switch")

    @model_validator(mode="after")
    def _size(self):
        check_size(self.rows * self.cols, self.rows * self.cols * self.hosts_per_switch)
        return self


def build_grid(p: GridParams, seed: int, base_dir=None) -> TopoSpec:
    # Row-major numbering: s1 is the top-left corner, s<cols> the top-right one.
    b = SpecBuilder()
    at = {}
    for r in range(p.rows):
        for c in range(p.cols):
            switch = at[r, c] = b.switch(pos=(float(c), float(-r)))
            b.hosts(switch, p.hosts_per_switch)
            if c > 0:
                b.link(at[r, c - 1], switch)
            if r > 0:
                b.link(at[r - 1, c], switch)
    return b.spec(f"grid-{p.rows}x{p.cols}x{p.hosts_per_switch}")


GENERATORS = [
    Generator(
        "spine-leaf",
        SpineLeafParams,
        build_spine_leaf,
        "every leaf linked to every spine (multi-path, loops), hosts on the leaves",
    ),
    Generator(
        "grid",
        GridParams,
        build_grid,
        "a rows x cols mesh of switches (loops), hosts on every switch",
    ),
]
