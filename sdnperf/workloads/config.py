"""The `[[workload]]` entries of a study file: `WorkloadConfig`, the discriminated union
(on `kind`) of every workload's model, which the study schema embeds. The models live in
basic_config.py (ping, iperf) and traffic_config.py (the application workloads).
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from .basic_config import (
    AllToOne,
    IperfTcpConfig,
    IperfUdpConfig,
    Pairs,
    Permutation,
    PingConfig,
    parse_suffixed,
)
from .traffic_config import LiveVideoConfig, MixedConfig, TcpConnectConfig, VideoConfig, VoipConfig

WorkloadConfig = Annotated[
    Union[
        PingConfig,
        IperfTcpConfig,
        IperfUdpConfig,
        TcpConnectConfig,
        VoipConfig,
        LiveVideoConfig,
        VideoConfig,
        MixedConfig,
    ],
    Field(discriminator="kind"),
]

__all__ = [
    "WorkloadConfig",
    "AllToOne",
    "Pairs",
    "Permutation",
    "PingConfig",
    "IperfTcpConfig",
    "IperfUdpConfig",
    "TcpConnectConfig",
    "VoipConfig",
    "LiveVideoConfig",
    "VideoConfig",
    "MixedConfig",
    "parse_suffixed",
]
