"""What every generator shares: the Generator record and the strict params base model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from ..spec import TopoSpec

# Large enough for the 100-switch overhead bench, small enough that a typo
# (e.g. fanout = 30) fails fast instead of building a million namespaces.
MAX_SWITCHES = 1000
MAX_HOSTS = 2000


class Params(BaseModel):
    """Study-file parameters of one topology kind: unknown keys and wrong types are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


P = TypeVar("P", bound=Params)


@dataclass(frozen=True)
class Generator(Generic[P]):
    """One topology kind: `build` takes what `params_model` validated (the type says they
    agree)."""

    kind: str
    params_model: type[P]
    build: Callable[[P, int, Path | None], TopoSpec]  # build(params, seed, base_dir)
    summary: str  # one line for `topo show` and error messages


def check_size(switches: int, hosts: int) -> None:
    """Raise ValueError (pydantic turns it into a field error) for oversized topologies."""
    if switches > MAX_SWITCHES:
        raise ValueError(
            f"this gives {switches} switches; at most {MAX_SWITCHES} switches are supported"
        )
    if hosts > MAX_HOSTS:
        raise ValueError(f"this gives {hosts} hosts; at most {MAX_HOSTS} hosts are supported")
