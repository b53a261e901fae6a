"""Traffic + measurement: host pairs, tool invocation (ping, iperf3), output parsers.

Entry point for the runner: `run_workload(cfg, ctx) -> WorkloadOutput`.
"""

from .base import REGISTRY, run_workload
from .config import IperfTcpConfig, IperfUdpConfig, PingConfig, WorkloadConfig
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .pairs import resolve_pairs

__all__ = [
    "REGISTRY",
    "run_workload",
    "WorkloadConfig",
    "PingConfig",
    "IperfTcpConfig",
    "IperfUdpConfig",
    "WorkloadContext",
    "WorkloadError",
    "WorkloadOutput",
    "resolve_pairs",
]
