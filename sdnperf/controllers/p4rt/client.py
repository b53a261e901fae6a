"""One P4Runtime connection to one switch: arbitration as primary, pipeline, batched
writes, reads, packet-in / packet-out on the stream. Three ways to carry the stream (the
controller's "transport"), unary RPCs always on grpcio:

- `StreamSwitchConnection` ("h2", default): our own HTTP/2 framing (h2stream.py) in the
  event loop's thread; a socket read's packet-ins are answered in one socket write.
- `ThreadedSwitchConnection` ("threads"): grpcio's synchronous API and a reader thread.
- `SwitchConnection` ("aio"): grpc.aio, also the base class (pipeline, writes).

Writes go through a per-switch batcher: updates submitted while a Write RPC is in flight
are sent together in the next one (up to `MAX_BATCH`), so a burst of packet-ins costs a
few RPCs instead of one round trip each. `write(..., wait=True)` returns when the switch
has answered for those updates (and raises WriteError if any of them failed).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any, Awaitable, Callable

import grpc
from finsy.proto import p4r, p4r_grpc, rpc_status

from sdnperf.controllers.p4rt import h2stream, stages

log = logging.getLogger("sdnperf.p4rt")
# The lab starts this controller while the switches are still starting: a refused first
# connection is retried after 0.1 s, not gRPC's default second (and at most 1 s apart).
RECONNECT_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
)
MAX_BATCH = 1000


class P4RuntimeError(RuntimeError):
    pass


class WriteError(P4RuntimeError):
    def __init__(self, message: str, errors: list[tuple[int, str]] | None = None):
        super().__init__(message)
        self.errors = errors or []  # (index in batch, "CODE: message")


def _update(kind: str, entity) -> "p4r.Update":
    types = {"INSERT": p4r.Update.INSERT, "MODIFY": p4r.Update.MODIFY, "DELETE": p4r.Update.DELETE}
    if not isinstance(entity, p4r.Entity):
        entity = p4r.Entity(table_entry=entity)
    return p4r.Update(type=types[kind], entity=entity)


def update(kind: str, entity) -> "p4r.Update":
    """An Update (INSERT/MODIFY/DELETE) of a TableEntry or Entity."""
    return _update(kind, entity)


def rpc_error_details(exc: grpc.RpcError) -> list[tuple[int, str]]:
    """The per-update errors of a failed Write (google.rpc.Status details of p4.v1.Error)."""
    out: list[tuple[int, str]] = []
    try:
        md = exc.trailing_metadata() or ()
    except Exception:
        return out
    for key, value in md:
        if key != "grpc-status-details-bin":
            continue
        status = rpc_status.Status()
        status.ParseFromString(value)
        for i, any_msg in enumerate(status.details):
            err = p4r.Error()
            if any_msg.Unpack(err) and err.canonical_code != 0:
                out.append((i, f"{grpc.StatusCode(_code(err.canonical_code)).name}: {err.message}"))
    return out


def _code(number: int):
    for c in grpc.StatusCode:
        if c.value[0] == number:
            return c.value
    return grpc.StatusCode.UNKNOWN.value


class SwitchConnection:
    def __init__(
        self,
        name: str,
        address: str,
        device_id: int,
        election_id: int = 1,
        on_packet_in: Callable[["SwitchConnection", object], Awaitable[None] | None] | None = None,
    ):
        self.name, self.address, self.device_id = name, address, int(device_id)
        self.election_id = p4r.Uint128(high=0, low=int(election_id))
        self.on_packet_in = on_packet_in
        self.channel: grpc.aio.Channel | None = None
        # The stub and the stream differ by transport (grpc.aio's, grpcio's, h2stream's
        # protocol); each subclass sets and uses its own kind.
        self.stub: Any = None
        self.stream: Any = None
        self.primary = asyncio.Event()
        self.closed = False
        self._reader: asyncio.Task | None = None
        self._out: collections.deque = collections.deque()
        self._sender: asyncio.Task | None = None
        self._pending: list[tuple["p4r.Update", _Share | _LogShare]] = []
        self._writer: asyncio.Task | None = None
        self.writes = 0  # updates the switch accepted
        self.write_errors = 0
        self.packet_ins = 0

    # -- connection -----------------------------------------------------------------------
    async def _handle(self, msg) -> None:
        """One StreamMessageResponse: packet-in, arbitration or stream error."""
        which = msg.WhichOneof("update")
        if which == "packet":
            self.packet_ins += 1
            if self.on_packet_in is not None:
                result = self.on_packet_in(self, msg.packet)
                if result is not None:
                    await result
        elif which == "arbitration":
            if msg.arbitration.status.code == 0:
                self.primary.set()
            else:
                self.primary.clear()
                log.warning("%s: not primary: %s", self.name, msg.arbitration.status.message)
        elif which == "error":
            log.warning(
                "%s: stream error %s: %s", self.name, msg.error.canonical_code, msg.error.message
            )
        # digests, idle timeouts: not used by our apps

    # A synchronous packet-in handler run where the stream is read (no hop to the event
    # loop): fast_packet_in(conn, packet) -> True when it handled the packet. Set by the
    # controller for apps whose packet-in handling never waits (l2-learning).
    fast_packet_in: Callable[[SwitchConnection, Any], bool] | None = None
    # The controller's packet-out collector for `fast_packet_in` handlers (controller.py).
    sync_out: Any = None
    # Stream messages read but not yet handled (ThreadedSwitchConnection,
    # StreamSwitchConnection make it at connect()).
    _inbox: collections.deque

    def _handled_fast(self, msg) -> bool:
        """True when `fast_packet_in` took care of `msg` (or failed on it: logged, dropped)."""
        fast = self.fast_packet_in
        if fast is None or not msg.HasField("packet"):
            return False
        self.packet_ins += 1
        try:
            if fast(self, msg.packet):
                return True
        except Exception:
            log.exception("%s: packet-in handling failed", self.name)
            return True
        self.packet_ins -= 1  # counted again by _handle
        return False

    async def _drain(self) -> None:
        """Handle the messages the stream reader queued in `_inbox`, in order."""
        inbox = self._inbox
        while inbox:
            msg = inbox.popleft()
            try:
                await self._handle(msg)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: packet-in handling failed", self.name)

    async def _open_channel(self, timeout: float) -> None:
        """The grpc.aio channel and stub for unary RPCs, once the server answers."""
        options = [
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.max_receive_message_length", 64 << 20),
            *RECONNECT_OPTIONS,
        ]
        self.channel = grpc.aio.insecure_channel(self.address, options=options)
        try:
            await asyncio.wait_for(self.channel.channel_ready(), timeout)
        except asyncio.TimeoutError:
            raise P4RuntimeError(
                f"{self.name}: no P4Runtime server at {self.address} after {timeout:.0f}s"
            ) from None
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)

    async def connect(self, timeout: float = 20.0) -> None:
        """Open the channel and the stream, and become primary (or raise P4RuntimeError)."""
        await self._open_channel(timeout)
        self.stream = self.stub.StreamChannel()
        await self.stream.write(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=self.device_id, election_id=self.election_id
                )
            )
        )
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        try:
            await asyncio.wait_for(self.primary.wait(), timeout)
        except asyncio.TimeoutError:
            raise P4RuntimeError(
                f"{self.name}: not primary for device {self.device_id} at "
                f"{self.address} after {timeout:.0f}s"
            ) from None

    async def _read_loop(self) -> None:
        try:
            while True:
                msg = await self.stream.read()
                if msg is grpc.aio.EOF:
                    log.warning("%s: stream closed by the switch", self.name)
                    return
                await self._handle(msg)
        except asyncio.CancelledError:
            raise
        except grpc.RpcError as exc:
            if not self.closed:
                log.error("%s: stream failed: %s", self.name, exc)
        except Exception:
            log.exception("%s: packet-in handling failed", self.name)

    async def close(self) -> None:
        self.closed = True
        for task in (self._reader, self._writer, self._sender):
            if task is not None and not task.done():
                task.cancel()
        if self.stream is not None:
            self.stream.cancel()
        if self.channel is not None:
            await self.channel.close(grace=None)

    # -- pipeline -------------------------------------------------------------------------
    async def set_pipeline(self, p4info, device_config: bytes, cookie: int = 0) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            election_id=self.election_id,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4r.ForwardingPipelineConfig(
                p4info=p4info,
                p4_device_config=device_config,
                cookie=p4r.ForwardingPipelineConfig.Cookie(cookie=cookie),
            ),
        )
        try:
            await self.stub.SetForwardingPipelineConfig(req, timeout=60)
        except grpc.RpcError as exc:
            raise P4RuntimeError(
                f"{self.name}: SetForwardingPipelineConfig failed: "
                f"{exc.code().name}: {exc.details()}"
            ) from None

    # -- writes ---------------------------------------------------------------------------
    async def write_now(self, updates: list) -> None:
        """One Write RPC with these updates; WriteError lists the failed ones."""
        req = p4r.WriteRequest(
            device_id=self.device_id, election_id=self.election_id, updates=updates
        )
        try:
            await self.stub.Write(req, timeout=30)
        except grpc.RpcError as exc:
            errors = rpc_error_details(exc)
            self.write_errors += len(errors) or len(updates)
            self.writes += len(updates) - (len(errors) or len(updates))
            raise WriteError(
                f"{self.name}: Write of {len(updates)} update(s) failed: "
                f"{exc.code().name}: {exc.details()}"
                + "".join(f"\n  update {i}: {e}" for i, e in errors[:10]),
                errors,
            ) from None
        self.writes += len(updates)

    def submit(self, updates: list) -> asyncio.Future:
        """Queue updates for the batcher; the future gets None, or a WriteError for them."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        n = len(updates)
        if n == 0:
            fut.set_result(None)
            return fut
        share = _Share(fut, n)
        for u in updates:
            self._pending.append((u, share))
        if self._writer is None or self._writer.done():
            self._writer = loop.create_task(self._write_loop())
        return fut

    def submit_nowait(self, updates: list) -> None:
        """Queue updates for the batcher without a future (per-packet writes): failures are
        logged, at most one line per second with the count."""
        share = self.__dict__.get("_log_share")
        if share is None:
            share = self._log_share = _LogShare()
        for u in updates:
            self._pending.append((u, share))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    async def write(self, updates: list, wait: bool = True) -> None:
        fut = self.submit(updates)
        if wait:
            await fut
        else:
            fut.add_done_callback(_log_failure)

    async def _write_loop(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            try:
                await self.write_now([u for u, _ in batch])
                failed = {}
            except WriteError as exc:
                failed = (
                    dict(exc.errors) if exc.errors else {i: str(exc) for i in range(len(batch))}
                )
            except Exception as exc:  # connection gone
                failed = {i: f"{type(exc).__name__}: {exc}" for i in range(len(batch))}
            for i, (_u, share) in enumerate(batch):
                share.done(failed.get(i), self.name)

    # -- reads ----------------------------------------------------------------------------
    async def read(self, entities: list) -> list["p4r.Entity"]:
        """One Read RPC: the switch's entities that these select (P4Runtime's wildcards: an
        id of 0 or an unset index selects all); P4RuntimeError when the switch refuses."""
        req = _read_request(self.device_id, entities)
        try:
            return [e async for resp in self.stub.Read(req, timeout=30) for e in resp.entities]
        except grpc.RpcError as exc:
            raise _read_error(self.name, exc) from None

    # -- packets --------------------------------------------------------------------------
    def send_packet_out(self, packet_out) -> None:
        """Queue a packet-out; a writer task sends queued ones in order while the reader
        goes on reading (a stream has one write and one read in flight at a time)."""
        self._out.append(p4r.StreamMessageRequest(packet=packet_out))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_loop())

    async def packet_out(self, packet_out) -> None:
        self.send_packet_out(packet_out)

    async def _send_loop(self) -> None:
        out = self._out
        try:
            while out:
                await self.stream.write(out.popleft())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self.closed:
                log.error("%s: packet-out failed: %s", self.name, exc)
            out.clear()


