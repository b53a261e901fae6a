"""Study-file models of the application workloads: tcp-connect, voip, live-video, video, mixed.

They build on basic_config.py (which holds ping/iperf) and are joined with it into the
`WorkloadConfig` union in config.py. Like every workload model they forbid unknown fields.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from .basic_config import (
    IperfTcpConfig,
    IperfUdpConfig,
    PingConfig,
    _suffixed_field,
    _Workload,
    parse_suffixed,
)

# "h1" (a host: its interface) or "s1-eth2" (one interface of a node)
_CAPTURE_POINT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(-[A-Za-z0-9_.]+)?$")


class _Captured(_Workload):
    """A workload whose packets can be captured with tcpdump while it runs."""

    capture: list[str] = Field(
        default_factory=list,
        description='hosts or interfaces to capture on, e.g. ["h1", "s1-eth2"]; one pcap each',
    )
    capture_dir: str = Field(
        "results/captures", description="folder for the pcap files (created if missing)"
    )

    @field_validator("capture")
    @classmethod
    def _points(cls, value: list[str]) -> list[str]:
        for point in value:
            if not _CAPTURE_POINT.match(point):
                raise ValueError(
                    f"capture point {point!r} is neither a host ('h1') nor an interface ('s1-eth2')"
                )
        if len(set(value)) != len(value):
            raise ValueError("capture lists a point twice")
        return value


class TcpConnectConfig(_Captured):
    """TCP handshake delay: many new connections per pair, each timed by a probe."""

    kind: Literal["tcp-connect"]
    connections: int = Field(
        20, ge=1, le=100_000, description="connections per pair; the first is the cold one"
    )
    interval: float = Field(0.05, ge=0, le=60, description="seconds between connections")
    timeout: float = Field(
        3.0, gt=0, le=60, description="seconds a connect() may take before it counts as failed"
    )


Codec = Literal["G.711", "G.729"]


class VoipConfig(_Captured):
    """Voice calls with D-ITG (ITGSend VoIP mode, RTP framing), one call per pair."""

    kind: Literal["voip"]
    codec: Codec = Field("G.711", description="G.711 (64 kbit/s) or G.729 (8 kbit/s)")
    frames_per_packet: Literal[1, 2, 3] = Field(
        2,
        description="10-ms codec frames per RTP packet: 2 = 20 ms packets, 50 pkt/s "
        "(D-ITG offers 1 or 2 for G.711, 2 or 3 for G.729)",
    )
    duration: float = Field(10, gt=0, le=3600, description="seconds per call")
    vad: bool = Field(False, description="voice activity detection (silence suppression)")

    @model_validator(mode="after")
    def _framing(self) -> "VoipConfig":
        allowed = {"G.711": (1, 2), "G.729": (2, 3)}[self.codec]
        if self.frames_per_packet not in allowed:
            raise ValueError(
                f"frames_per_packet for {self.codec} must be "
                f"{' or '.join(map(str, allowed))} (what D-ITG emulates)"
            )
        return self


class LiveVideoConfig(_Captured):
    """A paced UDP/RTP-like stream at a fixed bitrate, measured at the receiver."""

    kind: Literal["live-video"]
    bitrate: str = Field("4M", description='stream bit/s, e.g. "4M" (K/M/G = 1000^n)')
    fps: int = Field(25, ge=1, le=240, description="video frames per second")
    packet_size: int = Field(1200, ge=64, le=8972, description="UDP payload bytes per packet")
    duration: float = Field(10, gt=0, le=3600, description="seconds")
    playout_delay_ms: float = Field(
        150,
        gt=0,
        le=10_000,
        description="a frame whose last packet arrives later than this after it was sent is late",
    )

    @field_validator("bitrate", mode="before")
    @classmethod
    def _rate(cls, value: object) -> str:
        return _suffixed_field(value, "bitrate")

    @property
    def bitrate_bps(self) -> float:
        return parse_suffixed(self.bitrate, 1000)


class VideoConfig(_Captured):
    """HTTP adaptive streaming from a server in one host to a player in another."""

    kind: Literal["video"]
    duration: float = Field(20, gt=0, le=3600, description="seconds of video to play")
    segment_s: float = Field(2.0, gt=0, le=30, description="segment duration, seconds")
    ladder: list[str] = Field(
        default_factory=lambda: ["240p:400K", "360p:800K", "480p:1.2M", "720p:2.5M", "1080p:5M"],
        description='renditions "HEIGHTp:BITRATE", lowest first',
    )
    adaptation: Literal["throughput", "buffer"] = Field(
        "throughput",
        description="throughput (harmonic mean of the last 3 segments, 0.8 "
        "safety) or buffer (BBA-0 style map from buffer level to bitrate)",
    )
    startup_segments: int = Field(
        1, ge=1, le=10, description="segments buffered before playback starts"
    )
    max_buffer_s: float = Field(
        12, gt=0, le=600, description="the player stops fetching when this much is buffered"
    )
    content: Literal["ffmpeg", "synthetic"] = Field(
        "ffmpeg",
        description="ffmpeg: encode a test source once and cache it; synthetic: "
        "segment sizes from a documented model (no encoder needed)",
    )

    @field_validator("ladder")
    @classmethod
    def _ladder(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("ladder must list at least one rendition")
        last = 0.0
        for item in value:
            m = re.match(r"^(\d{3,4})p:(.+)$", item)
            if not m:
                raise ValueError(f'rendition {item!r} is not like "720p:2.5M"')
            rate = parse_suffixed(m[2], 1000)
            if rate <= last:
                raise ValueError("ladder bitrates must increase from first to last")
            last = rate
        return value

    @property
    def renditions(self) -> list[tuple[int, float]]:
        """[(height, bit/s)], lowest first."""
        out = []
        for item in self.ladder:
            height, rate = item.split("p:")
            out.append((int(height), parse_suffixed(rate, 1000)))
        return out


MemberConfig = Annotated[
    Union[
        PingConfig,
        IperfTcpConfig,
        IperfUdpConfig,
        TcpConnectConfig,
        VoipConfig,
        LiveVideoConfig,
        VideoConfig,
    ],
    Field(discriminator="kind"),
]


class MixedConfig(_Captured):
    """Several workloads started together; each keeps its own metrics as 'NAME/MEMBER'."""

    kind: Literal["mixed"]
    # Each member has its own pairs. This field only gathers the members' explicit pairs,
    # so the study loader checks their host names like any workload's.
    pairs: list[tuple[str, str]] = Field(default_factory=list)
    members: list[MemberConfig] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _gather_pairs(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("members"), list):
            gathered = []
            for m in data["members"]:
                pairs = m.get("pairs") if isinstance(m, dict) else None
                if isinstance(pairs, list):
                    gathered += [
                        tuple(p)
                        for p in pairs
                        if isinstance(p, (list, tuple))
                        and len(p) == 2
                        and all(isinstance(h, str) for h in p)
                    ]
            gathered = list(dict.fromkeys(gathered))
            given = data.get("pairs")
            # a dumped config (stored params) carries the gathered list back: accept that
            if given is not None and [tuple(p) for p in given] != gathered:
                raise ValueError("a mixed workload has no pairs of its own: give them per member")
            data = {**data, "pairs": gathered}
        return data

    @model_validator(mode="after")
    def _distinct(self) -> "MixedConfig":
        names = [m.name for m in self.members]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"member names must differ; repeated: {', '.join(dup)}")
        kinds = [m.kind for m in self.members]
        # Members of one kind would share server ports on a common destination.
        same = sorted({k for k in kinds if kinds.count(k) > 1})
        if same:
            raise ValueError(
                f"one member per kind (give one member more pairs instead); "
                f"repeated: {', '.join(same)}"
            )
        return self
