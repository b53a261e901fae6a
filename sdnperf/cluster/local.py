"""`--cluster local:N`: N logical Ray nodes on this machine, for tests and demos.

A head node that runs no study work (it holds Ray's control service, and the driver
talks to it), and N worker nodes with one `sdnperf_slot` each. Everything listens on
127.0.0.1 and Ray's dashboard is off. The nodes' processes die with the driver (Ray sets
PR_SET_PDEATHSIG on Linux), so a killed driver leaves no Ray behind. Nodes on one machine
share a kernel: the driver sees that in their preflight facts and isolates each run in
its own network namespace (isolated.py).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdnperf.cluster import NODE_RESOURCE

if TYPE_CHECKING:
    # lazy: ray is heavy, wanted only when a local cluster starts
    from ray.cluster_utils import Cluster

LOCAL = re.compile(r"^local:(\d+)$")
MAX_LOCAL_NODES = 8
OBJECT_STORE_BYTES = 80 * 1024 * 1024  # run results are small; Ray's minimum is ~75 MiB


def local_size(address: str) -> int | None:
    """N of `local:N` (None: not a local address). Raises ValueError for a bad N."""
    match = LOCAL.match(address)
    if not match:
        return None
    n = int(match.group(1))
    if not 1 <= n <= MAX_LOCAL_NODES:
        raise ValueError(f"--cluster {address}: N must be between 1 and {MAX_LOCAL_NODES}")
    return n


FOLDER_PREFIX = "sdnperf-ray-"


def remove_stale_folders() -> None:
    """Ray folders of local clusters whose driver was killed (named after its PID)."""
    for folder in Path("/tmp").glob(f"{FOLDER_PREFIX}*-*"):
        pid = folder.name[len(FOLDER_PREFIX) :].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def ray_address_file_in(folder: str) -> Iterator[None]:
    """Ray's Cluster writes its address to `<RAY_TMPDIR or TMPDIR or /tmp>/ray/ray_current_cluster`
    without creating that folder, so it crashes on a machine where no Ray ever ran, and where a
    Ray did run it would point the user's own `ray.init()` at our short-lived cluster. Keep the
    file in our private folder instead (the variable is restored: only this start sees it)."""
    os.makedirs(os.path.join(folder, "ray"), exist_ok=True)
    before = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = before


def keep_ray_on_loopback() -> None:
    """Ray replaces 127.0.0.1 in an address with the machine's outward address before
    connecting, except where it believes clusters are unsupported; on loopback-only nodes
    that address is not served. Tell it to keep loopback (this process only)."""
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


@dataclass
class LocalCluster:
    size: int
    temp_dir: str = ""
    _cluster: Cluster | None = None

    def start(self) -> str:
        """Start the head and the nodes; returns the address to connect to."""
        from ray.cluster_utils import Cluster

        keep_ray_on_loopback()
        remove_stale_folders()
        # Ray's socket paths must stay short (sun_path): a short folder under /tmp.
        self.temp_dir = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir="/tmp")
        common: dict[str, Any] = dict(  # ray's node arguments (**kwargs: Any)
            node_ip_address="127.0.0.1",
            include_dashboard=False,
            object_store_memory=OBJECT_STORE_BYTES,
        )
        with ray_address_file_in(self.temp_dir):
            self._cluster = cluster = Cluster(
                initialize_head=True,
                connect=False,
                head_node_args=dict(num_cpus=0, resources={}, temp_dir=self.temp_dir, **common),
            )
            for _ in range(self.size):
                cluster.add_node(num_cpus=1, resources={NODE_RESOURCE: 1}, **common)
        return cluster.address

    def stop(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
            self._cluster = None
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
