"""One gRPC bidirectional-streaming call on our own HTTP/2 framing (RFC 9113), for the
P4Runtime StreamChannel (packet-in / packet-out / arbitration).

Why not grpcio for this one call: grpc-python spends tens of µs of Python per streamed
message (a completion-queue event and a thread hand-off or a poller round trip for every
read and every write), which capped the controller near 15-20k packet-ins/s. Here bytes
come off the socket in large chunks, every complete message in a chunk is handled, and
all the answers leave in one socket write: a burst of packet-ins costs one recv and one
send. Unary RPCs (Write, SetForwardingPipelineConfig) stay on grpcio.

Sans-I/O core, `GrpcStream`: `start()` gives the connection preface and the request
headers, `feed(data)` takes bytes read from the socket and calls `on_message(bytes)` for
every complete gRPC message, `send(bytes)` queues one message and `output()` returns the
bytes to write now (DATA frames within the server's flow-control windows, plus SETTINGS /
PING acks and WINDOW_UPDATEs). `StreamProtocol` runs it on an asyncio transport.

Scope, deliberately small: one stream (id 1), cleartext, no message compression. HPACK is
the `hpack` package's: its encoder writes our request headers, its decoder reads the
server's few header blocks (response headers, trailers), so a stream the server ends is
reported with its grpc-status and grpc-message.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import urllib.parse

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
(
    DATA,
    HEADERS,
    PRIORITY,
    RST_STREAM,
    SETTINGS,
    PUSH_PROMISE,
    PING,
    GOAWAY,
    WINDOW_UPDATE,
    CONTINUATION,
) = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_INITIAL_WINDOW_SIZE, S_MAX_FRAME_SIZE = 1, 2, 4, 5
STREAM_ID = 1
DEFAULT_WINDOW = 65535
# What we let the switch send before we acknowledge. Small on purpose: when packet-ins come
# faster than we answer, the switch must feel it (HTTP/2 flow control) instead of piling
# seconds of stale packet-ins into our buffers. Measured with ctlbench (rate mode, 1
# device, 500k/s offered): a 1 GB window answered 54k/s at 460 ms median RTT and timed out
# 1.6 M packet-ins; 1 MB answers 395k/s at 35 ms with none lost.
RECV_WINDOW = 1 << 20
ERROR_NAMES = {
    0: "NO_ERROR",
    1: "PROTOCOL_ERROR",
    2: "INTERNAL_ERROR",
    3: "FLOW_CONTROL_ERROR",
    5: "STREAM_CLOSED",
    6: "FRAME_SIZE_ERROR",
    7: "REFUSED_STREAM",
    8: "CANCEL",
    11: "ENHANCE_YOUR_CALM",
}

GRPC_CODES = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}

_HEAD = struct.Struct(">BHBBL")  # 24-bit length as 8 + 16 bits, type, flags, stream id
_U32 = struct.Struct(">L")


class H2Error(RuntimeError):
    pass


def frame(kind: int, flags: int, stream: int, payload: bytes | bytearray = b"") -> bytes:
    n = len(payload)
    return _HEAD.pack(n >> 16, n & 0xFFFF, kind, flags, stream) + payload


def request_headers(encoder: hpack.Encoder, authority: str, path: str) -> bytes:
    """HPACK block of a gRPC request (:method and :scheme first, as HTTP/2 requires);
    not Huffman coded, so the path shows in a packet capture."""
    return encoder.encode(
        [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", authority),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("user-agent", "sdnperf-p4rt"),
        ],
        huffman=False,
    )


class GrpcStream:
    """Client side of one gRPC streaming call on an HTTP/2 connection (sans I/O)."""

    def __init__(self, authority: str, path: str, on_message, on_closed=None):
        self.authority, self.path = authority, path
        self.on_message = on_message  # (bytes) -> None, one gRPC message
        self.on_closed = on_closed  # (reason: str) -> None, once
        self.closed: str | None = None
        self._in = bytearray()  # socket bytes not yet parsed into frames
        self._msg = bytearray()  # DATA bytes not yet parsed into messages
        self._out: list[bytes] = []  # control frames to send now
        self._pending = bytearray()  # gRPC-framed messages waiting for window
        self._conn_window = DEFAULT_WINDOW  # what the server still accepts
        self._stream_window = DEFAULT_WINDOW
        self._peer_initial_window = DEFAULT_WINDOW
        self._max_frame = 16384
        self._unacked = 0  # received DATA bytes not yet window-updated
        self._hpack = hpack.Decoder()
        self._encoder = hpack.Encoder()  # its table mirrors the server's decoder
        self._block = b""  # HEADERS + CONTINUATION fragments so far
        self._block_ends_stream = False
        self.headers: dict[str, str] = {}  # the response's headers and trailers

    # -- sending ---------------------------------------------------------------------------
    def start(self) -> bytes:
        settings = b"".join(
            struct.pack(">HL", k, v)
            for k, v in (
                (S_HEADER_TABLE_SIZE, 0),
                (S_ENABLE_PUSH, 0),
                (S_INITIAL_WINDOW_SIZE, RECV_WINDOW),
            )
        )
        return (
            PREFACE
            + frame(SETTINGS, 0, 0, settings)
            + frame(WINDOW_UPDATE, 0, 0, _U32.pack(RECV_WINDOW - DEFAULT_WINDOW))
            + frame(
                HEADERS,
                END_HEADERS,
                STREAM_ID,
                request_headers(self._encoder, self.authority, self.path),
            )
        )

    def send(self, message: bytes) -> None:
        """Queue one message (serialized protobuf); sent by the next output()."""
        self._pending += b"\x00" + _U32.pack(len(message)) + message

    def output(self) -> bytes:
        """Bytes to write now: control frames, then as much queued data as the windows allow."""
        out = self._out
        pending = self._pending
        if pending and self.closed is None:
            allowed = min(len(pending), self._conn_window, self._stream_window)
            if allowed > 0:
                step = self._max_frame
                for off in range(0, allowed, step):
                    out.append(frame(DATA, 0, STREAM_ID, pending[off : min(off + step, allowed)]))
                del pending[:allowed]
                self._conn_window -= allowed
                self._stream_window -= allowed
        if not out:
            return b""
        data = b"".join(out)
        out.clear()
        return data

    @property
    def blocked(self) -> int:
        """Queued bytes waiting for the server's flow-control window."""
        return len(self._pending)

    # -- receiving -------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        buf = self._in
        buf += data
        pos, end = 0, len(buf)
        unpack = _HEAD.unpack_from
        try:
            while end - pos >= 9:
                hi, lo, kind, flags, sid = unpack(buf, pos)
                length = (hi << 16) | lo
                if end - pos < 9 + length:
                    break
                start = pos + 9
                pos = start + length
                if kind == DATA:
                    self._data(buf, start, length, flags, sid)
                else:
                    self._control(kind, flags, sid & 0x7FFFFFFF, bytes(buf[start:pos]))
        finally:
            del buf[:pos]

    def _data(self, buf, start: int, length: int, flags: int, sid: int) -> None:
        self._unacked += length
        if self._unacked >= RECV_WINDOW // 4:
            inc = _U32.pack(self._unacked)
            self._out.append(
                frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, STREAM_ID, inc)
            )
            self._unacked = 0
        if sid != STREAM_ID:
            return
        end = start + length
        if flags & PADDED:
            end -= buf[start]
            start += 1
        msg = self._msg
        msg += buf[start:end]
        mpos, mend = 0, len(msg)
        try:
            while mend - mpos >= 5:
                n = _U32.unpack_from(msg, mpos + 1)[0]
                if mend - mpos < 5 + n:
                    break
                if msg[mpos]:
                    raise H2Error("the server sent a compressed gRPC message (none was offered)")
                self.on_message(bytes(msg[mpos + 5 : mpos + 5 + n]))
                mpos += 5 + n
        finally:
            del msg[:mpos]
        if flags & END_STREAM:
            self._close(self.ending())

    def _control(self, kind: int, flags: int, sid: int, payload: bytes) -> None:
        if kind in (HEADERS, CONTINUATION):
            if kind == HEADERS:
                if flags & PADDED:
                    payload = payload[1 : len(payload) - payload[0]]
                if flags & PRIORITY_FLAG:
                    payload = payload[5:]
                self._block, self._block_ends_stream = b"", bool(flags & END_STREAM)
            self._block += payload
            if flags & END_HEADERS:
                self._header_block(sid)
        elif kind == SETTINGS:
            if flags & ACK:
                return
            for off in range(0, len(payload) - 5, 6):
                key, value = struct.unpack_from(">HL", payload, off)
                if key == S_INITIAL_WINDOW_SIZE:
                    self._stream_window += value - self._peer_initial_window
                    self._peer_initial_window = value
                elif key == S_MAX_FRAME_SIZE:
                    self._max_frame = value
            self._out.append(frame(SETTINGS, ACK, 0))
        elif kind == WINDOW_UPDATE:
            inc = _U32.unpack_from(payload)[0] & 0x7FFFFFFF
            if sid == 0:
                self._conn_window += inc
            elif sid == STREAM_ID:
                self._stream_window += inc
        elif kind == PING:
            if not flags & ACK:
                self._out.append(frame(PING, ACK, 0, payload))
        elif kind == RST_STREAM and sid == STREAM_ID:
            code = _U32.unpack_from(payload)[0]
            self._close(f"the server reset the stream ({ERROR_NAMES.get(code, code)})")
        elif kind == GOAWAY:
            last, code = struct.unpack_from(">LL", payload)
            debug = payload[8:].decode(errors="replace")
            if (last & 0x7FFFFFFF) < STREAM_ID or code != 0:
                self._close(
                    f"the server closed the connection (GOAWAY {ERROR_NAMES.get(code, code)}"
                    + (f": {debug}" if debug else "")
                    + ")"
                )
        # PRIORITY, PUSH_PROMISE (disabled by our settings), unknown types: ignored (RFC 9113 5.5)

    def _header_block(self, sid: int) -> None:
        """Decoded even when not ours: HPACK's table is shared by the connection."""
        try:
            fields = self._hpack.decode(self._block)
        except Exception as exc:  # hpack.HPACKError and friends
            self._close(f"undecodable header block from the server: {exc}")
            return
        if sid != STREAM_ID:
            return
        self.headers.update(fields)  # type: ignore[arg-type]  # hpack says bytes; raw=False gives str
        status = self.headers.get(":status", "200")
        if status != "200":
            self._close(f"the server answered HTTP status {status}")
        elif self._block_ends_stream:
            self._close(self.ending())

    def ending(self) -> str:
        """The server's grpc-status and grpc-message, in words."""
        code = self.headers.get("grpc-status")
        if code is None:
            return "the server ended the stream"
        name = GRPC_CODES.get(int(code), "code") if code.isdigit() else "code"
        message = urllib.parse.unquote(self.headers.get("grpc-message", ""))
        return f"the server ended the stream: {name} ({code})" + (f": {message}" if message else "")

    def _close(self, reason: str) -> None:
        if self.closed is None:
            self.closed = reason
            if self.on_closed is not None:
                self.on_closed(reason)

    def end(self) -> bytes:
        """Half-close our side (an empty DATA frame with END_STREAM)."""
        return self.output() + frame(DATA, END_STREAM, STREAM_ID)


class StreamProtocol(asyncio.Protocol):
    """GrpcStream on an asyncio transport. While `feed` runs, messages sent by the handlers
    only queue; everything they produced leaves in one write after the chunk is handled."""

    def __init__(self, stream: GrpcStream, on_lost=None):
        self.stream, self.on_lost = stream, on_lost
        self.transport: asyncio.Transport | None = None
        self.in_feed = False
        self._flush_scheduled = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:  # answers are single small segments: no Nagle delay
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.write(self.stream.start())

    def data_received(self, data: bytes) -> None:
        self.in_feed = True
        try:
            self.stream.feed(data)
        finally:
            self.in_feed = False
            self.flush()

    def send(self, message: bytes) -> None:
        self.stream.send(message)
        if not self.in_feed and not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._flush_scheduled = False
        if self.transport is not None and not self.transport.is_closing():
            data = self.stream.output()
            if data:
                self.transport.write(data)

    def connection_lost(self, exc) -> None:
        self.stream._close(f"connection lost: {exc}" if exc else "connection closed")
        if self.on_lost is not None:
            self.on_lost(exc)
