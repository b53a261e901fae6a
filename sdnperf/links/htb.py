"""The burst of Mininet's htb at a given rate, so our switch's port shaper can be the same
token bucket (rust/switch impair.rs: GCRA with burst tolerance burst / rate).

Mininet's TCLink (mininet/link.py, TCIntf.bwCmds) shapes with `htb rate R burst 15k` on
class 5:1 and sets no ceil or cburst, so tc makes ceil = rate and cburst its default,
ceil / HZ + mtu (1600 B; tc's q_htb.c), where HZ is what tc's get_hz reads from
/proc/net/psched (10^9 on a kernel with high-resolution timers, so ceil / HZ is a few
bytes). htb sends only while both its buckets (rate with `burst`, ceil with `cburst`) hold
tokens, so what bounds a burst is the smaller of the two: about 1600 B, not 15 KiB
(`tc -d class show` says "burst 15337b cburst 1600b" at 100 Mbit/s; measured through a
veth at 10 Mbit/s: two 1514-B frames leave back to back, then one every 1.21 ms; 200-B
frames: nine back to back). tc also rounds the buffer's time to its clock's ticks (at
1 Gbit/s it holds 1375 B); that rounding is not reproduced here.
"""

from __future__ import annotations

from pathlib import Path

MININET_BURST_BYTES = 15 * 1024  # "burst 15k" (tc: k = 1024 bytes)
TC_MTU_BYTES = 1600  # tc htb's default mtu, in its cburst default
TC_DEFAULT_HZ = 100  # tc's fallback when /proc/net/psched says nothing usable


def psched_hz(text: str) -> int:
    """tc's get_hz from the text of /proc/net/psched ("t2us us2t clock_res hz", hex): the
    fourth field when the third is 1000000, else tc's fallback."""
    try:
        fields = [int(x, 16) for x in text.split()]
    except ValueError:
        return TC_DEFAULT_HZ
    if len(fields) >= 4 and fields[2] == 1_000_000 and fields[3] > 0:
        return fields[3]
    return TC_DEFAULT_HZ


def host_hz(path: Path = Path("/proc/net/psched")) -> int:
    try:
        return psched_hz(path.read_text())
    except OSError:
        return TC_DEFAULT_HZ


def htb_burst_bytes(rate_mbps: float, hz: int) -> int:
    """Bytes Mininet's htb class lets leave at once after an idle spell at `rate_mbps`:
    min(burst 15k, cburst = rate in bytes/s / hz + 1600)."""
    cburst = int(rate_mbps * 1e6 / 8) // max(hz, 1) + TC_MTU_BYTES
    return min(MININET_BURST_BYTES, cburst)


def port_burst_bytes(rate_mbps: float, port_burst: str, hz: int) -> int:
    """The burst our switch's port gets for a link of `rate_mbps` (arch config
    `port_burst`): "htb", Mininet's htb's; "packet", none (strict pacing)."""
    return htb_burst_bytes(rate_mbps, hz) if port_burst == "htb" else 0
