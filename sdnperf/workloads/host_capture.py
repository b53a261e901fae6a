"""Filtered packet captures on hosts' interfaces around a block of traffic, read back as
bytes: one tcpdump per (label, host, BPF filter), into a temporary folder removed after.

For measurements a workload makes from packets it did not send itself: the receivers'
datagrams for UDP one-way delay (udp_owd.py), the ARP and LLDP frames at a ping client
(control_frames.py). capture.py keeps whole-workload captures the user asks to keep.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .capture import _await_capturing
from .context import WorkloadContext
from .procs import ProcessGroup


@contextmanager
def host_captures(
    ctx: WorkloadContext, points: Sequence[tuple[str, str, Sequence[str]]], snaplen: int
) -> Iterator[dict[str, bytes]]:
    """Capture at each (label, host, filter words) during the block; when the block ends the
    dict yielded holds each label's classic pcap bytes (a label whose file is missing is
    absent)."""
    folder = Path(tempfile.mkdtemp(prefix="sdnperf-cap-"))
    folder.chmod(0o777)  # tcpdump may drop to its own user before opening the file
    result: dict[str, bytes] = {}
    try:
        with ProcessGroup(ctx) as group:
            procs, files = [], {}
            for i, (label, host, bpf) in enumerate(points):
                node = ctx.host(host)
                path = folder / f"cap-{i}.pcap"
                argv = [
                    "tcpdump",
                    "-i",
                    str(node.defaultIntf()),
                    "-s",
                    str(snaplen),
                    "-B",
                    "4096",  # KiB of kernel buffer: no drops at a 12 Mbit/s stream's rate
                    "-U",  # each packet written as it comes: the file is whole at SIGTERM
                    "-n",
                    "-w",
                    str(path),
                    *bpf,
                ]
                procs.append((label, group.start(node, argv, f"tcpdump {label}")))
                files[label] = path
            _await_capturing(procs)
            try:
                yield result
            finally:
                time.sleep(0.2)  # let the last packets reach the capture buffer
                group.stop_all()  # SIGTERM: tcpdump flushes and closes its file
        for label, path in files.items():
            if path.exists():
                result[label] = path.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
