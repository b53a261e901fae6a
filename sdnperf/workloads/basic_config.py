"""Study-file models every workload builds on (names, host pairs, numbers with K/M/G
suffixes, `_Workload`), and the basic measurements: ping, iperf-tcp, iperf-udp.

Every model forbids unknown fields so a typo in a study file is an error naming the field.
The union of all kinds is `config.WorkloadConfig`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

# A workload name ends up in result keys and file names: keep it plain.
Name = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="letters, digits, '_', '.', '-'",
    ),
]

# iperf3 size/rate syntax: a number with an optional K/M/G/T suffix ("20M", "1.5G").
_SUFFIXED = re.compile(r"^\d+(\.\d+)?[KMGTkmgt]?$")
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


def parse_suffixed(text: str, base: int) -> float:
    """'20M' -> 20 * base**2. iperf3 uses base 1024 for bytes (-n) and 1000 for rates (-b)."""
    text = text.strip()
    if not _SUFFIXED.match(text):
        raise ValueError(f"{text!r} is not a number with an optional K/M/G/T suffix")
    suffix = text[-1].upper() if text[-1].isalpha() else ""
    number = float(text[:-1] if suffix else text)
    return number * base ** _POWERS[suffix]


def _suffixed_field(value: object, what: str) -> str:
    """Accept 20000000 or "20M"; keep the iperf3 spelling, reject zero and garbage."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f'{what} must be a number or a string like "20M"')
    text = str(value) if not isinstance(value, float) else repr(value)
    if parse_suffixed(text, 1000) <= 0:
        raise ValueError(f"{what} must be greater than 0, got {value!r}")
    return text.strip()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- host pairs -------------------------------------------------------------------------


class AllToOne(_Strict):
    """Every other host sends to this one (incast)."""

    all_to_one: str = Field(min_length=1)


class Permutation(_Strict):
    """N random src->dst pairs drawn from a random permutation without self-pairs."""

    permutation: int = Field(ge=1, le=100_000)


HostPair = tuple[str, str]


_PAIRS_HELP = (
    'pairs must be a list like [["h1", "h2"], ...], {all_to_one = "h1"} or {permutation = N}'
)


def _pairs_error(reason: str) -> PydanticCustomError:
    # A custom error reads as the reason alone (a ValueError gets a "Value error, " prefix).
    return PydanticCustomError("pairs", "{reason}", {"reason": reason})


def _coerce_pairs(value: object) -> object:
    """Check the shape of `pairs` ourselves, so every mistake is one message at `pairs`
    (a plain union would report one error per form it tried, under internal names)."""
    if isinstance(value, (AllToOne, Permutation)):
        return value
    if isinstance(value, dict):
        for key, model in (("all_to_one", AllToOne), ("permutation", Permutation)):
            if key in value:
                try:
                    return model.model_validate(value)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"]) or key
                    raise _pairs_error(f"{where}: {err['msg']}") from None
        raise _pairs_error(_PAIRS_HELP)
    if not isinstance(value, (list, tuple)):
        raise _pairs_error(_PAIRS_HELP)
    if not value:
        raise _pairs_error("pairs must not be empty")
    pairs, seen = [], set()
    for i, pair in enumerate(value, 1):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(h, str) and h for h in pair)
        ):
            raise _pairs_error(f'pair {i} must be two host names like ["h1", "h2"], got {pair!r}')
        src, dst = pair
        if src == dst:
            raise _pairs_error(f"pair {i} [{src!r}, {dst!r}] sends to itself")
        if (src, dst) in seen:  # results are keyed by flow "src->dst"
            raise _pairs_error(f"pair {i} [{src!r}, {dst!r}] is listed twice")
        seen.add((src, dst))
        pairs.append((src, dst))
    return pairs


Pairs = Annotated[Union[list[HostPair], AllToOne, Permutation], BeforeValidator(_coerce_pairs)]


_TIME_LIMIT_HELP = (
    "seconds after which a hanging iperf3 is killed and the run fails; "
    "default duration + 15 s, or 120 s for a fixed-bytes transfer"
)


class _Workload(_Strict):
    """What every workload has: a name and the host pairs it runs between."""

    name: Name
    pairs: Pairs
    # Other values on one [[topology]] entry (by its name), for studies whose topologies
    # differ in hosts or lengths (000 Table 1: H1->H5 on 8 hosts, H1->H21 on 36; 1000 pings,
    # 2000 on the Internet topology). Applied when a run's one-topology study is made
    # (study/validate.py for_topology); "none" unsets an optional field there.
    per_topology: dict[str, dict[str, Any]] | None = Field(
        None, description="topology name -> {field = value} used on that topology"
    )
    # Run only on these [[topology]] entries (000: the mixed traffic on grid and Internet).
    topologies: list[str] | None = Field(
        None, min_length=1, description="names of the topologies this workload runs on"
    )


