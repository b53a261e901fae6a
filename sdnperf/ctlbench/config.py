"""The ctlbench study file (TOML) and its validation.

    [study]
    name = "ctlbench-openflow"
    repetitions = 1

    [[controller]]                  # one table per controller under test
    kind = "echo"                   # openflow13: echo | osken | faucet | ovs-testcontroller
    #                               #             | external
    #                               # p4runtime:  echo | p4rt | external
    # app = "l2-learning"           # osken: l2-learning | topo-forwarding | simple_switch_13
    #                               #        | a module name | a .py file
    #                               # p4rt (our P4Runtime controller): l2-learning
    # address = "127.0.0.1:6653"    # external: openflow13: the controller's address;
    #                               # p4runtime: where device 1 listens (device i on
    #                               # PORT+i-1); the external controller dials the devices
    # pid = 1234                    # external: sample this process's CPU (optional)
    # name = "label"                # how the report names it (default from kind/app)

    [load]
    protocol = "openflow13"         # openflow13 | p4runtime
    mode = "throughput"             # rate | throughput | latency
    switches = [1, 4, 16]           # sweep
    rate = [100, 1000]              # packet-ins/s per switch (rate mode; sweep)
    window = 64                     # throughput mode
    warmup = 1.0
    duration = 5.0                  # or packets = N per switch
    drain = 1.0
    timeout = 1.0
    hosts = 100
    ports = 4
    threads = 1
    ceiling = true                  # measure the probe's ceiling (echo controller) first

    [[sweep]]                       # any other [load] field, swept (ctlbench/study.py)
    param = "load.window"
    values = [16, 64, 256]

[study] also takes order = "interleaved" | "random" and seed (the run order).

Errors name the file, line and field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sdnperf.study.locate import format_path, line_of
from sdnperf.study.messages import explain
from sdnperf.userinput import InputError, SafeName, read_text

KINDS = ("echo", "osken", "faucet", "ovs-testcontroller", "p4rt", "external")
# the controllers each southbound protocol can be benchmarked with
PROTOCOL_KINDS = {
    "openflow13": ("echo", "osken", "faucet", "ovs-testcontroller", "external"),
    "p4runtime": ("echo", "p4rt", "external"),
}
P4RT_APPS = ("l2-learning",)  # apps of our P4Runtime controller that answer every packet-in


class ConfigError(ValueError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StudySection(_Strict):
    name: SafeName = "ctlbench"  # results/<name>/: one safe folder name
    repetitions: int = Field(default=1, ge=1, le=100)
    baseline: str | None = None
    # the run order of the one study pipeline (study/plan.py): file order, or shuffled by seed
    order: Literal["interleaved", "random"] = "interleaved"
    seed: int = 1


class ControllerSpec(_Strict):
    kind: Literal["echo", "osken", "faucet", "ovs-testcontroller", "p4rt", "external"]
    app: str | None = None
    address: str | None = None
    pid: int | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _check(self):
        if self.kind in ("osken", "p4rt") and not self.app:
            self.app = "l2-learning"
        if self.kind not in ("osken", "p4rt") and self.app:
            raise ValueError(f'\'app\' is only for kind = "osken" or "p4rt", not {self.kind!r}')
        if self.kind == "p4rt" and self.app not in P4RT_APPS:
            raise ValueError(
                f"p4rt app {self.app!r}: expected one of {', '.join(P4RT_APPS)} "
                "(an app that answers every packet-in)"
            )
        if self.kind == "external":
            if not self.address:
                raise ValueError('kind = "external" needs address = "127.0.0.1:PORT"')
            host, _, port = self.address.rpartition(":")
            if host not in ("127.0.0.1", "localhost", "::1", "[::1]") or not port.isdigit():
                raise ValueError(f"address {self.address!r}: only loopback HOST:PORT is allowed")
        elif self.address or self.pid:
            raise ValueError("'address' and 'pid' are only for kind = \"external\"")
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        if self.kind == "p4rt":
            return f"p4rt-{self.app}"
        if self.kind == "osken" and self.app is not None:
            app = Path(self.app).stem if self.app.endswith(".py") else self.app.rsplit(".", 1)[-1]
            return f"osken-{app}"
        if self.kind == "external":
            return f"external-{self.address}"
        return self.kind


class LoadSection(_Strict):
    # The southbound protocol of the emulated switches: OpenFlow 1.3 switches connect to
    # the controller; P4Runtime devices (gRPC servers) are dialled by the controller.
    protocol: Literal["openflow13", "p4runtime"] = "openflow13"
    mode: Literal["rate", "throughput", "latency"] = "throughput"
    switches: list[int] = Field(default_factory=lambda: [1])
    rate: list[float] = Field(default_factory=lambda: [1000.0])
    window: int = Field(default=64, ge=1, le=1 << 19)
    warmup: float = Field(default=1.0, ge=0)
    duration: float = Field(default=5.0, gt=0)
    packets: int | None = Field(default=None, ge=1)
    drain: float = Field(default=1.0, ge=0)
    timeout: float = Field(default=1.0, gt=0)
    hosts: int = Field(default=100, ge=2, le=0xFFFFFF)
    ports: int = Field(default=4, ge=1, le=0xFF00)
    threads: int = Field(default=1, ge=1, le=64)
    interval: float = Field(default=1.0, gt=0)
    buffer_ids: bool = False
    ceiling: bool = True
    ceiling_duration: float = Field(default=2.0, gt=0)

    @field_validator("switches")
    @classmethod
    def _switches(cls, v):
        if not v or any(n < 1 or n > 65535 for n in v):
            raise ValueError("switches: a non-empty list of counts in 1..65535")
        return v

    @field_validator("rate")
    @classmethod
    def _rate(cls, v):
        if not v or any(not (r > 0) for r in v):
            raise ValueError("rate: a non-empty list of packet-ins/s per switch, each > 0")
        return v

    def points(self) -> list[tuple[int, float | None]]:
        """The sweep: (switches, rate per switch or None outside rate mode)."""
        rates = self.rate if self.mode == "rate" else [None]
        return [(n, r) for n in self.switches for r in rates]


class SweepSection(_Strict):
    """One [[sweep]]: a [load] field and its values (the study pipeline's sweeps,
    ctlbench/study.py); `load.switches` and `load.rate` are lists of their own already."""

    param: str
    values: list[int | float | bool | str] = Field(min_length=1)

    @field_validator("param")
    @classmethod
    def _param(cls, v):
        section, _, name = v.partition(".")
        swept = set(LoadSection.model_fields) - {"switches", "rate", "protocol"}
        if section != "load" or name not in swept:
            raise ValueError(
                f"param {v!r}: expected load.FIELD, FIELD one of {', '.join(sorted(swept))}"
            )
        return v


class CtlbenchFile(_Strict):
    study: StudySection = Field(default_factory=StudySection)
    controller: list[ControllerSpec] = Field(default_factory=lambda: [ControllerSpec(kind="echo")])
    load: LoadSection = Field(default_factory=LoadSection)
    sweep: list[SweepSection] = Field(default_factory=list)

    def load_at(self, point) -> LoadSection:
        """[load] with a sweep point (("load.FIELD", value), ...) applied, validated."""
        data = self.load.model_dump()
        for path, value in point:
            data[path.partition(".")[2]] = value
        return LoadSection.model_validate(data)

    @model_validator(mode="after")
    def _sweeps(self):
        params = [s.param for s in self.sweep]
        if len(set(params)) != len(params):
            raise ValueError(f"each [[sweep]] param once: {params}")
        for i, s in enumerate(self.sweep):
            for value in s.values:
                try:
                    self.load_at(((s.param, value),))
                except ValidationError as exc:
                    reason = "; ".join(e["msg"] for e in exc.errors())
                    raise ValueError(f"sweep[{i}]: {s.param} = {value!r}: {reason}") from None
        return self

    @model_validator(mode="after")
    def _unique(self):
        allowed = PROTOCOL_KINDS[self.load.protocol]
        for c in self.controller:
            if c.kind not in allowed:
                raise ValueError(
                    f"controller kind {c.kind!r} does not speak {self.load.protocol}; "
                    f'with protocol = "{self.load.protocol}" use {" | ".join(allowed)}'
                )
        labels = [c.label for c in self.controller]
        dup = {x for x in labels if labels.count(x) > 1}
        if dup:
            raise ValueError(f"controller names must be unique (give 'name'): {sorted(dup)}")
        return self


def parse(text: str, source: str = "<text>") -> CtlbenchFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    try:
        return CtlbenchFile.model_validate(data)
    except ValidationError as exc:
        found = sorted(
            (
                (line_of(text, loc) or 0, format_path(loc), msg)
                for loc, msg in explain(exc, CtlbenchFile)
            ),
            key=lambda item: item[0],
        )
        raise ConfigError(
            "\n".join(
                f"{source}:{line}: {field or '(file)'}: {msg}"
                if line
                else f"{source}: {field or '(file)'}: {msg}"
                for line, field, msg in found
            )
        ) from None


def validated(data: dict, source: str = "options") -> CtlbenchFile:
    """A ctlbench configuration built from a file and command-line options; ConfigError in
    words (`source: field: what is wrong`) otherwise."""
    try:
        return CtlbenchFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            "\n".join(
                f"{source}: {format_path(loc) or '(file)'}: {msg}"
                for loc, msg in explain(exc, CtlbenchFile)
            )
        ) from None


def load(path: str | Path) -> CtlbenchFile:
    path = Path(path)
    try:
        text = read_text(path)
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    return parse(text, str(path))


def controller_from_arg(spec: str) -> ControllerSpec:
    """`echo`, `osken:l2-learning`, `faucet`, `ovs-testcontroller`, `p4rt[:APP]`,
    `127.0.0.1:6653`."""
    kind, _, arg = spec.partition(":")
    try:
        # validated like a file's kind = "...": `kind` is the user's text
        if kind in ("osken", "p4rt"):
            return ControllerSpec.model_validate({"kind": kind, "app": arg or "l2-learning"})
        if kind in ("echo", "faucet", "ovs-testcontroller") and not arg:
            return ControllerSpec.model_validate({"kind": kind})
        if kind in ("127.0.0.1", "localhost") and arg.isdigit():
            return ControllerSpec(kind="external", address=spec)
        if kind == "external":
            return ControllerSpec(kind="external", address=arg)
    except ValidationError as exc:
        reason = "; ".join(msg for _loc, msg in explain(exc, ControllerSpec))
        raise ConfigError(f"--controller {spec}: {reason}") from None
    raise ConfigError(
        f"--controller {spec}: expected echo, osken[:APP], faucet, "
        "ovs-testcontroller, p4rt[:APP] or 127.0.0.1:PORT"
    )