def _read_request(device_id: int, entities: list) -> "p4r.ReadRequest":
    return p4r.ReadRequest(
        device_id=device_id,
        entities=[e if isinstance(e, p4r.Entity) else p4r.Entity(table_entry=e) for e in entities],
    )


def _read_error(name: str, exc: grpc.RpcError) -> P4RuntimeError:
    return P4RuntimeError(f"{name}: Read failed: {exc.code().name}: {exc.details()}")


class _Share:
    """One submit() call's updates, possibly spread over several batches."""

    def __init__(self, fut: asyncio.Future, n: int):
        self.fut, self.left = fut, n
        self.errors: list[str] = []

    def done(self, error: str | None, name: str) -> None:
        if error:
            self.errors.append(error)
        self.left -= 1
        if self.left == 0 and not self.fut.done():
            if self.errors:
                self.fut.set_exception(
                    WriteError(
                        f"{name}: {len(self.errors)} update(s) failed: "
                        + "; ".join(self.errors[:5])
                    )
                )
            else:
                self.fut.set_result(None)


class _LogShare:
    """The _Share of submit_nowait's updates: nobody waits, failures are logged."""

    def __init__(self):
        self.failed, self.last = 0, 0.0

    def done(self, error: str | None, name: str) -> None:
        if error:
            import time

            self.failed += 1
            now = time.monotonic()
            if now - self.last >= 1.0:
                self.last = now
                log.warning(
                    "%s: %d queued write(s) failed so far; latest: %s", name, self.failed, error
                )


