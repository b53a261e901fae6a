"""h2stream, the controller's own HTTP/2 framing of the P4Runtime stream, byte by byte
(the end-to-end check against a grpcio server is in test_p4rt_client.py, against our
Rust switch in the e2e tests)."""

from __future__ import annotations

import struct

import hpack
import pytest

from sdnperf.controllers.p4rt import h2stream as h
from sdnperf.controllers.p4rt.h2stream import GrpcStream, frame

TRAILERS = hpack.Encoder().encode(
    [(":status", "200"), ("grpc-status", "5"), ("grpc-message", "unknown%20device%20id%207")]
)


def frames(data: bytes) -> list[tuple[int, int, int, bytes]]:
    out, pos = [], 0
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 3], "big")
        out.append(
            (
                data[pos + 3],
                data[pos + 4],
                int.from_bytes(data[pos + 5 : pos + 9], "big"),
                data[pos + 9 : pos + 9 + n],
            )
        )
        pos += 9 + n
    return out


def grpc_msg(body: bytes) -> bytes:
    return b"\x00" + struct.pack(">L", len(body)) + body


def new():
    got, closed = [], []
    s = GrpcStream("127.0.0.1:9559", "/p4.v1.P4Runtime/StreamChannel", got.append, closed.append)
    return s, got, closed


def test_start_is_preface_settings_window_and_request_headers():
    s, _, _ = new()
    data = s.start()
    assert data.startswith(h.PREFACE)
    fs = frames(data[len(h.PREFACE) :])
    assert [f[0] for f in fs] == [h.SETTINGS, h.WINDOW_UPDATE, h.HEADERS]
    settings = dict(struct.unpack(">HL", fs[0][3][i : i + 6]) for i in range(0, len(fs[0][3]), 6))
    assert settings == {
        h.S_HEADER_TABLE_SIZE: 0,
        h.S_ENABLE_PUSH: 0,
        h.S_INITIAL_WINDOW_SIZE: h.RECV_WINDOW,
    }
    kind, flags, sid, block = fs[2]
    assert flags == h.END_HEADERS and sid == 1
    # indexed :method POST and :scheme http, then literals (not Huffman coded)
    assert block[:2] == b"\x83\x86"
    assert b"/p4.v1.P4Runtime/StreamChannel" in block and b"application/grpc" in block
    assert b"\x02te\x08trailers" in block


def test_request_headers_decode_back_also_with_long_values():
    # a 200-byte path needs HPACK's integer continuation for its length (RFC 7541 5.1)
    path = "/" + "p" * 199
    block = h.request_headers(hpack.Encoder(), "10.0.0.1:9559", path)
    assert hpack.Decoder().decode(block) == [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "10.0.0.1:9559"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        ("user-agent", "sdnperf-p4rt"),
    ]


def test_messages_split_and_merged_across_frames_and_reads():
    s, got, closed = new()
    a, b, c = b"A" * 10, b"B" * 300, b""
    wire = grpc_msg(a) + grpc_msg(b) + grpc_msg(c)
    # one DATA frame with the first message and half of the second, a padded frame with
    # the rest; the socket delivers it in 7-byte reads
    f1 = frame(h.DATA, 0, 1, wire[:100])
    rest = wire[100:]
    f2 = frame(h.DATA, h.PADDED, 1, bytes([3]) + rest + b"\x00\x00\x00")
    data = f1 + f2
    for i in range(0, len(data), 7):
        s.feed(data[i : i + 7])
    assert got == [a, b, c] and not closed


def test_send_respects_flow_control_windows():
    s, _, _ = new()
    s.start()
    for _ in range(1000):
        s.send(b"x" * 95)  # 100 bytes framed each
    out = frames(s.output())
    assert sum(len(p) for k, _, _, p in out if k == h.DATA) == 65535
    assert max(len(p) for k, _, _, p in out) <= 16384
    assert s.blocked == 100_000 - 65535
    # the server's SETTINGS: bigger frames, acked; stream window +10000 by a bigger
    # initial window; then connection-level credit
    s.feed(
        frame(
            h.SETTINGS,
            0,
            0,
            struct.pack(">HLHL", h.S_MAX_FRAME_SIZE, 65536, h.S_INITIAL_WINDOW_SIZE, 75535),
        )
    )
    s.feed(frame(h.WINDOW_UPDATE, 0, 0, struct.pack(">L", 1 << 20)))
    out = frames(s.output())
    assert out[0][:2] == (h.SETTINGS, h.ACK)
    assert sum(len(p) for k, _, _, p in out if k == h.DATA) == 10000
    s.feed(frame(h.WINDOW_UPDATE, 0, 1, struct.pack(">L", 1 << 20)))
    out = frames(s.output())
    assert sum(len(p) for k, _, _, p in out if k == h.DATA) == 100_000 - 75535
    assert s.blocked == 0


def test_ping_acked_and_receive_window_replenished():
    s, got, _ = new()
    s.feed(frame(h.PING, 0, 0, b"12345678"))
    assert frames(s.output()) == [(h.PING, h.ACK, 0, b"12345678")]
    big = grpc_msg(b"y" * 16000)
    n = 0
    while n < h.RECV_WINDOW // 4:
        s.feed(frame(h.DATA, 0, 1, big))
        n += len(big)
    updates = [f for f in frames(s.output()) if f[0] == h.WINDOW_UPDATE]
    assert {f[2] for f in updates} == {0, 1}
    assert all(struct.unpack(">L", f[3])[0] == n for f in updates)


@pytest.mark.parametrize(
    "wire, reason",
    [
        (frame(h.RST_STREAM, 0, 1, struct.pack(">L", 8)), "reset the stream (CANCEL)"),
        (
            frame(h.GOAWAY, 0, 0, struct.pack(">LL", 0, 11) + b"slow down"),
            "GOAWAY ENHANCE_YOUR_CALM: slow down",
        ),
        (frame(h.HEADERS, h.END_STREAM | h.END_HEADERS, 1, b"\x88"), "the server ended the stream"),
        (frame(h.DATA, h.END_STREAM, 1, b""), "the server ended the stream"),
        # trailers-only answer, the block split over HEADERS + CONTINUATION
        (
            frame(h.HEADERS, h.END_STREAM, 1, TRAILERS[:7])
            + frame(h.CONTINUATION, h.END_HEADERS, 1, TRAILERS[7:]),
            "the server ended the stream: NOT_FOUND (5): unknown device id 7",
        ),
        (
            frame(h.HEADERS, h.END_HEADERS, 1, hpack.Encoder().encode([(":status", "503")])),
            "HTTP status 503",
        ),
    ],
)
def test_stream_end_is_reported_once(wire, reason):
    s, _, closed = new()
    s.feed(wire)
    s.feed(frame(h.RST_STREAM, 0, 1, struct.pack(">L", 2)))
    assert len(closed) == 1 and reason in closed[0]
    s.send(b"late")
    assert not any(k == h.DATA for k, *_ in frames(s.output()))


def test_graceful_goaway_keeps_the_stream():
    s, got, closed = new()
    s.feed(frame(h.GOAWAY, 0, 0, struct.pack(">LL", 1, 0)) + frame(h.DATA, 0, 1, grpc_msg(b"m")))
    assert got == [b"m"] and not closed


def test_compressed_message_is_an_error():
    s, _, _ = new()
    with pytest.raises(h.H2Error, match="compressed"):
        s.feed(frame(h.DATA, 0, 1, b"\x01" + struct.pack(">L", 1) + b"z"))
