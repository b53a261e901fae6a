"""What both topology-aware controllers (the os-ken app `topo_forwarding.py` and our
P4Runtime controller's topo-forwarding app, `p4rt/apps.py`) remember of the broadcasts they
flood out of the fabric's edge ports: the same frame coming back in at another edge within
a moment was already flooded, and flooding it again would loop."""

from __future__ import annotations

import hashlib
import time

FLOOD_MEMORY_S = 1.0  # a frame seen again within this window was already flooded: drop it
REMEMBERED_MAX = 4096  # past this many frames the expired ones are forgotten


class FloodMemory:
    """Digests of the frames flooded in the last FLOOD_MEMORY_S seconds."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self.recent: dict[bytes, float] = {}

    def first_time(self, frame: bytes) -> bool:
        """True (and `frame` remembered from now) unless it was flooded within the window."""
        now = self.clock()
        digest = hashlib.blake2b(frame, digest_size=16).digest()
        if now - self.recent.get(digest, -FLOOD_MEMORY_S) < FLOOD_MEMORY_S:
            return False
        self.recent[digest] = now
        if len(self.recent) > REMEMBERED_MAX:
            self.recent = {k: t for k, t in self.recent.items() if now - t < FLOOD_MEMORY_S}
        return True
