"""`sdnperf run --cluster`: the checks made before anything starts."""

from __future__ import annotations

from sdnperf.cluster import ray_missing


def check_cluster_args(args) -> str | None:
    """None when `--cluster` can be tried, else what is wrong (exit 2)."""
    # lazy: only this command needs it (`sdnperf` starts small)
    from sdnperf.cluster.local import local_size

    try:
        local_size(args.cluster)
    except ValueError as exc:
        return str(exc)
    if args.cluster.startswith("local") and local_size(args.cluster) is None:
        return f"--cluster {args.cluster}: write local:N, e.g. local:2"
    return ray_missing()