class PingConfig(_Workload):
    """ICMP echo: one cold first packet per pair, then a steady series."""

    kind: Literal["ping"]
    count: int = Field(20, ge=1, le=100_000, description="packets in the steady series")
    interval: float = Field(0.2, ge=0.002, le=60, description="seconds between packets")
    size: int = Field(56, ge=0, le=65_507, description="ICMP payload bytes")
    cold: bool = Field(True, description="send and record one first packet apart")
    control_frames: bool = Field(
        False,
        description="capture ARP and LLDP frames at each client: frames per second over time",
    )
    reply_timeout: float = Field(
        2.0, gt=0, le=60, description="seconds a reply may take before the packet is lost"
    )


class IperfTcpConfig(_Workload):
    """TCP bulk transfer with iperf3, for a fixed duration or a fixed number of bytes."""

    kind: Literal["iperf-tcp"]
    duration: float | None = Field(None, gt=0, le=3600, description="seconds")
    bytes: str | None = Field(None, description='bytes to send, e.g. "20M" (K/M/G = 1024^n)')
    window: str | None = Field(None, description='socket buffer, e.g. "256K"')
    rate: str | None = Field(
        None,
        description='a bound on the sending rate, bit/s, e.g. "12M" (iperf3 -b); none: unbound',
    )
    time_limit: float | None = Field(None, gt=0, le=7200, description=_TIME_LIMIT_HELP)

    @field_validator("bytes", "window", "rate", mode="before")
    @classmethod
    def _size(cls, value: object, info) -> str | None:
        return None if value is None else _suffixed_field(value, info.field_name)

    @model_validator(mode="before")
    @classmethod
    def _default_duration(cls, data: object) -> object:
        # Neither given: the documented default is a 5-s run.
        if isinstance(data, dict) and data.get("duration") is None and data.get("bytes") is None:
            data = {**data, "duration": 5}
        return data

    @model_validator(mode="after")
    def _one_mode(self) -> "IperfTcpConfig":
        if self.duration is not None and self.bytes is not None:
            raise ValueError("give either duration or bytes, not both")
        return self

    @property
    def byte_count(self) -> int | None:
        return None if self.bytes is None else int(parse_suffixed(self.bytes, 1024))

    @property
    def rate_bps(self) -> float | None:
        return None if self.rate is None else parse_suffixed(self.rate, 1000)

    @property
    def window_bytes(self) -> int | None:
        return None if self.window is None else int(parse_suffixed(self.window, 1024))


class IperfUdpConfig(_Workload):
    """UDP constant bit rate with iperf3, for a fixed duration or a fixed number of bytes."""

    kind: Literal["iperf-udp"]
    rate: str = Field("10M", description='bit/s, e.g. "10M" (K/M/G = 1000^n)')
    duration: float | None = Field(None, gt=0, le=3600, description="seconds (default 5)")
    bytes: str | None = Field(
        None, description='bytes to send, e.g. "1G" (K/M/G = 1024^n), instead of a duration'
    )
    length: int | None = Field(None, ge=16, le=65_507, description="datagram payload bytes")
    time_limit: float | None = Field(None, gt=0, le=7200, description=_TIME_LIMIT_HELP)
    one_way_delay: bool = Field(
        False,
        description="capture at each receiver for the datagrams' one-way delay (owd_ms)",
    )

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, value: object) -> str:
        return _suffixed_field(value, "rate")

    @field_validator("bytes", mode="before")
    @classmethod
    def _bytes(cls, value: object) -> str | None:
        return None if value is None else _suffixed_field(value, "bytes")

    @model_validator(mode="before")
    @classmethod
    def _default_duration(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("duration") is None and data.get("bytes") is None:
            data = {**data, "duration": 5}
        return data

    @model_validator(mode="after")
    def _one_mode(self) -> "IperfUdpConfig":
        if self.duration is not None and self.bytes is not None:
            raise ValueError("give either duration or bytes, not both")
        return self

    @property
    def rate_bps(self) -> float:
        return parse_suffixed(self.rate, 1000)

    @property
    def byte_count(self) -> int | None:
        return None if self.bytes is None else int(parse_suffixed(self.bytes, 1024))

    @property
    def expected_seconds(self) -> float:
        """How long the sender runs: the duration, or the bytes at the rate."""
        if self.duration is not None:
            return self.duration
        return (self.byte_count or 0) * 8 / self.rate_bps
