"""The workload seam: `run_workload(cfg, ctx)` dispatches on `cfg.kind` through REGISTRY.

To add a workload: write its config model in config.py (add it to `WorkloadConfig`), a
`run_xxx(cfg, ctx) -> WorkloadOutput` function in its own module, and one line here.
"""

from __future__ import annotations

from typing import Callable

from .config import WorkloadConfig
from .context import WorkloadContext, WorkloadError, WorkloadOutput
from .iperf import run_iperf_tcp, run_iperf_udp
from .live_video import run_live_video
from .mixed import run_mixed
from .ping import run_ping
from .tcp_connect import run_tcp_connect
from .video import run_video
from .voip import run_voip

REGISTRY: dict[str, Callable[..., WorkloadOutput]] = {
    "ping": run_ping,
    "iperf-tcp": run_iperf_tcp,
    "iperf-udp": run_iperf_udp,
    "tcp-connect": run_tcp_connect,
    "voip": run_voip,
    "live-video": run_live_video,
    "video": run_video,
    "mixed": lambda cfg, ctx: run_mixed(cfg, ctx, run_workload),  # members dispatch here too
}

# Workloads that call ctx.traffic_starts() when their measured traffic begins (after their
# servers are up); for the others the runner counts from the workload's start.
ANNOUNCES_TRAFFIC_START = frozenset({"iperf-tcp", "iperf-udp"})


def run_workload(cfg: WorkloadConfig, ctx: WorkloadContext) -> WorkloadOutput:
    """Run one workload on a built network. Every process it starts is stopped and reaped
    before this returns or raises; tool failures and hangs raise WorkloadError."""
    try:
        runner = REGISTRY[cfg.kind]
    except KeyError:
        raise WorkloadError(
            f"no workload of kind {cfg.kind!r}; known: {', '.join(REGISTRY)}"
        ) from None
    return runner(cfg, ctx)


__all__ = [
    "ANNOUNCES_TRAFFIC_START",
    "REGISTRY",
    "WorkloadContext",
    "WorkloadError",
    "WorkloadOutput",
    "run_workload",
]
