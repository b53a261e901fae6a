"""The user-space IPv4 forwarder's frame work (sdnperf/arch/userfwd.py): route by /32,
rewrite MACs, TTL - 1 with the checksum updated incrementally (checked against a full
recomputation), drop what must be dropped, flood the rest."""

from __future__ import annotations

import socket

import pytest

from sdnperf.arch.userfwd import forward, mac_bytes, ttl_decremented

PORT_MACS = {1: mac_bytes("02:00:00:00:01:01"), 2: mac_bytes("02:00:00:00:01:02")}
H1, H2 = mac_bytes("00:00:00:00:00:01"), mac_bytes("00:00:00:00:00:02")
ROUTES = {socket.inet_aton("10.0.0.1"): (1, H1), socket.inet_aton("10.0.0.2"): (2, H2)}


def checksum(header: bytes) -> int:
    """RFC 791's header checksum, computed from scratch (the checksum field as zero)."""
    h = header[:10] + b"\0\0" + header[12:]
    total = sum(int.from_bytes(h[i : i + 2], "big") for i in range(0, len(h), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4_frame(dst: str, ttl: int = 64, payload: bytes = b"x" * 30) -> bytes:
    header = bytearray(
        bytes([0x45, 0, 0, 20 + len(payload), 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0])
        + socket.inet_aton("10.0.0.1")
        + socket.inet_aton(dst)
    )
    header[10:12] = checksum(bytes(header)).to_bytes(2, "big")
    return PORT_MACS[1] + H1 + b"\x08\x00" + bytes(header) + payload


@pytest.mark.parametrize("ttl", [2, 64, 128, 255])
def test_ttl_and_incremental_checksum_match_a_recomputation(ttl):
    header = ipv4_frame("10.0.0.2", ttl)[14:34]
    out = ttl_decremented(header)
    assert out[8] == ttl - 1
    assert int.from_bytes(out[10:12], "big") == checksum(out)


def test_routed_frame_rewritten_and_sent_to_the_hosts_port():
    frame = ipv4_frame("10.0.0.2")
    ((port, out),) = forward(frame, 1, ROUTES, PORT_MACS)
    assert port == 2
    assert out[:6] == H2 and out[6:12] == PORT_MACS[2]  # host MAC, our port's MAC
    assert out[22] == 63 and int.from_bytes(out[24:26], "big") == checksum(out[14:34])
    assert out[34:] == frame[34:]  # payload untouched


@pytest.mark.parametrize(
    "frame, in_port",
    [
        (ipv4_frame("10.0.0.2", ttl=1), 1),  # TTL runs out here
        (ipv4_frame("10.0.0.9"), 1),  # no route
        (ipv4_frame("10.0.0.1"), 1),  # back out of its own port
        (b"\x00" * 10, 1),  # runt
    ],
)
def test_dropped(frame, in_port):
    assert forward(frame, in_port, ROUTES, PORT_MACS) == []


def test_arp_is_flooded_to_the_other_ports():
    arp = b"\xff" * 6 + H1 + b"\x08\x06" + b"\x00" * 28
    assert forward(arp, 1, ROUTES, PORT_MACS) == [(2, arp)]