def _log_failure(fut: asyncio.Future) -> None:
    if not fut.cancelled() and fut.exception() is not None:
        log.warning("%s", fut.exception())


class ThreadedSwitchConnection(SwitchConnection):
    """The same connection on gRPC's synchronous API: the stream is read by a thread that
    blocks in gRPC's C core (no GIL held while waiting) and hands packet-ins to the event
    loop in batches; packet-outs go into a queue the stream's request iterator drains.
    Cheaper per message than grpc.aio, whose every read and write is a round trip through
    its poller."""

    async def connect(self, timeout: float = 20.0) -> None:
        import queue
        import threading

        self.loop = asyncio.get_running_loop()
        options = [
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.max_receive_message_length", 64 << 20),
            *RECONNECT_OPTIONS,
        ]
        self.channel = grpc.insecure_channel(self.address, options=options)
        ready = grpc.channel_ready_future(self.channel)
        try:
            await asyncio.wait_for(asyncio.wrap_future(_to_concurrent(ready)), timeout)
        except asyncio.TimeoutError:
            ready.cancel()
            raise P4RuntimeError(
                f"{self.name}: no P4Runtime server at {self.address} after {timeout:.0f}s"
            ) from None
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._inbox: collections.deque = collections.deque()
        self._requests.put(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=self.device_id, election_id=self.election_id
                )
            )
        )
        self.stream = self.stub.StreamChannel(self._request_iter())
        self._thread = threading.Thread(
            target=self._read_thread, name=f"p4rt-{self.name}", daemon=True
        )
        self._thread.start()
        try:
            await asyncio.wait_for(self.primary.wait(), timeout)
        except asyncio.TimeoutError:
            raise P4RuntimeError(
                f"{self.name}: not primary for device {self.device_id} at "
                f"{self.address} after {timeout:.0f}s"
            ) from None

    def _request_iter(self):
        while True:
            msg = self._requests.get()
            if msg is None:
                return
            yield msg

    def _read_thread(self) -> None:
        inbox, loop = self._inbox, self.loop
        try:
            for msg in self.stream:
                if self._handled_fast(msg):
                    continue
                was_empty = not inbox
                inbox.append(msg)
                if was_empty:
                    loop.call_soon_threadsafe(self._wake)
        except grpc.RpcError as exc:
            if not self.closed:
                log.error("%s: stream failed: %s", self.name, exc)
        except RuntimeError:
            pass  # event loop closed during shutdown

    def _wake(self) -> None:
        if self._reader is None or self._reader.done():
            self._reader = self.loop.create_task(self._drain())

    def send_packet_out(self, packet_out) -> None:
        self._requests.put(p4r.StreamMessageRequest(packet=packet_out))

    def send_request(self, request) -> None:
        """A ready StreamMessageRequest (any thread)."""
        self._requests.put(request)

    def submit_threadsafe(self, updates: list) -> None:
        """Queue writes from another thread (not awaited; failures are logged)."""
        self.loop.call_soon_threadsafe(self.submit_nowait, updates)

    async def _unary(self, method, request, timeout: float):
        fut = method.future(request, timeout=timeout)
        return await asyncio.wrap_future(_to_concurrent(fut))

    async def set_pipeline(self, p4info, device_config: bytes, cookie: int = 0) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            election_id=self.election_id,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4r.ForwardingPipelineConfig(
                p4info=p4info,
                p4_device_config=device_config,
                cookie=p4r.ForwardingPipelineConfig.Cookie(cookie=cookie),
            ),
        )
        try:
            await self._unary(self.stub.SetForwardingPipelineConfig, req, 60)
        except grpc.RpcError as exc:
            raise P4RuntimeError(
                f"{self.name}: SetForwardingPipelineConfig failed: "
                f"{exc.code().name}: {exc.details()}"
            ) from None

    async def write_now(self, updates: list) -> None:
        req = p4r.WriteRequest(
            device_id=self.device_id, election_id=self.election_id, updates=updates
        )
        try:
            await self._unary(self.stub.Write, req, 30)
        except grpc.RpcError as exc:
            errors = rpc_error_details(exc)
            self.write_errors += len(errors) or len(updates)
            self.writes += len(updates) - (len(errors) or len(updates))
            raise WriteError(
                f"{self.name}: Write of {len(updates)} update(s) failed: "
                f"{exc.code().name}: {exc.details()}"
                + "".join(f"\n  update {i}: {e}" for i, e in errors[:10]),
                errors,
            ) from None
        self.writes += len(updates)

    async def read(self, entities: list) -> list["p4r.Entity"]:
        req = _read_request(self.device_id, entities)

        def read_all() -> list:  # the synchronous stub's stream blocks: in a thread
            return [e for resp in self.stub.Read(req, timeout=30) for e in resp.entities]

        try:
            return await asyncio.to_thread(read_all)
        except grpc.RpcError as exc:
            raise _read_error(self.name, exc) from None

    async def close(self) -> None:
        self.closed = True
        for task in (self._reader, self._writer):
            if task is not None and not task.done():
                task.cancel()
        if getattr(self, "_requests", None) is not None:
            self._requests.put(None)
        if self.stream is not None:
            self.stream.cancel()
        if self.channel is not None:
            self.channel.close()


