"""Run a study's blocks on the nodes of a Ray cluster (`sdnperf run --cluster ADDRESS`).

Pure parts (no Ray): blocks.py (which runs go together), schedule.py (who runs what next,
retry rules), preflight.py (does every node agree), variance.py (does the node explain the
results). Ray parts: local.py (a cluster of logical nodes on this machine), worker.py (the
actor on each node), driver.py (the single writer that commits runs as they come back).
isolated.py runs one run in its own network namespace, for nodes that share a kernel.
"""

from __future__ import annotations

NODE_RESOURCE = "sdnperf_slot"  # one per node: one run at a time per machine
INSTALL_HINT = (
    "Ray is not installed: `--cluster` needs it. Install the extra with "
    "`pip install 'sdnperf[cluster]'` (scripts/install.sh does it), "
    "on the driver and on every node of the cluster."
)


def ray_missing() -> str | None:
    """None when Ray imports, else the hint saying how to get it."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return INSTALL_HINT
    return None
