"""The Linux user-space IPv4 forwarder that `kind = "userspace"` runs in its switch node:
seed paper 001's "pure Linux forwarding" in user space, a dedicated program beside the
kernel's routing and the SDN switches.

One process reads every port with an AF_PACKET socket and forwards in user space: an IPv4
frame by a /32 route per host (out port, the host's MAC as destination, the port's MAC as
source, TTL - 1 with the header checksum updated incrementally, RFC 1624); a frame whose
TTL would reach 0, or to an address without a route, is dropped; anything else (ARP) is
flooded to the other ports, so the hosts keep one subnet and resolve each other. The
frame work is `forward` (pure, unit-tested); the socket loop is `serve`.

    python -m sdnperf.arch.userfwd CONFIG.json
    CONFIG: {"ports": {"1": "s1-eth1", ...}, "port_macs": {"1": "aa:..", ...},
             "routes": {"10.0.0.1": [1, "00:00:00:00:00:01"], ...}, "ready": PATH}
"""

from __future__ import annotations

import json
import selectors
import signal
import socket
import sys
from pathlib import Path

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4  # the socket also sees what is sent on its port: not ours to forward
ETH_IPV4 = b"\x08\x00"

Routes = dict[bytes, tuple[int, bytes]]  # IPv4 address (4 bytes) -> (port, host MAC)


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", ""))


def ttl_decremented(header: bytes) -> bytes:
    """The 20+ byte IPv4 header with TTL - 1 and its checksum updated (RFC 1624 eq. 3:
    HC' = ~(~HC + ~m + m'), m the 16-bit word holding TTL and protocol)."""
    ttl, proto = header[8], header[9]
    old_word, new_word = (ttl << 8) | proto, ((ttl - 1) << 8) | proto
    hc = int.from_bytes(header[10:12], "big")
    total = (~hc & 0xFFFF) + (~old_word & 0xFFFF) + new_word
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    checksum = ~total & 0xFFFF
    return header[:8] + bytes([ttl - 1, proto]) + checksum.to_bytes(2, "big") + header[12:]


def forward(
    frame: bytes, in_port: int, routes: Routes, port_macs: dict[int, bytes]
) -> list[tuple[int, bytes]]:
    """Where one received frame goes: [(out port, frame as sent)], [] to drop it."""
    if len(frame) < 14:
        return []
    if frame[12:14] != ETH_IPV4:
        return [(p, frame) for p in port_macs if p != in_port]  # ARP and friends: flood
    if len(frame) < 34 or frame[14] >> 4 != 4:
        return []
    ihl = (frame[14] & 0x0F) * 4
    if ihl < 20 or len(frame) < 14 + ihl or frame[22] <= 1:
        return []  # malformed, or its TTL runs out here
    route = routes.get(frame[30:34])
    if route is None:
        return []
    out_port, host_mac = route
    if out_port == in_port:
        return []
    header = ttl_decremented(frame[14 : 14 + ihl])
    return [(out_port, host_mac + port_macs[out_port] + ETH_IPV4 + header + frame[14 + ihl :])]


def load(config: dict) -> tuple[dict[int, str], dict[int, bytes], Routes]:
    ports = {int(p): name for p, name in config["ports"].items()}
    macs = {int(p): mac_bytes(m) for p, m in config["port_macs"].items()}
    routes = {
        socket.inet_aton(ip): (int(port), mac_bytes(mac))
        for ip, (port, mac) in config["routes"].items()
    }
    return ports, macs, routes


def serve(config: dict) -> None:
    ports, macs, routes = load(config)
    socks: dict[int, socket.socket] = {}
    sel = selectors.DefaultSelector()
    for port, name in ports.items():
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setblocking(False)
        socks[port] = s
        sel.register(s, selectors.EVENT_READ, port)
    if config.get("ready"):
        Path(config["ready"]).write_text("ready\n")
    while True:
        for key, _ in sel.select():
            in_port = key.data
            sock = socks[in_port]  # the socket registered with this port (key.fileobj)
            while True:
                try:
                    frame, addr = sock.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                for out_port, out in forward(frame, in_port, routes, macs):
                    try:
                        socks[out_port].send(out)
                    except OSError:
                        pass  # a full queue or an oversized frame: dropped, as a link would


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: python -m sdnperf.arch.userfwd CONFIG.json")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        serve(json.loads(Path(argv[0]).read_text()))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