def _to_concurrent(grpc_future):
    """A concurrent.futures.Future mirroring a gRPC future (for asyncio.wrap_future)."""
    import concurrent.futures

    out: concurrent.futures.Future = concurrent.futures.Future()

    def done(f):
        if f.cancelled():
            out.cancel()
            return
        exc = f.exception()
        if exc is not None:
            out.set_exception(exc)
        else:
            out.set_result(f.result())

    grpc_future.add_done_callback(done)
    return out


class StreamSwitchConnection(SwitchConnection):
    """The stream on our own HTTP/2 framing (h2stream.py) in the event loop's thread, unary
    RPCs on grpc.aio. Packet-ins are handled as they are parsed from a socket read; the
    packet-outs they cause leave together in one socket write. No thread hand-offs."""

    async def connect(self, timeout: float = 20.0) -> None:
        self.loop = loop = asyncio.get_running_loop()
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit():
            raise P4RuntimeError(
                f"{self.name}: transport h2 needs a HOST:PORT address, got "
                f'{self.address!r} ("transport": "threads" takes any gRPC target)'
            )
        await self._open_channel(timeout)
        self._inbox: collections.deque = collections.deque()
        self._ended = asyncio.Event()
        self._parse = p4r.StreamMessageResponse.FromString
        self._h2 = h2stream.GrpcStream(
            self.address, "/p4.v1.P4Runtime/StreamChannel", self._on_message, self._on_closed
        )
        try:
            _transport, self._proto = await asyncio.wait_for(
                loop.create_connection(
                    lambda: _TimedStreamProtocol(self._h2), host.strip("[]"), int(port)
                ),
                timeout,
            )
        except (OSError, asyncio.TimeoutError) as exc:
            raise P4RuntimeError(
                f"{self.name}: cannot open the stream to {self.address}: {exc}"
            ) from None
        self.stream = self._proto
        self.send_request(
            p4r.StreamMessageRequest(
                arbitration=p4r.MasterArbitrationUpdate(
                    device_id=self.device_id, election_id=self.election_id
                )
            )
        )
        waits = [loop.create_task(self.primary.wait()), loop.create_task(self._ended.wait())]
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for t in waits:
            t.cancel()
        if not self.primary.is_set():
            why = self._h2.closed or f"no arbitration answer after {timeout:.0f}s"
            raise P4RuntimeError(
                f"{self.name}: not primary for device {self.device_id} at {self.address}: {why}"
            )

    def _on_message(self, data: bytes) -> None:
        clock = stages.CLOCK
        t0 = stages.now()
        try:
            msg = self._parse(data)
        except Exception as exc:  # DecodeError: skip the message, keep the stream
            log.warning("%s: undecodable stream message (%d bytes): %s", self.name, len(data), exc)
            return
        t1 = stages.now()
        nested = clock.ns[stages.ENCODE] + clock.ns[stages.SEND]
        handled = self._handled_fast(msg)
        t2 = stages.now()
        if handled:  # a packet-in answered here: time its stages (stages.py)
            clock.packets += 1
            clock.ns[stages.DECODE] += t1 - t0
            clock.ns[stages.APP] += (t2 - t1) - (
                clock.ns[stages.ENCODE] + clock.ns[stages.SEND] - nested
            )
        clock.callback_ns += t2 - t0
        if handled:
            return
        self._inbox.append(msg)
        if self._reader is None or self._reader.done():
            self._reader = self.loop.create_task(self._drain())

    def _on_closed(self, reason: str) -> None:
        self.primary.clear()
        self._ended.set()
        if not self.closed:
            # a switch shutting down ends the stream with OK: worth a line, not an error
            level = logging.WARNING if reason.endswith("OK (0)") else logging.ERROR
            log.log(level, "%s: stream closed: %s", self.name, reason)

    # Packet-outs waiting for the switch's flow-control window beyond this are dropped
    # (counted, logged): a switch that reads the stream slower than packet-ins arrive must
    # not grow the controller's memory, nor the age of what it sends (1 MB ≈ 11k packet-outs
    # of 60-byte frames, a few hundred ms at the rates where that happens).
    MAX_BLOCKED = 1 << 20
    packet_outs_dropped = 0

    def send_request(self, request) -> None:
        """A StreamMessageRequest, sent with the current batch (event-loop thread only)."""
        if self._h2.blocked > self.MAX_BLOCKED and request.HasField("packet"):
            self._drop_packet_out()
            return
        self._proto.send(request.SerializeToString())

    def send_serialized(self, data: bytes) -> None:
        """A packet-out StreamMessageRequest already in wire form (controller._SyncOut)."""
        t0 = stages.now()
        if self._h2.blocked > self.MAX_BLOCKED:
            self._drop_packet_out()
            return
        self._proto.send(data)
        stages.CLOCK.ns[stages.SEND] += stages.now() - t0

    def _drop_packet_out(self) -> None:
        self.packet_outs_dropped += 1
        if self.packet_outs_dropped in (1, 10, 100, 1000) or self.packet_outs_dropped % 10000 == 0:
            log.warning(
                "%s: switch not reading the stream: %d packet-outs dropped",
                self.name,
                self.packet_outs_dropped,
            )

    def send_packet_out(self, packet_out) -> None:
        self.send_request(p4r.StreamMessageRequest(packet=packet_out))

    def submit_threadsafe(self, updates: list) -> None:
        """As ThreadedSwitchConnection's; here the caller is on the loop already."""
        self.submit_nowait(updates)

    async def close(self) -> None:
        self.closed = True
        for task in (self._reader, self._writer):
            if task is not None and not task.done():
                task.cancel()
        proto = getattr(self, "_proto", None)
        if proto is not None and proto.transport is not None:
            proto.transport.write(self._h2.end())
            proto.transport.close()
        if self.channel is not None:
            await self.channel.close(grace=None)


class _TimedStreamProtocol(h2stream.StreamProtocol):
    """The h2 stream's protocol, timing "receive" (framing, callbacks excluded) and the
    socket writes of "send" for stages.py."""

    def data_received(self, data: bytes) -> None:
        clock = stages.CLOCK
        t0, inside, flushed = stages.now(), clock.callback_ns, clock.flush_ns
        try:
            super().data_received(data)
        finally:
            clock.ns[stages.RECEIVE] += (
                (stages.now() - t0) - (clock.callback_ns - inside) - (clock.flush_ns - flushed)
            )

    def flush(self) -> None:
        t0 = stages.now()
        super().flush()
        dt = stages.now() - t0
        stages.CLOCK.ns[stages.SEND] += dt
        stages.CLOCK.flush_ns += dt
