"""The kernel limits a Mininet network needs, set in the initial network namespace before
any namespace is made for isolation.

Why: Mininet raises them itself (`mininet.util.fixLimits`: socket buffer maxima of 16 MB,
file and PTY counts, ARP and route table sizes) when its first network is built, but only
where it runs. A network namespace takes `net.core.rmem_max`/`wmem_max` from the initial
namespace when it is created and cannot raise them (the kernel refuses the write), so a
network built inside one (`--cluster` runs, the e2e groups) keeps a fresh machine's
maxima (4 MB on Debian 12's cloud kernels): `iperf3 -w 10M` then fails with "socket buffer
size not set correctly". Calling Mininet's own function first, where it would have run
anyway, gives those networks what a network in the initial namespace gets.
"""

from __future__ import annotations

from mininet.util import fixLimits


def raise_like_mininet() -> None:
    """Mininet's limits, here (root only; it warns and goes on where it cannot)."""
    fixLimits()
